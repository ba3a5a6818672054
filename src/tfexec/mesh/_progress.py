"""Where each participant is: one small slot per rank in a shared, memory-mapped file.

A participant writes its phase, the job it runs, the record index of the op it is
dispatching and how many ops it has dispatched; the caller reads the slots when a
participant dies or the run times out, to name the node it was in. A write is a few
``struct.pack_into`` calls on a mapped page (well under a microsecond), so it is done on
every dispatch.
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


class Slot:
    """A participant's writable view of its own slot."""

    def __init__(self, path: Path, rank: int) -> None:
        fd = os.open(path, os.O_RDWR)
        try:
            self._map = mmap.mmap(fd, 0)
        finally:
            os.close(fd)
        self._offset = rank * _SLOT.size
        self.phase, self.job, self.node, self.dispatches = Phase.LAUNCHED, -1, -1, 0

    def _write(self) -> None:
        _SLOT.pack_into(self._map, self._offset, self.phase, self.job, self.node, self.dispatches)

    def set(self, phase: Phase, job: int | None = None) -> None:
        self.phase = phase
        if job is not None:
            self.job, self.node = job, -1
        self._write()

    def enter(self, node: int) -> None:
        """Record that the op at record index ``node`` is being dispatched."""
        self.node = node
        self.dispatches += 1
        self._write()
