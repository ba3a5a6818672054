"""Value rules of ``conv`` and ``conv_transpose``: ``torch.nn.functional.conv1d``/``2d``/``3d``
and ``conv_transpose1d``/``2d``/``3d`` by the number of spatial axes, after the op's type
rule has checked the operands."""

from collections.abc import Callable

import torch
import torch.nn.functional as F

from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import as_tensor
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.ir.ops.conv import Conv, ConvTranspose, per_axis

CONV_BY_RANK: dict[int, Callable[..., torch.Tensor]] = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
"""The torch convolution for each number of spatial axes."""
TRANSPOSED_BY_RANK: dict[int, Callable[..., torch.Tensor]] = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def expanded(values: tuple[int, ...], count: int) -> list[int]:
    """``values`` for ``count`` spatial axes (the type rule has checked they fit)."""
    out = per_axis(values, count)
    assert out is not None
    return list(out)


@value_rule(Conv)
def _conv(op: Conv, args: tuple[Arg, ...]) -> Kernel:
    rule = TypeRule(op)

    def conv(ctx: EvaluateContext, x: object, weight: object, bias: object = None) -> torch.Tensor:
        rule.check(*((x, weight) if bias is None else (x, weight, bias)))
        t, w = as_tensor(ctx, x), as_tensor(ctx, weight)
        b = None if bias is None else as_tensor(ctx, bias)
        n = t.dim() - 2
        return CONV_BY_RANK[n](
            t, w, b, expanded(op.stride, n), expanded(op.padding, n), expanded(op.dilation, n), op.groups
        )

    return Kernel(conv, needs_ctx=True)


@value_rule(ConvTranspose)
def _conv_transpose(op: ConvTranspose, args: tuple[Arg, ...]) -> Kernel:
    rule = TypeRule(op)

    def conv_transpose(ctx: EvaluateContext, x: object, weight: object, bias: object = None) -> torch.Tensor:
        rule.check(*((x, weight) if bias is None else (x, weight, bias)))
        t, w = as_tensor(ctx, x), as_tensor(ctx, weight)
        b = None if bias is None else as_tensor(ctx, bias)
        n = t.dim() - 2
        return TRANSPOSED_BY_RANK[n](
            t, w, b, expanded(op.stride, n), expanded(op.padding, n), expanded(op.output_padding, n), op.groups,
            expanded(op.dilation, n),
        )

    return Kernel(conv_transpose, needs_ctx=True)
