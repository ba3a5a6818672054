"""Builders of catalogue v2's vision ops: convolution, pooling, resampling and channel
normalisation (re-exported by ``tfexec.ops``)."""

from tfexec.builders.operands import Operand, apply
from tfexec.errors import IRConstructionError
from tfexec.ir.dims import ShapeDim
from tfexec.ir.expr import Call
from tfexec.ir.ops.channel_norm import BatchNorm, GroupNorm
from tfexec.ir.ops.conv import Conv, ConvTranspose
from tfexec.ir.ops.pool import AdaptiveAvgPool, AvgPool, Interpolate, InterpolateMode, MaxPool
from tfexec.ir.span import Span


def conv(
    x: Operand, weight: Operand, bias: Operand | None = None, *, stride: tuple[int, ...] = (1,),
    padding: tuple[int, ...] = (0,), dilation: tuple[int, ...] = (1,), groups: int = 1, span: Span | None = None,
) -> Call:
    """``F.conv1d``/``conv2d``/``conv3d`` by the spatial rank; a one-entry stride, padding or
    dilation applies to every spatial axis."""
    operands = (x, weight) if bias is None else (x, weight, bias)
    return apply(Conv(stride, padding, dilation, groups), *operands, span=span)


def conv_transpose(
    x: Operand, weight: Operand, bias: Operand | None = None, *, stride: tuple[int, ...] = (1,),
    padding: tuple[int, ...] = (0,), output_padding: tuple[int, ...] = (0,), dilation: tuple[int, ...] = (1,),
    groups: int = 1, span: Span | None = None,
) -> Call:
    """``F.conv_transpose1d``/``2d``/``3d`` by the spatial rank (one-entry tuples apply to every axis)."""
    operands = (x, weight) if bias is None else (x, weight, bias)
    return apply(ConvTranspose(stride, padding, output_padding, dilation, groups), *operands, span=span)


def max_pool(
    x: Operand, *, kernel: tuple[int, ...], stride: tuple[int, ...] | None = None, padding: tuple[int, ...] = (0,),
    ceil_mode: bool = False, dilation: tuple[int, ...] = (1,), span: Span | None = None,
) -> Call:
    """``F.max_pool{1,2,3}d`` over ``len(kernel)`` spatial axes (``stride`` defaults to ``kernel``)."""
    return apply(MaxPool(kernel, stride, padding, ceil_mode, dilation), x, span=span)


def avg_pool(
    x: Operand, *, kernel: tuple[int, ...], stride: tuple[int, ...] | None = None, padding: tuple[int, ...] = (0,),
    ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None,
    span: Span | None = None,
) -> Call:
    """``F.avg_pool{1,2,3}d`` over ``len(kernel)`` spatial axes (``stride`` defaults to ``kernel``)."""
    return apply(AvgPool(kernel, stride, padding, ceil_mode, count_include_pad, divisor_override), x, span=span)


def adaptive_avg_pool(x: Operand, *, output_size: tuple[int, ...], span: Span | None = None) -> Call:
    """``F.adaptive_avg_pool{1,2,3}d(x, output_size)``."""
    return apply(AdaptiveAvgPool(output_size), x, span=span)


def interpolate(
    x: Operand, *, size: tuple[ShapeDim, ...], mode: InterpolateMode = "nearest", scales: tuple[float, ...] | None = None,
    align_corners: bool = False, span: Span | None = None,
) -> Call:
    """``F.interpolate`` of the spatial axes to ``size`` (nearest, or linear/bilinear/bicubic/trilinear)."""
    return apply(Interpolate(size, mode, scales, align_corners), x, span=span)


def batch_norm(
    x: Operand, mean: Operand, var: Operand, weight: Operand | None = None, bias: Operand | None = None, *,
    eps: float = 1e-5, span: Span | None = None,
) -> Call:
    """``F.batch_norm(x, mean, var, weight, bias, training=False, eps=eps)``; a bias needs a weight."""
    if bias is not None and weight is None:
        raise IRConstructionError("batch_norm: a bias needs a weight (pass full(shape=(C,), value=1.0) as the weight)")
    operands = tuple(o for o in (x, mean, var, weight, bias) if o is not None)
    return apply(BatchNorm(eps), *operands, span=span)


def group_norm(
    x: Operand, weight: Operand | None = None, bias: Operand | None = None, *, groups: int, eps: float = 1e-5,
    span: Span | None = None,
) -> Call:
    """``F.group_norm(x, groups, weight, bias, eps)``; a bias needs a weight."""
    if bias is not None and weight is None:
        raise IRConstructionError("group_norm: a bias needs a weight (pass full(shape=(C,), value=1.0) as the weight)")
    operands = tuple(o for o in (x, weight, bias) if o is not None)
    return apply(GroupNorm(groups, eps), *operands, span=span)


__all__ = ["conv", "conv_transpose", "max_pool", "avg_pool", "adaptive_avg_pool", "interpolate", "batch_norm", "group_norm"]
