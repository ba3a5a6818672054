"""Where each participant is: its phase, job, the op it is dispatching and how many it has;
and whether it is alive (a heartbeat) and waiting for the others (in a collective).

Under tfexec's own launcher each rank has one small slot in a shared, memory-mapped file
(``Slot``); the caller reads the slots to see who advances, who waits and who stalls (the
stall check, ``_stall``), and to name the node a participant was in. A write is a few
``struct.pack_into`` calls on a mapped page (well under a microsecond), so it is done on
every dispatch. Under an external launcher the position lives in memory (``Progress``) and
a monitor thread publishes it to the rendezvous store; the monitor can also ask the
evaluation to stop at its next op.

Whether a participant waits is read from its evaluating thread's Python stack
(``waiting_in_collective``): blocked in a torch.distributed collective, the innermost
torch.distributed frame is one of the collective modules. A heartbeat thread (``Heartbeat``)
samples it and counts beats; a process stopped by a signal, or frozen, beats no more.
"""

import enum
import mmap
import os
import struct
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch.distributed

_SLOT = struct.Struct("<qqqqqq")  # phase, job, node, dispatches; heartbeat count, waiting (0/1)
_POSITION = struct.Struct("<qqqq")  # the evaluation's four fields
_BEAT = struct.Struct("<qq")  # the heartbeat thread's two, after them
BEAT_EVERY = 0.05
"""Seconds between two heartbeats."""

_DIST_DIR = os.path.dirname(torch.distributed.__file__) + os.sep
_TORCH_DIR = os.path.dirname(os.path.dirname(_DIST_DIR.rstrip(os.sep))) + os.sep
_COLLECTIVE_FILES = frozenset(
    os.path.join(_DIST_DIR, *name.split("/"))
    for name in ("distributed_c10d.py", "_functional_collectives.py", "c10d_logger.py", "tensor/_collective_utils.py")
)


def waiting_in_collective(thread_id: int) -> bool:
    """Whether thread ``thread_id`` is blocked in (or running) a torch.distributed collective:
    its innermost frame under torch.distributed, past torch's own dispatch glue, is a
    collective module's. A thread in a user's op, or computing outside torch.distributed, is not."""
    frame = sys._current_frames().get(thread_id)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(_DIST_DIR):
            return name in _COLLECTIVE_FILES
        if not name.startswith(_TORCH_DIR):
            return False  # tfexec's, a user's or the standard library's code: not a collective
        frame = frame.f_back
    return False


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

    def advanced_key(self) -> tuple[int, int, int]:
        """What changes when a participant advances: its phase, job and ops dispatched."""
        return int(self.phase), self.job, self.dispatches


@dataclass(frozen=True, slots=True)
class Beat:
    """A participant's heartbeat: how many (-1: none yet) and whether it was waiting in a collective."""

    count: int
    waiting: bool


def create(path: Path, participants: int) -> None:
    """Create the file holding one zeroed slot per participant."""
    path.write_bytes(bytes(_SLOT.size * participants))


def read_all(path: Path, participants: int) -> tuple[list[Position], list[Beat]]:
    """Every participant's position and heartbeat (a torn read only mixes two recent ones)."""
    data = path.read_bytes()
    positions, beats = [], []
    for rank in range(participants):
        phase, job, node, count, beat, waiting = _SLOT.unpack_from(data, rank * _SLOT.size)
        positions.append(Position(Phase(phase), job, node, count))
        beats.append(Beat(beat if beat > 0 else -1, bool(waiting)))
    return positions, beats


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
        _POSITION.pack_into(self._map, self._offset, self.phase, self.job, self.node, self.dispatches)

    def beat(self, count: int, waiting: bool) -> None:
        """Write a heartbeat (from the heartbeat thread; the evaluation never writes these fields)."""
        _BEAT.pack_into(self._map, self._offset + _POSITION.size, count, int(waiting))


class Heartbeat:
    """A daemon thread that beats for a participant every ``BEAT_EVERY`` seconds, saying
    whether its evaluating thread (the one that created it) waits in a collective."""

    def __init__(self, write: "Callable[[int, bool], None]") -> None:
        self._write = write
        self._evaluating = threading.get_ident()
        self._count = 0
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="tfexec-mesh-heartbeat", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._closing.wait(BEAT_EVERY):
            self._count += 1
            self._write(self._count, waiting_in_collective(self._evaluating))

    def close(self) -> None:
        self._closing.set()
        self._thread.join()
