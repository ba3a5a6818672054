"""Value rules of ``flip``, ``roll``, ``diagonal``, ``triu``, ``tril`` and ``pad``: torch's
functions by name, after the op's type rule has checked the operand."""

import torch
import torch.nn.functional as F

from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import as_tensor
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.ir.ops.rearrange import Diagonal, Flip, Pad, Roll, TriangleOp, Tril, Triu


@value_rule(Flip)
def _flip(op: Flip, args: tuple[Arg, ...]) -> Kernel:
    rule, axes = TypeRule(op), list(op.axes)

    def flip(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        return torch.flip(as_tensor(ctx, x), dims=axes)

    return Kernel(flip, needs_ctx=True)


@value_rule(Roll)
def _roll(op: Roll, args: tuple[Arg, ...]) -> Kernel:
    rule, shifts, axes = TypeRule(op), list(op.shifts), op.axes

    def roll(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        t = as_tensor(ctx, x)
        return torch.roll(t, shifts) if axes is None else torch.roll(t, shifts, dims=list(axes))

    return Kernel(roll, needs_ctx=True)


@value_rule(Diagonal)
def _diagonal(op: Diagonal, args: tuple[Arg, ...]) -> Kernel:
    rule = TypeRule(op)

    def diagonal(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        return torch.diagonal(as_tensor(ctx, x), op.offset, op.axis1, op.axis2)

    return Kernel(diagonal, needs_ctx=True)


def _triangle(op: TriangleOp, upper: bool) -> Kernel:
    rule, k = TypeRule(op), op.diagonal

    def triangle(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        t = as_tensor(ctx, x)
        return torch.triu(t, diagonal=k) if upper else torch.tril(t, diagonal=k)

    triangle.__name__ = triangle.__qualname__ = op.name  # torch.triu / torch.tril
    return Kernel(triangle, needs_ctx=True)


@value_rule(Triu)
def _triu(op: Triu, args: tuple[Arg, ...]) -> Kernel:
    return _triangle(op, upper=True)


@value_rule(Tril)
def _tril(op: Tril, args: tuple[Arg, ...]) -> Kernel:
    return _triangle(op, upper=False)


@value_rule(Pad)
def _pad(op: Pad, args: tuple[Arg, ...]) -> Kernel:
    rule, pads, mode, value = TypeRule(op), list(op.pads), op.mode, float(op.value)

    def pad(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        t = as_tensor(ctx, x)
        if mode == "constant":
            return F.pad(t, pads, mode="constant", value=value)
        return F.pad(t, pads, mode=mode)

    return Kernel(pad, needs_ctx=True)
