"""Pooling and resampling: ``max_pool``, ``avg_pool``, ``adaptive_avg_pool``, ``interpolate``.

Each works on the trailing 1 to 3 spatial axes of ``(N, C, *spatial)`` (or ``(C, *spatial)``
for the pools), with the window arithmetic of ``conv`` (``window_count``). Floating
operands only: kept stricter than torch, whose CPU pools take some integer dtypes.
"""

from dataclasses import dataclass
from typing import ClassVar, Literal

from tfexec.ir.dims import ShapeDim
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.attrs import check_bool, check_choice, check_dims, check_ints, check_optional_int
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite
from tfexec.ir.ops.conv import per_axis, spatial_attrs, window_count
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type

InterpolateMode = Literal["nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear"]
INTERPOLATE_MODES: tuple[str, ...] = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear")
LINEAR_AXES: dict[str, int] = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
"""The interpolating modes and the number of spatial axes each works on."""


def _floating(op: Op, x: TensorType, label: str) -> None:
    if not x.dtype.is_floating:
        raise TypeRuleError(f"{op.name} needs a floating operand, found {x} (cast it first){cite(op.name, label)}")


def _spatial_rank(op: Op, x: TensorType, count: int, batched_only: bool, label: str) -> None:
    ranks = (count + 2,) if batched_only else (count + 1, count + 2)
    if not 1 <= count <= 3 or x.rank not in ranks:
        shape = "(N, C, *spatial)" if batched_only else "(N, C, *spatial) or (C, *spatial)"
        raise TypeRuleError(
            f"{op.name} over {count} spatial axis/axes needs x of shape {shape}, found {x}{cite(op.name, label)}"
        )


@dataclass(frozen=True, slots=True)
class PoolOp(Op):
    """Base of ``max_pool`` and ``avg_pool``: one value per ``kernel`` window, windows ``stride`` apart.

    Type rule: ``x``'s shape with each spatial axis ``d`` replaced by its window count
    ``(d + 2 * padding - dilation * (k - 1) - 1) // stride + 1`` (rounded up with
    ``ceil_mode``, as long as the last window starts inside the input or its left padding);
    ``x``'s dtype.
    Constraints:
        (C1) ``kernel`` has 1 to 3 entries and ``x`` is ``(N, C, *spatial)`` or ``(C,
        *spatial)`` for that many spatial axes; ``stride``, ``padding`` (and ``dilation``)
        have one entry per spatial axis, or one for all of them.
        (C2) ``x`` is floating.
        (C3) ``padding`` is at most half the kernel (``kernel // 2``, dilation aside, as torch
        checks it), and the windows fit the padded axis (checked at run time when the size
        is symbolic).
    Refused (C1): def example(x: f32[4]): return {op}(x, kernel=(2, 2))
    Refused (C2): def example(x: i32[1, 4]): return {op}(x, kernel=(2,))
    Refused (C3): def example(x: f32[1, 4]): return {op}(x, kernel=(2,), padding=(2,))
    """

    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kernel: tuple[int, ...] = (1,)
    stride: tuple[int, ...] | None = None
    padding: tuple[int, ...] = (0,)
    ceil_mode: bool = False

    def check_attributes(self) -> None:
        """The attribute checks every pool shares."""
        check_ints(self.name, "kernel", self.kernel, minimum=1)
        spatial_attrs(self.name, padding=self.padding)
        if self.stride is not None:
            spatial_attrs(self.name, stride=self.stride)
        check_bool(self.name, "ceil_mode", self.ceil_mode)

    def windows(self, x: TensorType, dilation: tuple[int, ...], max_padding: tuple[int, ...]) -> tuple[ShapeDim, ...]:
        """``x``'s shape with each spatial axis replaced by its window count (constraints C1 and C3)."""
        n = len(self.kernel)
        _spatial_rank(self, x, n, False, "C1")
        stride = per_axis(self.stride if self.stride is not None else self.kernel, n)
        padding = per_axis(self.padding, n)
        if stride is None or padding is None or len(dilation) != n:
            raise TypeRuleError(
                f"{self.name} with kernel {self.kernel} needs stride {self.stride} and padding {self.padding} of"
                f" {n} entries (or one){cite(self.name, 'C1')}"
            )
        _floating(self, x, "C2")
        lead = x.rank - n
        out = list(x.shape)
        for axis in range(n):
            if padding[axis] > max_padding[axis]:
                raise TypeRuleError(
                    f"{self.name} padding {padding[axis]} is more than half the kernel {self.kernel[axis]}"
                    f" on spatial axis {axis}{cite(self.name, 'C3')}"
                )
            count = window_count(x.shape[lead + axis], self.kernel[axis], stride[axis], padding[axis], dilation[axis], self.ceil_mode)
            if isinstance(count, int) and count < 1:
                raise TypeRuleError(
                    f"{self.name} kernel {self.kernel[axis]} does not fit spatial axis {axis} of {x} padded by"
                    f" {padding[axis]}{cite(self.name, 'C3')}"
                )
            out[lead + axis] = count
        return tuple(out)


@dataclass(frozen=True, slots=True)
class MaxPool(PoolOp):
    """The maximum of each window of ``x`` (NaN propagates), ``dilation`` apart within a window; padding never wins.

    Value rule: ``torch.nn.functional.max_pool{1,2,3}d(x, kernel, stride, padding,
    dilation, ceil_mode)`` on the run's device (``stride`` defaults to ``kernel``).
    Example: def example(x: f32[1, 4, 4]): return max_pool(x, kernel=(2, 2))
    Example: def example(x: f32[1, 5]): return max_pool(x, kernel=(3,), stride=(2,), padding=(1,), ceil_mode=True)
    """

    name: ClassVar[str] = "max_pool"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    dilation: tuple[int, ...] = (1,)

    def __post_init__(self) -> None:
        self.check_attributes()
        spatial_attrs(self.name, dilation=self.dilation)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        n = len(self.kernel)
        dilation = per_axis(self.dilation, n) or ()
        return TensorType(self.windows(x, dilation, tuple(k // 2 for k in self.kernel)), x.dtype)


@dataclass(frozen=True, slots=True)
class AvgPool(PoolOp):
    """The mean of each window of ``x``.

    ``count_include_pad`` counts padded positions in the divisor; ``divisor_override``, when
    given, replaces the divisor.

    Value rule: ``torch.nn.functional.avg_pool{1,2,3}d(x, kernel, stride, padding,
    ceil_mode, count_include_pad, divisor_override)`` on the run's device (``stride``
    defaults to ``kernel``; ``avg_pool1d`` takes no ``divisor_override``, so a 1-d pool with
    one runs as a 2-d pool over a unit axis).
    Example: def example(x: f32[1, 4, 4]): return avg_pool(x, kernel=(2, 2))
    Example: def example(x: f32[1, 5]): return avg_pool(x, kernel=(3,), stride=(2,), padding=(1,), count_include_pad=False)
    """

    name: ClassVar[str] = "avg_pool"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    count_include_pad: bool = True
    divisor_override: int | None = None

    def __post_init__(self) -> None:
        self.check_attributes()
        check_bool(self.name, "count_include_pad", self.count_include_pad)
        check_optional_int(self.name, "divisor_override", self.divisor_override, minimum=1)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        n = len(self.kernel)
        half = tuple(k // 2 for k in self.kernel)
        return TensorType(self.windows(x, (1,) * n, half), x.dtype)


@dataclass(frozen=True, slots=True)
class AdaptiveAvgPool(Op):
    """The mean of ``output_size`` windows per spatial axis, their bounds spread evenly over the axis.

    Output element ``i`` of an axis of size ``d`` averages inputs ``floor(i * d / o)`` to
    ``ceil((i + 1) * d / o) - 1``. ``output_size=(1, 1)`` is global average pooling.

    Type rule: ``x``'s shape with the spatial axes replaced by ``output_size``; ``x``'s dtype.
    Value rule: ``torch.nn.functional.adaptive_avg_pool{1,2,3}d(x, output_size)`` on the
    run's device.
    Constraints:
        (C1) ``output_size`` has 1 to 3 entries and ``x`` is ``(N, C, *spatial)`` or ``(C,
        *spatial)`` for that many spatial axes.
        (C2) ``x`` is floating.
        (C3) no spatial axis of ``x`` is empty (checked at run time when it is symbolic).
    Example: def example(x: f32[1, 3, 4]): return adaptive_avg_pool(x, output_size=(2, 3))
    Refused (C1): def example(x: f32[4]): return adaptive_avg_pool(x, output_size=(1, 1))
    Refused (C2): def example(x: i32[1, 4]): return adaptive_avg_pool(x, output_size=(1,))
    Refused (C3): def example(x: f32[1, 0]): return adaptive_avg_pool(x, output_size=(1,))
    """

    name: ClassVar[str] = "adaptive_avg_pool"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    output_size: tuple[int, ...] = (1,)

    def __post_init__(self) -> None:
        check_ints(self.name, "output_size", self.output_size, minimum=1)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        n = len(self.output_size)
        _spatial_rank(self, x, n, False, "C1")
        _floating(self, x, "C2")
        lead = x.rank - n
        for axis in range(n):
            if x.shape[lead + axis] == 0:
                raise TypeRuleError(f"adaptive_avg_pool cannot pool the empty spatial axis {axis} of {x}{cite(self.name, 'C3')}")
        return TensorType(x.shape[:lead] + self.output_size, x.dtype)


@dataclass(frozen=True, slots=True)
class Interpolate(Op):
    """Resize the spatial axes of ``x`` (``N, C, *spatial``) to ``size``, by nearest-neighbour sampling or interpolation.

    ``mode="nearest"``: output index ``i`` of an axis of input size ``d`` reads input
    ``floor(i * s)`` (``"nearest-exact"``: ``floor((i + 0.5) * s)``), where ``s`` is ``d / size``
    or, when ``scales`` is given, ``1 / scales[axis]`` (what ``F.interpolate(scale_factor=...)``
    records). ``"linear"``, ``"bilinear"``, ``"bicubic"`` and ``"trilinear"`` interpolate between
    neighbours, with ``align_corners`` as in ``F.interpolate``.

    Type rule: ``x``'s shape with the spatial axes replaced by ``size``; ``x``'s dtype.
    Value rule: ``aten.upsample_<mode><n>d`` (``_upsample_nearest_exact<n>d`` for
    ``"nearest-exact"``) of ``x``, ``size``, ``align_corners`` (interpolating modes) and
    ``scales``, on the run's device: what ``torch.nn.functional.interpolate(x, ..., mode=mode)``
    computes. (The CPU kernels of the interpolating modes run in parallel; their sums are
    bitwise reproducible at a fixed thread count.)
    Constraints:
        (C1) ``size`` has 1 to 3 entries and ``x`` is ``(N, C, *spatial)`` for that many
        spatial axes; ``scales``, when given, has one positive entry per spatial axis.
        (C2) ``x`` is floating.
        (C3) no output size is 0 and no input spatial axis is empty (checked at run time when
        symbolic).
        (C4) an interpolating mode has its number of spatial axes (``linear`` 1, ``bilinear``
        and ``bicubic`` 2, ``trilinear`` 3), and ``align_corners`` is only given with one.
    Example: def example(x: f32[1, 1, 2, 2]): return interpolate(x, size=(3, 4))
    Example: def example(x: f32[1, 1, 3]): return interpolate(x, size=(6,), mode="nearest-exact", scales=(2.0,))
    Example: def example(x: f32[1, 1, 2, 2]): return interpolate(x, size=(3, 3), mode="bilinear", align_corners=True)
    Refused (C1): def example(x: f32[1, 2]): return interpolate(x, size=(4,))
    Refused (C2): def example(x: i32[1, 1, 2]): return interpolate(x, size=(4,))
    Refused (C3): def example(x: f32[1, 1, 2]): return interpolate(x, size=(0,))
    Refused (C4): def example(x: f32[1, 1, 2]): return interpolate(x, size=(4,), mode="bilinear")
    """

    name: ClassVar[str] = "interpolate"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    size: tuple[ShapeDim, ...] = (1,)
    mode: InterpolateMode = "nearest"
    scales: tuple[float, ...] | None = None
    align_corners: bool = False

    def __post_init__(self) -> None:
        check_dims(self.name, "size", self.size)
        check_choice(self.name, "mode", self.mode, INTERPOLATE_MODES)
        check_bool(self.name, "align_corners", self.align_corners)
        if self.scales is not None and (
            not isinstance(self.scales, tuple)
            or not all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in self.scales)
        ):
            raise TypeError(f"interpolate scales must be None or a tuple of numbers, got {self.scales!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        n = len(self.size)
        _spatial_rank(self, x, n, True, "C1")
        if self.scales is not None and (len(self.scales) != n or any(s <= 0 for s in self.scales)):
            raise TypeRuleError(f"interpolate scales {self.scales} must hold {n} positive number(s){cite(self.name, 'C1')}")
        _floating(self, x, "C2")
        wanted = LINEAR_AXES.get(self.mode)
        if (wanted is not None and wanted != n) or (wanted is None and self.align_corners):
            raise TypeRuleError(
                f"interpolate mode {self.mode!r} over {n} spatial axis/axes"
                f"{' with align_corners' if self.align_corners else ''}: {self.mode!r} "
                f"{'works on ' + str(wanted) + ' spatial axis/axes' if wanted else 'takes no align_corners'}"
                f"{cite(self.name, 'C4')}"
            )
        for axis, (d, o) in enumerate(zip(x.shape[2:], self.size)):
            if d == 0 or o == 0:
                raise TypeRuleError(
                    f"interpolate cannot resize spatial axis {axis} of {x} from {d} to {o} elements{cite(self.name, 'C3')}"
                )
        return TensorType(x.shape[:2] + self.size, x.dtype)


POOL_OPS: tuple[type[Op], ...] = (MaxPool, AvgPool, AdaptiveAvgPool, Interpolate)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def max_pool(
    x: ExprLike, *, kernel: tuple[int, ...], stride: tuple[int, ...] | None = None, padding: tuple[int, ...] = (0,),
    ceil_mode: bool = False, dilation: tuple[int, ...] = (1,), span: Span | None = None,
) -> Call:
    """``F.max_pool{1,2,3}d`` over ``len(kernel)`` spatial axes (``stride`` defaults to ``kernel``)."""
    return apply(MaxPool(kernel, stride, padding, ceil_mode, dilation), x, span=span)


def avg_pool(
    x: ExprLike, *, kernel: tuple[int, ...], stride: tuple[int, ...] | None = None, padding: tuple[int, ...] = (0,),
    ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None,
    span: Span | None = None,
) -> Call:
    """``F.avg_pool{1,2,3}d`` over ``len(kernel)`` spatial axes (``stride`` defaults to ``kernel``)."""
    return apply(AvgPool(kernel, stride, padding, ceil_mode, count_include_pad, divisor_override), x, span=span)


def adaptive_avg_pool(x: ExprLike, *, output_size: tuple[int, ...], span: Span | None = None) -> Call:
    """``F.adaptive_avg_pool{1,2,3}d(x, output_size)``."""
    return apply(AdaptiveAvgPool(output_size), x, span=span)


def interpolate(
    x: ExprLike, *, size: tuple[ShapeDim, ...], mode: InterpolateMode = "nearest", scales: tuple[float, ...] | None = None,
    align_corners: bool = False, span: Span | None = None,
) -> Call:
    """``F.interpolate`` of the spatial axes to ``size`` (nearest, or linear/bilinear/bicubic/trilinear)."""
    return apply(Interpolate(size, mode, scales, align_corners), x, span=span)
