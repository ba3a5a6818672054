"""Logical reductions, norms and counts: ``any``, ``all``, ``vector_norm``, ``histc``.

They reduce over ``axes`` as ``reduce`` does (``axes=None``: every axis; ``axes=()``: none,
elementwise), with ``keepdims`` keeping each reduced axis as size 1.
"""

import math
from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dims import ShapeDim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.attrs import check_bool, check_int, check_number, check_optional_ints
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.ops.reduction import reduced_axes
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


def reduced_shape(shape: tuple[ShapeDim, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[ShapeDim, ...]:
    """``shape`` without ``axes`` (each kept as 1 when ``keepdims``)."""
    return tuple((1 if i in axes else d) for i, d in enumerate(shape) if keepdims or i not in axes)


@dataclass(frozen=True, slots=True)
class LogicalReduceOp(Op):
    """Base of ``any`` and ``all``: whether any (every) element over ``axes`` is nonzero.

    Type rule: ``x``'s shape without the reduced axes (kept as size 1 when ``keepdims``);
    dtype ``b1``, except ``u8`` for a ``u8`` operand (as torch keeps it).
    Value rule: ``torch.{op}(x, dim=axes, keepdim=keepdims)`` on the run's device; over a
    zero-length axis ``any`` is false and ``all`` true.
    Constraints:
        (C1) every axis is in range for ``x``'s rank and none is named twice.
    Example: def example(x: f32[2, 3]): return {op}(x, axes=(1,))
    Example: def example(x: b1[2, 2]): return {op}(x)
    Refused (C1): def example(x: f32[2, 3]): return {op}(x, axes=(2,))
    """

    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    axes: tuple[int, ...] | None = None
    keepdims: bool = False

    def __post_init__(self) -> None:
        check_optional_ints(self.name, "axes", self.axes)
        check_bool(self.name, "keepdims", self.keepdims)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        axes = reduced_axes(self, self.axes, x.rank, "C1")
        dtype = DType.uint8 if x.dtype is DType.uint8 else DType.bool
        return TensorType(reduced_shape(x.shape, axes, self.keepdims), dtype)


@dataclass(frozen=True, slots=True)
class ReduceAny(LogicalReduceOp):
    """Whether any element of ``x`` over ``axes`` is nonzero."""

    name: ClassVar[str] = "any"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class ReduceAll(LogicalReduceOp):
    """Whether every element of ``x`` over ``axes`` is nonzero."""

    name: ClassVar[str] = "all"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class VectorNorm(Op):
    """The ``ord``-norm of ``x`` over ``axes``: ``sum(|x| ** ord) ** (1 / ord)``.

    ``ord=inf`` is the largest ``|x|``, ``ord=-inf`` the smallest, ``ord=0`` the number of
    nonzero elements.

    Type rule: ``x``'s shape without the reduced axes (kept as size 1 when ``keepdims``);
    ``x``'s dtype.
    Value rule: ``torch.linalg.vector_norm(x, ord, dim=axes, keepdim=keepdims)`` on the
    run's device (a parallel sum: bitwise reproducible at a fixed thread count).
    Constraints:
        (C1) every axis is in range for ``x``'s rank and none is named twice.
        (C2) ``x`` is floating.
        (C3) a negative or infinite ``ord`` reduces no zero-length axis (there is no
        value to return).
    Example: def example(x: f32[2, 3]): return vector_norm(x, axes=(1,))
    Example: def example(x: f32[4]): return vector_norm(x, ord=float("inf"))
    Refused (C1): def example(x: f32[2, 3]): return vector_norm(x, axes=(0, 0))
    Refused (C2): def example(x: i32[3]): return vector_norm(x)
    Refused (C3): def example(x: f32[2, 0]): return vector_norm(x, ord=float("inf"), axes=(1,))
    """

    name: ClassVar[str] = "vector_norm"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    ord: float = 2.0
    axes: tuple[int, ...] | None = None
    keepdims: bool = False

    def __post_init__(self) -> None:
        check_number("vector_norm", "ord", self.ord)
        if isinstance(self.ord, float) and math.isnan(self.ord):
            raise TypeError("vector_norm ord must not be NaN")
        check_optional_ints("vector_norm", "axes", self.axes)
        check_bool("vector_norm", "keepdims", self.keepdims)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        axes = reduced_axes(self, self.axes, x.rank, "C1")
        if not x.dtype.is_floating:
            raise TypeRuleError(f"vector_norm needs a floating operand, found {x} (cast it first){cite(self.name, 'C2')}")
        if self.ord < 0 or math.isinf(self.ord):
            for a in axes:
                if x.shape[a] == 0:
                    raise TypeRuleError(
                        f"vector_norm with ord={self.ord} over axis {a} of {x} has no value: the axis has length 0"
                        f"{cite(self.name, 'C3')}"
                    )
        return TensorType(reduced_shape(x.shape, axes, self.keepdims), x.dtype)


@dataclass(frozen=True, slots=True)
class Histc(Op):
    """A histogram of every element of ``x``: ``bins`` equal-width bins over ``[min, max]``.

    Element ``v`` counts in bin ``floor((v - min) * bins / (max - min))``, ``v == max`` in the
    last bin; elements outside ``[min, max]`` and NaNs count nowhere. With ``min == max``
    (the default ``0, 0``) the range is ``x``'s own smallest and largest element (widened
    by 1 on each side when they are equal). Mixture-of-experts routers count the tokens per
    expert with it.

    Type rule: ``[bins]``, ``x``'s dtype (counts are stored as ``x``'s floats, as torch does).
    Value rule: ``torch.histc(x, bins, min, max)`` on the run's device (exact: counts).
    Constraints:
        (C1) ``x`` is floating (torch's kernels have no integer histogram).
        (C2) ``min <= max``.
        (C3) with ``min == max``, ``x``'s smallest and largest elements are finite (checked
        when the program runs: they are the range).
    Example: def example(x: f32[2, 3]): return histc(x, bins=4, min=0.0, max=2.0)
    Example: def example(x: f32[5]): return histc(x, bins=3)
    Refused (C1): def example(x: i64[5]): return histc(x, bins=3, min=0.0, max=4.0)
    Refused (C2): def example(x: f32[5]): return histc(x, bins=3, min=2.0, max=1.0)
    Refused (C3): def example(x: f32[2]): return histc(constant([0.0, float("inf")], dtype=f32), bins=2)
    """

    name: ClassVar[str] = "histc"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    bins: int = 100
    min: float = 0.0
    max: float = 0.0

    def __post_init__(self) -> None:
        check_int("histc", "bins", self.bins, minimum=1)
        for field in ("min", "max"):
            value = getattr(self, field)
            check_number("histc", field, value)
            if not math.isfinite(value):
                raise TypeError(f"histc {field} must be finite, got {value!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        if not x.dtype.is_floating:
            raise TypeRuleError(f"histc needs a floating operand, found {x} (cast it first){cite(self.name, 'C1')}")
        if self.min > self.max:
            raise TypeRuleError(f"histc range [{self.min}, {self.max}] is empty: min must not exceed max{cite(self.name, 'C2')}")
        return TensorType((self.bins,), x.dtype)


AGGREGATE_OPS: tuple[type[Op], ...] = (ReduceAny, ReduceAll, VectorNorm, Histc)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def any(x: ExprLike, *, axes: tuple[int, ...] | None = None, keepdims: bool = False, span: Span | None = None) -> Call:  # noqa: A001
    """``torch.any(x, axes, keepdims)`` (``axes=None``: every axis)."""
    return apply(ReduceAny(axes, keepdims), x, span=span)


def all(x: ExprLike, *, axes: tuple[int, ...] | None = None, keepdims: bool = False, span: Span | None = None) -> Call:  # noqa: A001
    """``torch.all(x, axes, keepdims)`` (``axes=None``: every axis)."""
    return apply(ReduceAll(axes, keepdims), x, span=span)


def vector_norm(
    x: ExprLike, *, ord: float = 2.0, axes: tuple[int, ...] | None = None, keepdims: bool = False,  # noqa: A002
    span: Span | None = None,
) -> Call:
    """``torch.linalg.vector_norm(x, ord, axes, keepdims)``; floating input only."""
    return apply(VectorNorm(ord, axes, keepdims), x, span=span)


def histc(x: ExprLike, *, bins: int = 100, min: float = 0.0, max: float = 0.0, span: Span | None = None) -> Call:  # noqa: A002
    """``torch.histc(x, bins, min, max)``: counts of ``x``'s elements in ``bins`` equal bins
    over ``[min, max]`` (``min == max``: ``x``'s own range); floating input only."""
    return apply(Histc(bins, float(min), float(max)), x, span=span)
