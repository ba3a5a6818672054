"""Value rules of the integer divisions, remainders and bitwise ops: torch's functions by
name, with torch's promotion, after the op's type rule has checked the operands.

A Python-scalar right operand reaches torch as a scalar (as for ``add``); a scalar on the
left becomes a rank-0 tensor of the dtype torch promotes it to. An integer division by
zero is refused before torch sees it (torch would raise its own ``ZeroDivisionError``).
"""

from collections.abc import Callable

import torch

from tfexec.errors import EvalError
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import Operand, as_tensor, tensorize
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg as RuleArg, Kernel, value_rule
from tfexec.ir.ops import integer as ig
from tfexec.ir.ops.elementwise import BinaryOp

TensorFn = Callable[..., torch.Tensor]

_DIVISIONS: dict[type[BinaryOp], TensorFn] = {
    ig.FloorDivide: torch.floor_divide,
    ig.TruncDivide: lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    ig.Remainder: torch.remainder,
    ig.Fmod: torch.fmod,
}
_BITWISE: dict[type[BinaryOp], TensorFn] = {
    ig.BitwiseAnd: torch.bitwise_and,
    ig.BitwiseOr: torch.bitwise_or,
    ig.BitwiseXor: torch.bitwise_xor,
    ig.LogicalXor: torch.logical_xor,
}


def _no_zero(op: BinaryOp, divisor: Operand) -> None:
    """An integer divisor with a zero element is an ``EvalError`` citing (C3)."""
    if isinstance(divisor, torch.Tensor):
        if divisor.numel() == 0:
            return
        if divisor.device.type == "meta":
            raise EvalError(f"{op.name}: the divisor is on device meta, which holds no data: it cannot be checked for zeros")
        zero = bool((divisor == 0).any())
    else:
        zero = divisor == 0
    if zero:
        raise EvalError(f"{op.name}: integer division by zero (the divisor has a zero element) [{op.name} (C3)]")


def _register(cls: type[BinaryOp], fn: TensorFn, division: bool) -> None:
    scalar_rhs = cls is not ig.LogicalXor  # torch.logical_xor takes tensors only

    @value_rule(cls)
    def _rule(op: BinaryOp, args: tuple[RuleArg, ...]) -> Kernel:
        rule = TypeRule(op)

        def binary(ctx: EvaluateContext, a: Operand, b: Operand) -> torch.Tensor:
            result = rule.check(a, b)
            if division and not result.dtype.is_floating:
                _no_zero(op, b)
            if isinstance(a, torch.Tensor) and (scalar_rhs or isinstance(b, torch.Tensor)):
                return fn(a, b)
            return fn(*tensorize(ctx, a, b))

        binary.__name__ = binary.__qualname__ = op.name  # named after its torch function
        return Kernel(binary, needs_ctx=True)


for _cls, _fn in _DIVISIONS.items():
    _register(_cls, _fn, division=True)
for _cls, _fn in _BITWISE.items():
    _register(_cls, _fn, division=False)


@value_rule(ig.BitwiseNot)
def _bitwise_not(op: ig.BitwiseNot, args: tuple[RuleArg, ...]) -> Kernel:
    rule = TypeRule(op)

    def bitwise_not(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        return torch.bitwise_not(as_tensor(ctx, x))

    return Kernel(bitwise_not, needs_ctx=True)
