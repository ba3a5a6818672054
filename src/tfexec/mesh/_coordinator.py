"""How the participants of an external launcher (torchrun, or any that sets ``RANK``,
``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``) stay in step, through the rendezvous store.

No process supervises them, so each runs a monitor thread. Every monitor publishes its
participant's position (phase, job, op, a heartbeat count) to the store. A participant that
fails writes its error report there. Rank 0's monitor decides: on a report, a timeout, a
communication error its own evaluation met, or SIGTERM from the launcher, it sets ``stop``,
gives the others ``GRACE`` seconds to say how they ended (failed, stopped), counts those that
said nothing and whose heartbeat stopped as dead, and words the one ``EvalError`` (the same
words as tfexec's own launcher, ``_failures``). Rank 0 raises it; every other participant's
monitor ends its process (exit status 1) as soon as it sees ``stop`` — as tfexec's own
launcher stops its participants, and as torchrun would.

Store keys (under a prefix per call): ``pos/<r>`` (written by the evaluation at every op),
``beat/<r>`` (by the monitor, every ``POLL``), ``host/<r>``, ``ready/<r>``,
``fail/<r>`` (a JSON report), ``end/<r>`` (``failed`` or ``stopped``), ``failed`` (a count)
and ``stop``.
"""

import json
import os
import socket
import sys
import threading
import time
from typing import NoReturn

from torch._C._distributed_c10d import PrefixStore, Store

from tfexec.errors import EvalError
from tfexec.mesh._failures import FailureWords, Report, Stopped
from tfexec.mesh._progress import Phase, Position, Progress
from tfexec.mesh._results import STARTUP_TIMEOUT

POLL = 0.05
"""Seconds between two looks of a monitor at the store."""
GRACE = 2.0
"""Seconds the participants get, after ``stop``, to say how they ended."""
STALE = 1.0
"""Seconds without a heartbeat, after ``stop``, for a silent participant to count as dead."""
DELIVER = 5.0
"""Seconds rank 0's evaluation gets to raise a decided failure before its monitor prints it and exits."""
LOST = 10.0
"""Seconds a participant waiting to be stopped waits for rank 0's heartbeat before it gives up."""

class StoreProgress(Progress):
    """A participant's position, written to the store at every change (a store write is a
    few microseconds: the position a participant dies at is the one its op reached)."""

    def __init__(self, store: PrefixStore, rank: int) -> None:
        super().__init__()
        self.store, self.key = store, f"pos/{rank}"
        self._write()

    def _write(self) -> None:
        self.store.set(self.key, f"{int(self.phase)} {self.job} {self.node} {self.dispatches}")


def _position(raw: bytes) -> Position:
    phase, job, node, dispatches = (int(x) for x in raw.decode().split())
    return Position(Phase(phase), job, node, dispatches)


class Coordinator:
    """One participant's side of the store protocol, and its monitor thread."""

    def __init__(self, store: Store, prefix: str, rank: int, world: int, timeout: float) -> None:
        self.rank, self.world, self.timeout = rank, world, timeout
        self.store = PrefixStore(prefix, store)
        self.watch = PrefixStore(prefix, store.clone())  # type: ignore[attr-defined]  # the monitor's own connection
        self.progress = StoreProgress(self.store, rank)
        self.words: FailureWords | None = None
        self.terminated = False  # set by the SIGTERM handler
        self.suspect: Report | None = None  # rank 0: a communication error its evaluation met
        self.waiting_since: float | None = None  # when this participant began waiting to be stopped
        self.verdict: BaseException | None = None
        self.decided = threading.Event()
        self.delivered = False
        self._beat = 0
        self._began = time.monotonic()
        self._joined_at: float | None = None
        self._decided_at = 0.0
        self._closing = threading.Event()
        self.store.set(f"host/{rank}", socket.gethostname())
        self._beat_once(self.store)
        self._thread = threading.Thread(target=self._loop, name="tfexec-mesh-monitor", daemon=True)
        self._thread.start()

    # -- the evaluation's side -------------------------------------------------------------

    def report(self, job: int, node: int | None, message: str) -> None:
        """Record this participant's own error (rank 0's monitor words the run's failure from it)."""
        self.store.set(f"fail/{self.rank}", json.dumps({"job": job, "node": node, "message": message, "time": time.time()}))
        self.store.set(f"end/{self.rank}", "failed")
        self.store.add("failed", 1)

    def met_comm_error(self, job: int, node: int | None, message: str) -> None:
        """The evaluation met a communication error: a peer is gone, or was stopped."""
        if self.rank == 0:
            self.suspect = Report(0, job, node, message, time.time())

    def outcome(self) -> BaseException:
        """After a failure: on rank 0, the run's one error (its monitor's decision); on any
        other rank this never returns — its monitor ends the process once rank 0 says stop."""
        self.waiting_since = time.monotonic()
        if self.rank != 0:
            while self._thread.is_alive():  # the monitor ends this process once rank 0 says stop
                time.sleep(POLL)
            self._give_up("the run failed, and its store can no longer be reached")
        self.decided.wait(GRACE + STALE + LOST)
        self.delivered = True
        return self.verdict or EvalError("the mesh run failed, and no participant said why in time")

    def wait_ready(self) -> None:
        """Wait until every participant is ready to join the process group, or the run failed."""
        self.store.set(f"ready/{self.rank}", "1")
        keys = [f"ready/{r}" for r in range(self.world)]
        while not self.store.check(keys):
            if self.decided.is_set() or self.store.check(["stop"]):
                raise Stopped()
            time.sleep(POLL)

    def close(self) -> None:
        self._closing.set()
        self._thread.join()

    # -- the monitor --------------------------------------------------------------------------

    def _beat_once(self, store: Store) -> None:
        """Say this participant is alive: its heartbeat count, one more."""
        self._beat += 1
        store.set(f"beat/{self.rank}", str(self._beat))

    def _beat_of(self, rank: int) -> int:
        key = f"beat/{rank}"
        return int(self.watch.get(key)) if self.watch.check([key]) else -1

    def _loop(self) -> None:
        rank0_beat: tuple[int, float] = (-1, time.monotonic())
        while not self._closing.wait(POLL):
            try:
                self._beat_once(self.watch)
                if self.rank != 0:
                    if self.terminated or self.watch.check(["stop"]):
                        self._end_here("stopped")
                    if self.waiting_since is not None:
                        beat = self._beat_of(0)
                        if beat != rank0_beat[0]:
                            rank0_beat = (beat, time.monotonic())
                        elif time.monotonic() - rank0_beat[1] > LOST:
                            self._give_up("rank 0 stopped answering")
                elif self.verdict is not None:
                    if not self.delivered and time.monotonic() - self._decided_at > DELIVER:
                        self._give_up(str(self.verdict), rank0=True)
                else:
                    trigger = self._trigger()
                    if trigger is not None:
                        self._decide(trigger)
            except Exception as exc:  # the store is gone
                if self.progress.phase == Phase.DONE or self._closing.is_set():
                    return  # the run is over here; the store went with its host
                self._give_up(f"lost contact with the rendezvous store ({type(exc).__name__}: {exc})")

    def _end_here(self, how: str) -> NoReturn:
        try:
            if not self.watch.check([f"end/{self.rank}"]):
                self.watch.set(f"end/{self.rank}", how)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)

    def _give_up(self, why: str, rank0: bool = False) -> NoReturn:
        head = "tfexec mesh: EvalError: " if rank0 else f"tfexec mesh: participant rank {self.rank}: "
        line = head + why + ("" if rank0 else "; stopping") + "\n"
        sys.stdout.flush()
        os.write(2, line.encode())  # one write: the lines of processes sharing a pipe stay whole
        os._exit(1)

    def _positions(self) -> tuple[list[Position], list[int]]:
        """Every participant's position and heartbeat count (-1: none yet)."""
        positions, beats = [], []
        for r in range(self.world):
            key = f"pos/{r}"
            positions.append(_position(self.watch.get(key)) if self.watch.check([key]) else Position(Phase.LAUNCHED, -1, -1, 0))
            beats.append(self._beat_of(r))
        return positions, beats

    def _trigger(self) -> str | None:
        now = time.monotonic()
        positions, _ = self._positions()
        if self._joined_at is None and all(p.phase >= Phase.JOINED for p in positions):
            self._joined_at = now
        if self.terminated:
            return "terminated"
        if int(self.watch.add("failed", 0)) > 0:
            return "reported"
        if self.suspect is not None:
            return "suspect"
        if self._joined_at is None and now - self._began > STARTUP_TIMEOUT:
            return "startup"
        if self._joined_at is not None and any(p.phase < Phase.DONE for p in positions) and now - self._joined_at > self.timeout:
            return "timeout"
        return None

    def _decide(self, trigger: str) -> None:
        """Stop everyone, hear how each ended, and word the run's failure (rank 0's monitor)."""
        positions, beats = self._positions()
        self.watch.set("stop", trigger)
        others = range(1, self.world)
        heard_at = {r: time.monotonic() for r in others}
        deadline = time.monotonic() + GRACE
        while True:
            pending = [r for r in others if not self.watch.check([f"end/{r}"])]
            latest, new_beats = self._positions()
            now = time.monotonic()
            for r in pending:
                if new_beats[r] != beats[r]:
                    heard_at[r], beats[r] = now, new_beats[r]
                    positions[r] = latest[r]
            if all(now - heard_at[r] > STALE for r in pending) or now > deadline:
                break
            time.sleep(POLL)
        reports = []
        for r in range(self.world):
            if self.watch.check([f"fail/{r}"]):
                raw = json.loads(self.watch.get(f"fail/{r}"))
                reports.append(Report(r, int(raw["job"]), raw["node"], str(raw["message"]), float(raw["time"])))
        self.verdict = self._word(trigger, positions, pending, reports)
        self._decided_at = time.monotonic()
        self.progress.stop(Stopped())
        self.decided.set()

    def _word(self, trigger: str, positions: list[Position], silent: list[int], reports: list[Report]) -> EvalError:
        words = self.words
        if words is None or any(r.job == -2 for r in reports):
            return _before_the_run(reports, self.world)
        hosts = [self.watch.get(f"host/{r}").decode() if self.watch.check([f"host/{r}"]) else None for r in range(self.world)]
        if len(set(hosts)) > 1:
            words.hosts = hosts
        if trigger == "startup":
            return words.not_started(positions)[1]
        if trigger == "timeout":
            return words.no_progress(positions, [r for r, p in enumerate(positions) if p.phase < Phase.DONE])[1]
        if silent:
            how = "no error report; the launcher's log gives its exit status"
            return words.died(silent[0], positions[silent[0]], how)[1]
        if reports:
            return words.reported(reports)[1]
        if trigger == "terminated" or self.suspect is None:
            return EvalError(f"{words.target()}: the launcher stopped the mesh run (SIGTERM) while rank 0 was "
                             f"{words.where(self.progress.position())}")
        return words.reported([self.suspect])[1]


def _before_the_run(reports: list[Report], world: int) -> EvalError:
    """A failure before the participants joined (the job could not be prepared): its message,
    once when every participant that failed said the same."""
    early = sorted((r for r in reports if r.job == -2), key=lambda r: r.rank) or sorted(reports, key=lambda r: r.rank)
    if not early:
        return EvalError(f"the mesh run of {world} participants failed before it began, and no participant said why")
    first = early[0]
    if all(r.message == first.message for r in early):
        return EvalError(first.message)
    return EvalError(f"{first.message} (on participant rank {first.rank} of {world}; others failed differently)")
