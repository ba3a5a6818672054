"""Where each participant is: its phase, job, the op it is dispatching and how many it has.

Under tfexec's own launcher each rank has one small slot in a shared, memory-mapped file
(``Slot``); the caller reads the slots when a participant dies or the run times out, to
name the node it was in. A write is a few ``struct.pack_into`` calls on a mapped page (well
under a microsecond), so it is done on every dispatch. Under an external launcher the
position lives in memory (``Progress``) and a monitor thread publishes it to the
rendezvous store; the monitor can also ask the evaluation to stop at its next op.
"""

import enum
import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path

_SLOT = struct.Struct("<qqqq")  # phase, job, node, dispatches


class Phase(enum.IntEnum):
    """A participant's phase, in the order a run goes through them."""

    LAUNCHED = 0
    JOINED = 1  # the process group is formed
    RUNNING = 2  # evaluating a job
    RETURNING = 3  # writing a job's results
    DONE = 4  # every job finished, results written
    FAILED = 5  # an error report is written


@dataclass(frozen=True, slots=True)
class Position:
    """One participant's last reported position."""

    phase: Phase
    job: int
    node: int  # record index of the op being dispatched, -1 for none
    dispatches: int


def create(path: Path, participants: int) -> None:
    """Create the file holding one zeroed slot per participant."""
    path.write_bytes(bytes(_SLOT.size * participants))


def read_all(path: Path, participants: int) -> list[Position]:
    """Every participant's position (a torn read only mixes two recent positions)."""
    data = path.read_bytes()
    out = []
    for rank in range(participants):
        phase, job, node, count = _SLOT.unpack_from(data, rank * _SLOT.size)
        out.append(Position(Phase(phase), job, node, count))
    return out


class Progress:
    """A participant's own position, in memory; ``stop`` makes its next op raise."""

    def __init__(self) -> None:
        self.phase, self.job, self.node, self.dispatches = Phase.LAUNCHED, -1, -1, 0
        self.stopping: BaseException | None = None

    def position(self) -> Position:
        return Position(self.phase, self.job, self.node, self.dispatches)

    def _write(self) -> None:
        """Publish a change (nothing to do for a position kept in memory only)."""

    def set(self, phase: Phase, job: int | None = None) -> None:
        self.phase = phase
        if job is not None:
            self.job, self.node = job, -1
        self._write()

    def enter(self, node: int) -> None:
        """Record that the op at record index ``node`` is being dispatched."""
        if self.stopping is not None:
            raise self.stopping
        self.node = node
        self.dispatches += 1
        self._write()

    def stop(self, reason: BaseException) -> None:
        """Make the next op dispatched raise ``reason`` (set from another thread)."""
        self.stopping = reason


class Slot(Progress):
    """A participant's position, written to its slot of the shared file at every change."""

    def __init__(self, path: Path, rank: int) -> None:
        super().__init__()
        fd = os.open(path, os.O_RDWR)
        try:
            self._map = mmap.mmap(fd, 0)
        finally:
            os.close(fd)
        self._offset = rank * _SLOT.size

    def _write(self) -> None:
        _SLOT.pack_into(self._map, self._offset, self.phase, self.job, self.node, self.dispatches)
