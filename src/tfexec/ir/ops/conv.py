"""Convolution: ``conv`` and ``conv_transpose`` over 1 to 3 spatial axes, with strides,
padding, dilation and groups.

``conv`` is ``torch.nn.functional.conv1d``/``conv2d``/``conv3d`` by the number of spatial
axes, ``conv_transpose`` the matching ``conv_transpose*d``; ``groups`` splits the channels
(``groups`` equal to the input channels is a depthwise convolution). The window arithmetic
is shared with the pools (``window_count``).
"""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dims import ShapeDim, dim_expr
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.attrs import check_int, check_ints
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


def window_count(
    size: ShapeDim, kernel: int, stride: int, padding: int, dilation: int = 1, ceil_mode: bool = False
) -> ShapeDim:
    """How many windows fit an axis of ``size``: torch's output size of a convolution or pool.

    ``(size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1``; with ``ceil_mode``
    the division rounds up, except that the last window must start inside the input or its
    left padding (torch's rule), i.e. at most ``(size + padding - 1) // stride + 1`` windows.
    """
    span = dim_expr("sub", dim_expr("add", size, 2 * padding), dilation * (kernel - 1) + 1)
    if not ceil_mode:
        return dim_expr("add", dim_expr("floordiv", span, stride), 1)
    rounded_up = dim_expr("add", dim_expr("floordiv", dim_expr("add", span, stride - 1), stride), 1)
    last_start = dim_expr("add", dim_expr("floordiv", dim_expr("add", size, padding - 1), stride), 1)
    return dim_expr("min", rounded_up, last_start)


def spatial_attrs(owner: str, **values: object) -> None:
    """Each of ``values`` is a non-empty tuple of positive ints (``padding`` may hold 0)."""
    for field, value in values.items():
        check_ints(owner, field, value, minimum=0 if field == "padding" else 1)
        assert isinstance(value, tuple)
        if not value:
            raise TypeError(f"{owner} {field} must hold one int, or one per spatial axis, got ()")


def per_axis(values: tuple[int, ...], count: int) -> tuple[int, ...] | None:
    """``values`` for ``count`` spatial axes: as given when ``count`` long, one value repeated
    when a single one is given, else None."""
    if len(values) == count:
        return values
    return values * count if len(values) == 1 else None


@dataclass(frozen=True, slots=True)
class Conv(Op):
    """Convolve ``x`` (``N, C, *spatial``) with ``weight`` (``O, C / groups, *kernel``), adding ``bias`` (``O``) when given.

    Type rule: ``(N, O, *out)`` with each ``out`` axis ``(d + 2 * padding - dilation * (k - 1)
    - 1) // stride + 1``; ``x``'s dtype.
    Value rule: ``torch.nn.functional.conv{1,2,3}d(x, weight, bias, stride, padding,
    dilation, groups)`` on the run's device (oneDNN's CPU kernels: bitwise reproducible at a
    fixed thread count, not across machines).
    Constraints:
        (C1) ``weight`` has ``x``'s rank, 3 to 5 (one to three spatial axes), with a static
        kernel; ``stride``, ``padding`` and ``dilation`` have one entry per spatial axis, or
        one for all of them.
        (C2) ``x`` has ``groups`` times ``weight``'s input channels, and ``groups`` divides
        the output channels.
        (C3) the dilated kernel fits each padded spatial axis (checked at run time when the
        size is symbolic).
        (C4) ``x``, ``weight`` and ``bias`` have one floating dtype (kept stricter than torch,
        whose CPU kernels take some integer dtypes).
        (C5) ``bias`` has one element per output channel.
    Example: def example(x: f32[1, 1, 3, 3], w: f32[2, 1, 2, 2]): return conv(x, w)
    Example: def example(x: f32[1, 2, 5], w: f32[2, 1, 3], b: f32[2]): return conv(x, w, b, stride=(2,), padding=(1,), groups=2)
    Refused (C1): def example(x: f32[1, 1, 3, 3], w: f32[2, 1, 2]): return conv(x, w)
    Refused (C2): def example(x: f32[1, 3, 4], w: f32[2, 2, 3]): return conv(x, w)
    Refused (C3): def example(x: f32[1, 1, 2], w: f32[1, 1, 3]): return conv(x, w)
    Refused (C4): def example(x: f32[1, 1, 4], w: f16[1, 1, 3]): return conv(x, w)
    Refused (C5): def example(x: f32[1, 1, 4], w: f32[2, 1, 3], b: f32[3]): return conv(x, w, b)
    """

    name: ClassVar[str] = "conv"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 3
    stride: tuple[int, ...] = (1,)
    padding: tuple[int, ...] = (0,)
    dilation: tuple[int, ...] = (1,)
    groups: int = 1

    def __post_init__(self) -> None:
        spatial_attrs("conv", stride=self.stride, padding=self.padding, dilation=self.dilation)
        check_int("conv", "groups", self.groups, minimum=1)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x, w, *rest = tensor_args(self.name, args)
        n = x.rank - 2
        stride, padding, dilation = (per_axis(v, n) for v in (self.stride, self.padding, self.dilation))
        if w.rank != x.rank or not 1 <= n <= 3 or stride is None or padding is None or dilation is None:
            raise TypeRuleError(
                f"conv needs x and weight of one rank 3 to 5 and stride, padding, dilation of one entry per spatial axis;"
                f" found {x}, {w}, stride {self.stride}, padding {self.padding}, dilation {self.dilation}{cite(self.name, 'C1')}"
            )
        if len({t.dtype for t in (x, w, *rest)}) != 1 or not x.dtype.is_floating:
            shown = ", ".join(str(t) for t in (x, w, *rest))
            raise TypeRuleError(f"conv needs operands of one floating dtype, found {shown}{cite(self.name, 'C4')}")
        self._check_channels(x, w)
        if rest and rest[0].shape != (w.shape[0],):
            raise TypeRuleError(f"conv bias {rest[0]} must have one element per output channel of {w}{cite(self.name, 'C5')}")
        out = []
        for axis in range(n):
            size, k = x.shape[2 + axis], w.shape[2 + axis]
            if not isinstance(k, int):
                raise TypeRuleError(f"conv needs a static kernel size, found {w}{cite(self.name, 'C1')}")
            count = window_count(size, k, stride[axis], padding[axis], dilation[axis])
            if isinstance(count, int) and count < 1:
                raise TypeRuleError(
                    f"conv kernel {k} (dilation {dilation[axis]}) does not fit spatial axis {axis} of {x} padded by"
                    f" {padding[axis]} on each side{cite(self.name, 'C3')}"
                )
            out.append(count)
        return TensorType((x.shape[0], w.shape[0], *out), x.dtype)

    def _check_channels(self, x: TensorType, w: TensorType) -> None:
        c, per_group, o = x.shape[1], w.shape[1], w.shape[0]
        wrong = isinstance(c, int) and isinstance(per_group, int) and c != per_group * self.groups
        wrong = wrong or (isinstance(o, int) and o % self.groups != 0)
        wrong = wrong or (not isinstance(c, int) and c != dim_expr("mul", per_group, self.groups))
        if wrong:
            raise TypeRuleError(
                f"conv with groups={self.groups} needs x's {c} channels to be {self.groups} x the weight's {per_group}"
                f" input channels and groups to divide the weight's {o} output channels ({x}, {w}){cite(self.name, 'C2')}"
            )


@dataclass(frozen=True, slots=True)
class ConvTranspose(Op):
    """The transposed convolution of ``x`` (``N, C, *spatial``) with ``weight`` (``C, O / groups, *kernel``), adding ``bias`` (``O``) when given.

    The gradient of ``conv`` with respect to its input: each input element spreads ``weight``
    over a window of the output, windows ``stride`` apart (an upsampling convolution).

    Type rule: ``(N, O, *out)`` with each ``out`` axis ``(d - 1) * stride - 2 * padding +
    dilation * (k - 1) + output_padding + 1``; ``x``'s dtype.
    Value rule: ``torch.nn.functional.conv_transpose{1,2,3}d(x, weight, bias, stride,
    padding, output_padding, groups, dilation)`` on the run's device (oneDNN's CPU kernels:
    bitwise reproducible at a fixed thread count).
    Constraints:
        (C1) ``weight`` has ``x``'s rank, 3 to 5, with a static kernel; ``stride``,
        ``padding``, ``output_padding`` and ``dilation`` have one entry per spatial axis, or
        one for all of them.
        (C2) ``x``'s channels are ``weight``'s first axis, which ``groups`` divides.
        (C3) each ``output_padding`` is smaller than its stride or its dilation, and each
        output axis is at least 1 long (checked at run time when a size is symbolic).
        (C4) ``x``, ``weight`` and ``bias`` have one floating dtype.
        (C5) ``bias`` has one element per output channel.
    Example: def example(x: f32[1, 1, 2, 2], w: f32[1, 2, 2, 2]): return conv_transpose(x, w, stride=(2,))
    Example: def example(x: f32[1, 2, 3], w: f32[2, 1, 3]): return conv_transpose(x, w, stride=(2,), padding=(1,), output_padding=(1,), groups=2)
    Refused (C1): def example(x: f32[1, 1, 3, 3], w: f32[1, 2, 2]): return conv_transpose(x, w)
    Refused (C2): def example(x: f32[1, 3, 4], w: f32[2, 2, 3]): return conv_transpose(x, w)
    Refused (C3): def example(x: f32[1, 1, 4], w: f32[1, 1, 3]): return conv_transpose(x, w, output_padding=(1,))
    Refused (C4): def example(x: f32[1, 1, 4], w: f16[1, 1, 3]): return conv_transpose(x, w)
    Refused (C5): def example(x: f32[1, 1, 4], w: f32[1, 2, 3], b: f32[3]): return conv_transpose(x, w, b)
    """

    name: ClassVar[str] = "conv_transpose"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 3
    stride: tuple[int, ...] = (1,)
    padding: tuple[int, ...] = (0,)
    output_padding: tuple[int, ...] = (0,)
    dilation: tuple[int, ...] = (1,)
    groups: int = 1

    def __post_init__(self) -> None:
        spatial_attrs("conv_transpose", stride=self.stride, padding=self.padding, dilation=self.dilation)
        check_ints("conv_transpose", "output_padding", self.output_padding, minimum=0)
        check_int("conv_transpose", "groups", self.groups, minimum=1)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x, w, *rest = tensor_args(self.name, args)
        n = x.rank - 2
        stride, padding, extra, dilation = (per_axis(v, n) for v in (self.stride, self.padding, self.output_padding, self.dilation))
        kernel = w.shape[2:]
        if (
            w.rank != x.rank or not 1 <= n <= 3 or None in (stride, padding, extra, dilation)
            or not all(isinstance(k, int) for k in kernel)
        ):
            raise TypeRuleError(
                f"conv_transpose needs x and weight of one rank 3 to 5 with a static kernel and stride, padding,"
                f" output_padding, dilation of one entry per spatial axis; found {x}, {w}{cite(self.name, 'C1')}"
            )
        assert stride is not None and padding is not None and extra is not None and dilation is not None
        if len({t.dtype for t in (x, w, *rest)}) != 1 or not x.dtype.is_floating:
            shown = ", ".join(str(t) for t in (x, w, *rest))
            raise TypeRuleError(f"conv_transpose needs operands of one floating dtype, found {shown}{cite(self.name, 'C4')}")
        c, per_group = x.shape[1], w.shape[1]
        if (isinstance(c, int) and isinstance(w.shape[0], int) and (c != w.shape[0] or c % self.groups)) or (
            not isinstance(c, int) and c != w.shape[0]
        ):
            raise TypeRuleError(
                f"conv_transpose needs x's {c} channels to be the weight's first axis {w.shape[0]}, divisible by"
                f" groups={self.groups} ({x}, {w}){cite(self.name, 'C2')}"
            )
        out_channels = dim_expr("mul", per_group, self.groups)
        if rest and rest[0].shape != (out_channels,):
            raise TypeRuleError(f"conv_transpose bias {rest[0]} must have one element per output channel ({out_channels}){cite(self.name, 'C5')}")
        out = []
        for axis in range(n):
            k, s, p, e, d = kernel[axis], stride[axis], padding[axis], extra[axis], dilation[axis]
            assert isinstance(k, int)
            if e >= max(s, d):
                raise TypeRuleError(
                    f"conv_transpose output_padding {e} must be smaller than stride {s} or dilation {d}{cite(self.name, 'C3')}"
                )
            size = dim_expr("add", dim_expr("mul", dim_expr("sub", x.shape[2 + axis], 1), s), d * (k - 1) + e + 1 - 2 * p)
            if isinstance(size, int) and size < 1:
                raise TypeRuleError(f"conv_transpose gives spatial axis {axis} of {x} {size} elements{cite(self.name, 'C3')}")
            out.append(size)
        return TensorType((x.shape[0], out_channels, *out), x.dtype)


CONV_OPS: tuple[type[Op], ...] = (Conv, ConvTranspose)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def conv(
    x: ExprLike, weight: ExprLike, bias: ExprLike | None = None, *, stride: tuple[int, ...] = (1,),
    padding: tuple[int, ...] = (0,), dilation: tuple[int, ...] = (1,), groups: int = 1, span: Span | None = None,
) -> Call:
    """``F.conv1d``/``conv2d``/``conv3d`` by the spatial rank; a one-entry stride, padding or
    dilation applies to every spatial axis."""
    operands = (x, weight) if bias is None else (x, weight, bias)
    return apply(Conv(stride, padding, dilation, groups), *operands, span=span)


def conv_transpose(
    x: ExprLike, weight: ExprLike, bias: ExprLike | None = None, *, stride: tuple[int, ...] = (1,),
    padding: tuple[int, ...] = (0,), output_padding: tuple[int, ...] = (0,), dilation: tuple[int, ...] = (1,),
    groups: int = 1, span: Span | None = None,
) -> Call:
    """``F.conv_transpose1d``/``2d``/``3d`` by the spatial rank (one-entry tuples apply to every axis)."""
    operands = (x, weight) if bias is None else (x, weight, bias)
    return apply(ConvTranspose(stride, padding, output_padding, dilation, groups), *operands, span=span)
