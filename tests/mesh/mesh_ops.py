"""Custom ops for the mesh tests, importable by the mesh participants (they import an op
class, and the module registering its handler, by module name).

Each misbehaves on one rank only, when torch.distributed is initialised (in a participant);
in the caller's own process they are the identity.
"""

import os
import time
from dataclasses import dataclass
from typing import ClassVar

import torch.distributed as dist

from tfexec import EvaluateContext, Op, Value, register_eval


def _on(rank: int) -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_rank() == rank


@dataclass(frozen=True, slots=True)
class ExitOnRank(Op):
    """Kill the participant of rank ``rank`` with ``os._exit(code)`` (a crash: no report)."""

    name: ClassVar[str] = "exit_on_rank"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    rank: int = 1
    code: int = 3


@dataclass(frozen=True, slots=True)
class SignalOnRank(Op):
    """Kill the participant of rank ``rank`` with signal ``signum`` (SIGKILL: no handler runs)."""

    name: ClassVar[str] = "signal_on_rank"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    rank: int = 1
    signum: int = 9


@dataclass(frozen=True, slots=True)
class HangOnRank(Op):
    """Make the participant of rank ``rank`` sleep for an hour (a hang)."""

    name: ClassVar[str] = "hang_on_rank"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    rank: int = 1


@dataclass(frozen=True, slots=True)
class FailOnRank(Op):
    """Raise ``ValueError`` in the participant of rank ``rank`` only."""

    name: ClassVar[str] = "fail_on_rank"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    rank: int = 1


@register_eval(ExitOnRank)
def _exit_on_rank(ctx: EvaluateContext) -> Value:
    assert isinstance(ctx.op, ExitOnRank)
    if _on(ctx.op.rank):
        os._exit(ctx.op.code)
    return ctx.args[0]


@register_eval(SignalOnRank)
def _signal_on_rank(ctx: EvaluateContext) -> Value:
    assert isinstance(ctx.op, SignalOnRank)
    if _on(ctx.op.rank):
        os.kill(os.getpid(), ctx.op.signum)
        time.sleep(60)  # the signal ends the process before this returns
    return ctx.args[0]


@register_eval(HangOnRank)
def _hang_on_rank(ctx: EvaluateContext) -> Value:
    assert isinstance(ctx.op, HangOnRank)
    if _on(ctx.op.rank):
        time.sleep(3600)
    return ctx.args[0]


@register_eval(FailOnRank)
def _fail_on_rank(ctx: EvaluateContext) -> Value:
    assert isinstance(ctx.op, FailOnRank)
    if _on(ctx.op.rank):
        raise ValueError(f"boom on rank {ctx.op.rank}")
    return ctx.args[0]
