"""The stall check behind a mesh run's ``timeout``: a participant that stops advancing while
the others wait for it.

A participant *advances* when its phase, job or count of ops dispatched changes. It *waits*
when its evaluation is blocked in a collective (it cannot go on without the others) or it
has finished. It is *silent* when its heartbeat stops (a process stopped by a signal, or
frozen). Every participant runs the same program, so a run that is merely slow keeps
advancing somewhere; a run is stalled when some participant has not advanced for
``timeout`` seconds and either is silent or is not waiting, while another one waits — it
is the one the others wait for. When every participant waits and none advances for
``timeout`` seconds, the run is deadlocked (no one is named: none is to blame more than
another); when every participant that has not finished is silent, they are all named. A participant that neither advances nor waits while no one waits for it is
computing (a long op) and is never stopped.

Times are the observer's own monotonic clock: no participant's clock is compared with
another's. ``StallWatch`` is pure (it is given the time), so its rule is tested without
processes.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from tfexec.mesh._progress import Beat, Phase, Position


@dataclass(frozen=True, slots=True)
class Stall:
    """A stalled run: the ranks that stopped advancing (empty for a deadlock), those of them
    that are silent too, the ranks that wait for them, and for how long (seconds, the
    least of the stalled ranks', or of every rank's for a deadlock) none of them advanced."""

    stalled: tuple[int, ...]
    silent: tuple[int, ...]
    waiting: tuple[int, ...]
    seconds: float


class StallWatch:
    """Watches every participant's position and heartbeat; ``observe`` says when the run stalls."""

    def __init__(self, world: int, timeout: float) -> None:
        self.world, self.timeout = world, timeout
        self._keys: list[tuple[int, int, int] | None] = [None] * world
        self._moved_at = [0.0] * world
        self._beats = [-2] * world
        self._beat_at = [0.0] * world

    def observe(self, now: float, positions: Sequence[Position], beats: Sequence[Beat],
                finished: Sequence[bool] = ()) -> Stall | None:
        """Record what was seen at time ``now`` (``finished[r]``: rank r's process ended well)
        and say whether the run is stalled."""
        for r in range(self.world):
            key = positions[r].advanced_key()
            if key != self._keys[r]:
                self._keys[r], self._moved_at[r] = key, now
            if beats[r].count != self._beats[r]:
                self._beats[r], self._beat_at[r] = beats[r].count, now
        done = [positions[r].phase == Phase.DONE or (r < len(finished) and finished[r]) for r in range(self.world)]
        idle = [now - self._moved_at[r] for r in range(self.world)]
        silent = [now - self._beat_at[r] >= self.timeout for r in range(self.world)]
        waits = [done[r] or beats[r].waiting for r in range(self.world)]
        stalled = [r for r in range(self.world) if not done[r] and idle[r] >= self.timeout and (silent[r] or not waits[r])]
        waiting = [r for r in range(self.world) if r not in stalled and waits[r]]
        if stalled and all(silent[r] or done[r] for r in range(self.world)):  # every one stopped: no one waits
            return Stall(tuple(stalled), tuple(stalled), (), min(idle[r] for r in stalled))
        if stalled and waiting:
            return Stall(tuple(stalled), tuple(r for r in stalled if silent[r]), tuple(waiting), min(idle[r] for r in stalled))
        if not stalled and not all(done) and all(waits) and all(done[r] or idle[r] >= self.timeout for r in range(self.world)):
            return Stall((), (), tuple(range(self.world)), min(idle[r] for r in range(self.world) if not done[r]))
        return None
