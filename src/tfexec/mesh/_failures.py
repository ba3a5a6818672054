"""The one ``EvalError`` a failed mesh run raises, worded from what the participants left:
their positions (the op each was in), their own error reports, and which of them died.

Both launchers word failures here — tfexec's own (``_launch``), which reads exit codes and
files, and an external one such as torchrun (``_distributed``), which reads the rendezvous
store — so a failure reads the same however the participants were started.
"""

import signal
from collections.abc import Sequence
from dataclasses import dataclass

import torch.distributed as dist

from tfexec.errors import EvalError
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Function
from tfexec.ir.types import Mesh
from tfexec.mesh._internals import reason_of
from tfexec.mesh._progress import Phase, Position, Progress
from tfexec.mesh._results import STARTUP_TIMEOUT, coordinate, who
from tfexec.mesh._stall import Stall
from tfexec.mesh._wire import Item


_COMM_ERRORS = (
    "Connection closed by peer", "Connection reset by peer", "Broken pipe", "Connection refused", "Timed out waiting",
    "Socket Timeout", "Connection timed out",
)


class Stopped(Exception):
    """The run failed elsewhere: the monitor stops this participant's evaluation at its next op."""


def is_comm_error(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is the transport failing — a peer gone, a socket
    closed — rather than an error of this participant's own."""
    seen: BaseException | None = exc
    for _ in range(16):
        if seen is None:
            return False
        if isinstance(seen, Stopped | dist.DistError) or any(text in str(seen) for text in _COMM_ERRORS):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@dataclass(frozen=True, slots=True)
class Report:
    """A participant's report of its own error: the job, the record index of the node it
    failed in (None when the message names its own node, or none) and the message."""

    rank: int
    job: int
    node: int | None
    message: str
    time: float
    kind: str = "EvalError"  # the class of the participant's error
    status: int = 1  # the exit status it asks for: 2 for a mistake in the command line


def exit_how(code: int) -> str:
    """An exit status as words: ``exit code 3``, ``killed by signal SIGKILL``."""
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def failure_of(exc: BaseException, progress: Progress, nodes: "list[Item] | None") -> tuple[int | None, str]:
    """The node an exception happened in — the op being dispatched, or any node its message
    starts with (a constant that failed to read) — and the message without that node's prefix."""
    message = reason_of(exc)
    if nodes is None:
        return None, message
    current = progress.node if progress.phase == Phase.RUNNING and 0 <= progress.node < len(nodes) else None
    candidates = ([current] if current is not None else []) + list(range(len(nodes)))
    for index in candidates:
        prefix = describe_expr(nodes[index]) + ": "
        if message.startswith(prefix):
            return index, message[len(prefix):]
    return None, message


class FailureWords:
    """Words the failures of one run: its mesh, its jobs (function and wire nodes) and timeout."""

    def __init__(self, mesh: Mesh, jobs: Sequence[tuple[Function, Sequence[Item]]], timeout: float,
                 hosts: Sequence[str | None] | None = None) -> None:
        self.mesh = mesh
        self.jobs = jobs
        self.timeout = timeout
        self.hosts = hosts

    def who(self, rank: int) -> str:
        host = self.hosts[rank] if self.hosts is not None and rank < len(self.hosts) else None
        return who(self.mesh, rank, host)

    def node(self, job: int, index: int) -> Item | None:
        if 0 <= job < len(self.jobs) and 0 <= index < len(self.jobs[job][1]):
            return self.jobs[job][1][index]
        return None

    def target(self, job: int = 0) -> str:
        return describe_expr(self.jobs[max(0, min(job, len(self.jobs) - 1))][0])

    def where(self, pos: Position) -> str:
        if pos.phase == Phase.DONE:
            return "finished"
        if pos.phase == Phase.RETURNING:
            return f"returning the results of job {pos.job}"
        if pos.phase == Phase.LAUNCHED:
            return "starting"
        node = self.node(pos.job, pos.node)
        return f"in {describe_expr(node)}" if node is not None else "before its first op"

    def not_started(self, positions: Sequence[Position]) -> tuple[int, EvalError]:
        late = ", ".join(str(r) for r, pos in enumerate(positions) if pos.phase < Phase.JOINED)
        return 0, EvalError(
            f"{self.target()}: the mesh participants did not all start within {STARTUP_TIMEOUT:g} s "
            f"(ranks {late} had not joined the process group); the run was stopped"
        )

    def stalled(self, stall: Stall, positions: Sequence[Position]) -> tuple[int, EvalError]:
        """The stall check fired: every rank that stopped advancing is named (never the lowest
        of a tie alone), with where it was and who waited for it."""
        if not stall.stalled:
            where = "; ".join(f"rank {r} at {coordinate(self.mesh, r)}: {self.where(positions[r])}" for r in range(len(positions)))
            job = max(min(p.job for p in positions), 0)
            return job, EvalError(
                f"{self.target(job)}: every mesh participant waited for the others for {stall.seconds:.0f} s with none advancing "
                f"(a deadlock; {where}); the run was stopped (timeout {self.timeout:g} s)"
            )
        first = positions[stall.stalled[0]]
        node = self.node(first.job, first.node) if first.phase == Phase.RUNNING else None
        head = describe_expr(node) if node is not None else self.target(max(first.job, 0))
        clauses = []
        for r in stall.stalled:
            what = ("stopped answering (no heartbeat: its process is stopped by a signal, or frozen)" if r in stall.silent
                    else "made no progress")
            clauses.append(f"mesh participant {self.who(r)} {what} {self.where(positions[r])} for {stall.seconds:.0f} s")
        them = "it" if len(stall.stalled) == 1 else "them"
        waiters = ", ".join(f"rank {r} at {coordinate(self.mesh, r)} ({self.where(positions[r])})" for r in stall.waiting)
        waited = f" while {waiters} waited for {them}" if waiters else ""
        return max(first.job, 0), EvalError(
            f"{head}: {'; '.join(clauses)}{waited}; the run was stopped (timeout {self.timeout:g} s: the longest a "
            "participant may go without advancing while others wait for it)"
        )

    def died(self, rank: int, pos: Position, how: str, output: str = "") -> tuple[int, EvalError]:
        """A participant that ended without a report (``how``: its exit status, as far as known)."""
        node = self.node(pos.job, pos.node) if pos.phase == Phase.RUNNING else None
        tail = f"; its output ended with: {output}" if output else ""
        if node is not None:
            return pos.job, EvalError(f"{describe_expr(node)}: mesh participant {self.who(rank)} died ({how}) in this op{tail}")
        job = max(pos.job, 0)
        return job, EvalError(f"{self.target(job)}: mesh participant {self.who(rank)} died ({how}) {self.where(pos)}{tail}")

    def reported(self, reports: Sequence[Report]) -> tuple[int, EvalError]:
        """The first error reported (by time), naming every rank that failed the same way."""
        first = min(reports, key=lambda r: (r.time, r.rank))
        key = (first.job, first.node, first.message)
        same = sorted(r.rank for r in reports if (r.job, r.node, r.message) == key)
        rank = same[0]
        also = f" (ranks {', '.join(map(str, same))} failed the same way)" if len(same) > 1 else ""
        if first.job < 0:
            return 0, EvalError(f"{self.target()}: mesh participant {self.who(rank)} {first.message}{also}")
        at = self.node(first.job, first.node) if first.node is not None else None
        if at is not None:
            return first.job, EvalError(f"{describe_expr(at)}: on mesh participant {self.who(rank)}: {first.message}{also}")
        return first.job, EvalError(f"{first.message} (on mesh participant {self.who(rank)}){also}")
