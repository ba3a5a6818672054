"""Value rules of ``cumsum`` and ``cumprod`` (``torch.cumsum``, ``torch.cumprod``), after the
op's type rule has checked the operand."""

from collections.abc import Callable

import torch

from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import as_tensor
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.ir.ops.scan import Cumprod, Cumsum

Scan = Cumsum | Cumprod


def _register(cls: type[Scan], fn: Callable[..., torch.Tensor]) -> None:
    @value_rule(cls)
    def _rule(op: Scan, args: tuple[Arg, ...]) -> Kernel:
        rule, axis = TypeRule(op), op.axis
        dtype = None if op.dtype is None else op.dtype.torch

        def scan(ctx: EvaluateContext, x: object) -> torch.Tensor:
            rule.check(x)
            return fn(as_tensor(ctx, x), dim=axis, dtype=dtype)

        scan.__name__ = scan.__qualname__ = op.name  # named after its torch function
        return Kernel(scan, needs_ctx=True)


_register(Cumsum, torch.cumsum)
_register(Cumprod, torch.cumprod)
