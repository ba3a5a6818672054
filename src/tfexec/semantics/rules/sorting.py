"""Value rules of ``sort``, ``argsort``, ``topk`` and ``argtopk``: one stable sort
(``torch.sort(..., stable=True)``), whose first ``k`` elements are the top ``k`` (so equal
elements come in index order, which torch leaves open)."""

import torch

from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import as_tensor
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.ir.ops.sorting import Argsort, ArgTopK, Sort, SortOp, TopK, TopKOp


def _sort_kernel(op: SortOp, indices: bool) -> Kernel:
    rule = TypeRule(op)

    def sort(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        values, order = torch.sort(as_tensor(ctx, x), dim=op.axis, descending=op.descending, stable=True)
        return order if indices else values

    sort.__name__ = sort.__qualname__ = op.name  # torch.sort / torch.argsort
    return Kernel(sort, needs_ctx=True)


@value_rule(Sort)
def _sort(op: Sort, args: tuple[Arg, ...]) -> Kernel:
    return _sort_kernel(op, indices=False)


@value_rule(Argsort)
def _argsort(op: Argsort, args: tuple[Arg, ...]) -> Kernel:
    return _sort_kernel(op, indices=True)


def _topk_kernel(op: TopKOp, indices: bool) -> Kernel:
    rule = TypeRule(op)

    def topk(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        t = as_tensor(ctx, x)
        values, order = torch.sort(t, dim=op.axis, descending=op.largest, stable=True)
        picked = order if indices else values
        return picked.narrow(op.axis, 0, op.k) if t.dim() else picked

    topk.__name__ = topk.__qualname__ = op.name
    return Kernel(topk, needs_ctx=True)


@value_rule(TopK)
def _topk(op: TopK, args: tuple[Arg, ...]) -> Kernel:
    return _topk_kernel(op, indices=False)


@value_rule(ArgTopK)
def _argtopk(op: ArgTopK, args: tuple[Arg, ...]) -> Kernel:
    return _topk_kernel(op, indices=True)
