"""Value rules of ``floor``, ``ceil``, ``round``, ``trunc``, ``sign`` and ``clamp``: torch's
functions by name, after the op's type rule has checked the operands."""

from collections.abc import Callable

import torch

from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import Operand, as_tensor
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg as RuleArg, Kernel, value_rule
from tfexec.ir.ops.elementwise import UnaryOp
from tfexec.ir.ops.rounding import Ceil, Clamp, Floor, Round, Sign, Trunc

_ROUNDING: dict[type[UnaryOp], Callable[[torch.Tensor], torch.Tensor]] = {
    Floor: torch.floor,
    Ceil: torch.ceil,
    Trunc: torch.trunc,
    Sign: torch.sign,
}


def _register(cls: type[UnaryOp], fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
    @value_rule(cls)
    def _rule(op: UnaryOp, args: tuple[RuleArg, ...]) -> Kernel:
        rule = TypeRule(op)

        def rounded(ctx: EvaluateContext, x: object) -> torch.Tensor:
            rule.check(x)
            return fn(as_tensor(ctx, x))

        rounded.__name__ = rounded.__qualname__ = op.name  # named after its torch function
        return Kernel(rounded, needs_ctx=True)


for _cls, _fn in _ROUNDING.items():
    _register(_cls, _fn)


@value_rule(Round)
def _round(op: Round, args: tuple[RuleArg, ...]) -> Kernel:
    rule, decimals = TypeRule(op), op.decimals

    def round(ctx: EvaluateContext, x: object) -> torch.Tensor:  # noqa: A001 - torch's name
        rule.check(x)
        t = as_tensor(ctx, x)
        return torch.round(t) if decimals == 0 else torch.round(t, decimals=decimals)

    return Kernel(round, needs_ctx=True)


@value_rule(Clamp)
def _clamp(op: Clamp, args: tuple[RuleArg, ...]) -> Kernel:
    """Bounds given as Python scalars reach torch as scalars (torch's own rounding of them);
    a mix of a scalar and a tensor bound becomes two tensors of the result dtype."""
    rule = TypeRule(op)

    def clamp(ctx: EvaluateContext, x: object, low: Operand, high: Operand) -> torch.Tensor:
        dtype = rule.check(x, low, high).dtype.torch
        t = as_tensor(ctx, x)
        if not isinstance(low, torch.Tensor) and not isinstance(high, torch.Tensor):
            return torch.clamp(t, low, high)
        lo = low if isinstance(low, torch.Tensor) else torch.tensor(low, dtype=dtype, device=t.device)
        hi = high if isinstance(high, torch.Tensor) else torch.tensor(high, dtype=dtype, device=t.device)
        return torch.clamp(t, lo, hi)

    return Kernel(clamp, needs_ctx=True)
