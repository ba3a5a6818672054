"""Value rules of ``cumsum`` and ``cumprod`` (``torch.cumsum``, ``torch.cumprod``), after the
op's type rule has checked the operand."""

import torch

from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import as_tensor
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.ir.ops.scan import Cumprod, Cumsum


@value_rule(Cumsum)
def _cumsum(op: Cumsum, args: tuple[Arg, ...]) -> Kernel:
    rule, axis = TypeRule(op), op.axis
    dtype = None if op.dtype is None else op.dtype.torch

    def cumsum(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        return torch.cumsum(as_tensor(ctx, x), dim=axis, dtype=dtype)

    return Kernel(cumsum, needs_ctx=True)


@value_rule(Cumprod)
def _cumprod(op: Cumprod, args: tuple[Arg, ...]) -> Kernel:
    rule, axis = TypeRule(op), op.axis
    dtype = None if op.dtype is None else op.dtype.torch

    def cumprod(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        return torch.cumprod(as_tensor(ctx, x), dim=axis, dtype=dtype)

    return Kernel(cumprod, needs_ctx=True)
