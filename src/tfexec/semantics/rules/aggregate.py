"""Value rules of ``any``, ``all`` (``torch.any``, ``torch.all``) and ``vector_norm``
(``torch.linalg.vector_norm``) over ``axes``, and ``histc`` (``torch.histc``), after the op's type rule has checked the
operand. ``axes=()`` reduces nothing (hir.md's rule for ``reduce``), where torch would read
an empty ``dim`` as every axis."""

import torch

from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import as_tensor
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.errors import EvalError
from tfexec.ir.ops.aggregate import Histc, LogicalReduceOp, ReduceAll, ReduceAny, VectorNorm


def _logical(op: LogicalReduceOp, every: bool) -> Kernel:
    rule = TypeRule(op)
    reducer = torch.all if every else torch.any

    def logical_reduce(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        t = as_tensor(ctx, x)
        if op.axes == ():
            out = t != 0
            return out.to(torch.uint8) if t.dtype == torch.uint8 else out
        axes = tuple(range(t.dim())) if op.axes is None else op.axes
        if not axes:  # a rank-0 operand reduced over every axis
            return reducer(t)
        return reducer(t, dim=axes, keepdim=op.keepdims)

    logical_reduce.__name__ = logical_reduce.__qualname__ = op.name  # torch.any / torch.all
    return Kernel(logical_reduce, needs_ctx=True)


@value_rule(ReduceAny)
def _any(op: ReduceAny, args: tuple[Arg, ...]) -> Kernel:
    return _logical(op, every=False)


@value_rule(ReduceAll)
def _all(op: ReduceAll, args: tuple[Arg, ...]) -> Kernel:
    return _logical(op, every=True)


@value_rule(VectorNorm)
def _vector_norm(op: VectorNorm, args: tuple[Arg, ...]) -> Kernel:
    rule, order = TypeRule(op), float(op.ord)

    def vector_norm(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        t = as_tensor(ctx, x)
        out: torch.Tensor
        if op.axes == ():
            out = torch.linalg.vector_norm(t.unsqueeze(-1), order, dim=-1)
        else:
            out = torch.linalg.vector_norm(t, order, dim=op.axes, keepdim=op.keepdims)
        return out

    return Kernel(vector_norm, needs_ctx=True)


@value_rule(Histc)
def _histc(op: Histc, args: tuple[Arg, ...]) -> Kernel:
    rule = TypeRule(op)

    def histc(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        t = as_tensor(ctx, x)
        if op.min == op.max and t.numel() and not bool(torch.isfinite(t).all()):
            raise EvalError(
                f"histc with min == max ({op.min}) takes its range from x, whose elements are not all finite"
                " [histc (C3)]"
            )
        return torch.histc(t, op.bins, op.min, op.max)

    return Kernel(histc, needs_ctx=True)
