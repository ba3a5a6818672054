"""Value rules of ``gather``, ``index``, ``scatter`` and ``scatter_add``: torch's functions,
after the op's type rule has checked the operands and every index is found in range (a
negative or too large index is an ``EvalError``, never a wrap-around)."""

import torch

from tfexec.errors import EvalError
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import as_tensor
from tfexec.semantics.rules.indices import check_in_range
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.ir.ops.indexing import Gather, Index, Scatter, ScatterAdd, ScatterOp


@value_rule(Gather)
def _gather(op: Gather, args: tuple[Arg, ...]) -> Kernel:
    rule = TypeRule(op)

    def gather(ctx: EvaluateContext, x: object, index: object) -> torch.Tensor:
        rule.check(x, index)
        t, i = as_tensor(ctx, x), as_tensor(ctx, index)
        axis = op.axis % max(t.dim(), 1)
        check_in_range("gather", "C5", i, t.shape[axis] if t.dim() else 1, f"axis {axis}")
        return torch.gather(t, op.axis, i)

    return Kernel(gather, needs_ctx=True)


@value_rule(Index)
def _index(op: Index, args: tuple[Arg, ...]) -> Kernel:
    rule = TypeRule(op)

    def index(ctx: EvaluateContext, x: object, *indices: object) -> torch.Tensor:
        rule.check(x, *indices)
        t = as_tensor(ctx, x)
        axes = [a % t.dim() for a in op.axes]
        slots: list[torch.Tensor | None] = [None] * (axes[-1] + 1)
        for axis, idx in zip(axes, indices):
            i = as_tensor(ctx, idx)
            check_in_range("index", "C4", i, t.shape[axis], f"axis {axis}")
            slots[axis] = i
        out: torch.Tensor = torch.ops.aten.index.Tensor(t, slots)
        return out

    return Kernel(index, needs_ctx=True)


def _targets(x: torch.Tensor, index: torch.Tensor, axis: int) -> torch.Tensor:
    """The flat position in ``x`` each entry of ``index`` writes to."""
    strides = [1] * x.dim()
    for d in range(x.dim() - 2, -1, -1):
        strides[d] = strides[d + 1] * x.shape[d + 1]
    flat = index.to(torch.int64) * strides[axis]
    for d in range(index.dim()):
        if d != axis:
            shape = [1] * index.dim()
            shape[d] = index.shape[d]
            flat = flat + (torch.arange(index.shape[d], device=index.device) * strides[d]).reshape(shape)
    return flat.reshape(-1)


def _scatter_kernel(op: ScatterOp, overwrite: bool) -> Kernel:
    rule = TypeRule(op)

    def scatter(ctx: EvaluateContext, x: object, index: object, src: object) -> torch.Tensor:
        rule.check(x, index, src)
        t, i, s = as_tensor(ctx, x), as_tensor(ctx, index), as_tensor(ctx, src)
        axis = op.axis % max(t.dim(), 1)
        check_in_range(op.name, "C6", i, t.shape[axis] if t.dim() else 1, f"axis {axis}")
        if overwrite and i.numel() > 1 and t.dim():
            targets = _targets(t, i, axis)
            if torch.unique(targets).numel() != targets.numel():
                raise EvalError(
                    f"scatter: two entries of index write to the same position of the result, which torch leaves"
                    f" undetermined [scatter (C7)]"
                )
        if overwrite:
            return torch.scatter(t, op.axis, i, s)
        return torch.scatter_add(t, op.axis, i, s)

    scatter.__name__ = scatter.__qualname__ = op.name  # torch.scatter / torch.scatter_add
    return Kernel(scatter, needs_ctx=True)


@value_rule(Scatter)
def _scatter(op: Scatter, args: tuple[Arg, ...]) -> Kernel:
    return _scatter_kernel(op, overwrite=True)


@value_rule(ScatterAdd)
def _scatter_add(op: ScatterAdd, args: tuple[Arg, ...]) -> Kernel:
    return _scatter_kernel(op, overwrite=False)
