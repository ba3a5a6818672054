"""What a mesh run takes and gives back, whichever launcher started its participants:
``MeshJob``, ``MeshResult``, ``MeshOutcome``, and how a rank names a participant."""

import math
from dataclasses import dataclass

import torch

from tfexec.errors import EvalError
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Function
from tfexec.ir.types import Mesh
from tfexec.loading import LoadedModule

DEFAULT_TIMEOUT = 300.0
"""The stall check: seconds a participant may go without advancing (reaching its next op)
while another waits for it, or stop answering (``_stall``). A run that advances is never stopped."""
STARTUP_TIMEOUT = 120.0
"""Seconds the participants may take to start (import torch, form the gloo group)."""
MAX_PARTICIPANTS = 64
"""The most participants (processes) one run starts."""


class RunUsageError(EvalError):
    """A mistake in the command line (a missing or corrupt module, a bad input) met while the
    participants of an external launcher prepared their job. ``tfexec mesh`` reports it as a
    usage error (exit status 2) of ``kind``, the tfexec error it came from, as it does
    without a launcher."""

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class MeshJob:
    """One program to run on the mesh: ``target`` on ``inputs``; ``rounds`` times (the
    last round's values are returned, every round is timed)."""

    target: "Function | LoadedModule"
    inputs: tuple[object, ...] = ()
    return_locals: bool = False
    rounds: int = 1


@dataclass(frozen=True, slots=True)
class MeshResult:
    """What a mesh run computed.

    ``logical`` is the result as ``evaluate`` returns it (a tensor or a tuple), or None when
    some output is a per-participant value (it depends on ``local`` of a split value), which
    has no single logical value. ``locals`` (when asked for) holds each participant's own
    values, indexed by rank: the shard of a distributed output (under its type's
    ``ShardLayout``, else under DTensor's placement with pending reductions done), the whole
    value of a replicated one, the participant's value of a per-participant one.
    ``seconds`` is the evaluation time of each round (the slowest participant's).
    ``rss_growth`` is, per rank, how many bytes the participant's resident memory grew by at
    its peak during the job, from the job's start (weights and inputs not yet read) to its
    results written; None where the operating system does not say (Linux ``/proc`` does).
    """

    mesh: Mesh
    logical: "torch.Tensor | tuple[object, ...] | None"
    locals: "tuple[torch.Tensor | tuple[object, ...], ...] | None"
    seconds: tuple[float, ...]
    rss_growth: tuple[int, ...] | None = None

    def coordinate(self, rank: int) -> tuple[int, ...]:
        """The mesh coordinate of participant ``rank`` (row-major: the last mesh axis varies fastest)."""
        return coordinate(self.mesh, rank)

    def local(self, *coord: int) -> "torch.Tensor | tuple[object, ...]":
        """The local values of the participant at mesh coordinate ``coord``."""
        if self.locals is None:
            raise ValueError("this result holds no local values: run with return_locals=True")
        if len(coord) != len(self.mesh.shape) or not all(0 <= c < n for c, n in zip(coord, self.mesh.shape)):
            raise ValueError(f"{coord} is not a coordinate of {self.mesh}")
        return self.locals[sum(c * math.prod(self.mesh.shape[i + 1:]) for i, c in enumerate(coord))]


@dataclass(frozen=True, slots=True)
class MeshOutcome:
    """One job's outcome in a batch: its result, or the error that stopped it."""

    result: MeshResult | None
    error: EvalError | None

    def unwrap(self) -> MeshResult:
        """The result, or the job's error raised."""
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


def coordinate(mesh: Mesh, rank: int) -> tuple[int, ...]:
    """Participant ``rank``'s coordinate in ``mesh`` (row-major, as DTensor's ``DeviceMesh``)."""
    out = []
    for n in reversed(mesh.shape):
        out.append(rank % n)
        rank //= n
    return tuple(reversed(out))


def who(mesh: Mesh, rank: int, host: str | None = None) -> str:
    """A participant as messages name it (with its host, when it runs on another machine's launcher)."""
    on = f" on host {host}" if host else ""
    return f"rank {rank} at coordinate {coordinate(mesh, rank)} of {mesh}{on}"


def check_timeout(timeout: object) -> float:
    """``timeout`` as seconds, or a ``ValueError`` when it is not a positive number."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def logical_result(target: "Function | LoadedModule", result: MeshResult) -> "torch.Tensor | tuple[object, ...]":
    """A run's logical result, refused (``EvalError``) when it is a per-participant value."""
    if result.logical is None:
        fn = target if isinstance(target, Function) else target.entry
        where = describe_expr(fn.body) if fn is not None else "the result"
        raise EvalError(
            f"{where}: the result is a per-participant value (it depends on local of a value split over the mesh), "
            "so it has no single logical value: pass return_locals=True and read each participant's value"
        )
    return result.logical
