"""Value rules of ``log1p``, ``expm1``, ``log2``, ``log10``, ``tan``, ``atan``, ``reciprocal``
and the predicates ``isnan``, ``isinf``, ``isfinite``, ``logical_not``: torch's functions by
name, after the op's type rule has checked the operand."""

from collections.abc import Callable

import torch

from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import as_tensor
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.ir.ops import unary_math as um
from tfexec.ir.ops.elementwise import UnaryOp

_TORCH: dict[type[UnaryOp], Callable[[torch.Tensor], torch.Tensor]] = {
    um.Log1p: torch.log1p,
    um.Expm1: torch.expm1,
    um.Log2: torch.log2,
    um.Log10: torch.log10,
    um.Tan: torch.tan,
    um.Atan: torch.atan,
    um.Reciprocal: torch.reciprocal,
    um.IsNan: torch.isnan,
    um.IsInf: torch.isinf,
    um.IsFinite: torch.isfinite,
    um.LogicalNot: torch.logical_not,
}


def _register(cls: type[UnaryOp], fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
    @value_rule(cls)
    def _rule(op: UnaryOp, args: tuple[Arg, ...]) -> Kernel:
        rule = TypeRule(op)

        def elementwise(ctx: EvaluateContext, x: object) -> torch.Tensor:
            rule.check(x)
            return fn(as_tensor(ctx, x))

        elementwise.__name__ = elementwise.__qualname__ = op.name  # named after its torch function
        return Kernel(elementwise, needs_ctx=True)


for _cls, _fn in _TORCH.items():
    _register(_cls, _fn)
