"""Value rules of ``max_pool``, ``avg_pool``, ``adaptive_avg_pool`` (``torch.nn.functional``'s
pools by the number of spatial axes) and ``interpolate`` (``aten.upsample_nearest*``), after
the op's type rule has checked the operand."""

from collections.abc import Callable

import torch
import torch.nn.functional as F

from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import as_tensor, resolve_shape
from tfexec.semantics.rules.conv import expanded
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.ir.ops.pool import AdaptiveAvgPool, AvgPool, Interpolate, MaxPool

_MAX: dict[int, Callable[..., torch.Tensor]] = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVG: dict[int, Callable[..., torch.Tensor]] = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}
_ADAPTIVE: dict[int, Callable[..., torch.Tensor]] = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}


@value_rule(MaxPool)
def _max_pool(op: MaxPool, args: tuple[Arg, ...]) -> Kernel:
    rule, n = TypeRule(op), len(op.kernel)
    stride = op.stride if op.stride is not None else op.kernel

    def max_pool(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        return _MAX[n](
            as_tensor(ctx, x), list(op.kernel), expanded(stride, n), expanded(op.padding, n), expanded(op.dilation, n),
            ceil_mode=op.ceil_mode,
        )

    return Kernel(max_pool, needs_ctx=True)


@value_rule(AvgPool)
def _avg_pool(op: AvgPool, args: tuple[Arg, ...]) -> Kernel:
    rule, n = TypeRule(op), len(op.kernel)
    stride = op.stride if op.stride is not None else op.kernel

    def avg_pool(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        t = as_tensor(ctx, x)
        kernel, steps, padding = list(op.kernel), expanded(stride, n), expanded(op.padding, n)
        if n == 1 and op.divisor_override is not None:  # avg_pool1d takes no divisor: pool a unit axis too
            out = F.avg_pool2d(
                t.unsqueeze(-2), [1, *kernel], [1, *steps], [0, *padding], op.ceil_mode, op.count_include_pad,
                op.divisor_override,
            )
            return out.squeeze(-2)
        if n == 1:
            return F.avg_pool1d(t, kernel, steps, padding, op.ceil_mode, op.count_include_pad)
        return _AVG[n](t, kernel, steps, padding, op.ceil_mode, op.count_include_pad, op.divisor_override)

    return Kernel(avg_pool, needs_ctx=True)


@value_rule(AdaptiveAvgPool)
def _adaptive_avg_pool(op: AdaptiveAvgPool, args: tuple[Arg, ...]) -> Kernel:
    rule, size = TypeRule(op), list(op.output_size)

    def adaptive_avg_pool(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        return _ADAPTIVE[len(size)](as_tensor(ctx, x), size)

    return Kernel(adaptive_avg_pool, needs_ctx=True)


@value_rule(Interpolate)
def _interpolate(op: Interpolate, args: tuple[Arg, ...]) -> Kernel:
    rule, n = TypeRule(op), len(op.size)
    scales: list[float | None] = [None] * n if op.scales is None else [float(s) for s in op.scales]
    exact = op.mode == "nearest-exact"
    nearest = op.mode in ("nearest", "nearest-exact")
    name = (f"_upsample_nearest_exact{n}d" if exact else f"upsample_nearest{n}d") if nearest else f"upsample_{op.mode}{n}d"
    align_corners = op.align_corners

    def interpolate(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        size = list(resolve_shape(ctx, op.size))
        upsample = getattr(torch.ops.aten, name).default
        out: torch.Tensor
        if nearest:
            out = upsample(as_tensor(ctx, x), size, *scales)
        else:
            out = upsample(as_tensor(ctx, x), size, align_corners, *scales)
        return out

    return Kernel(interpolate, needs_ctx=True)
