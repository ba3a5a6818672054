"""Scans: ``cumsum`` and ``cumprod`` along one axis (running sums and products).

The running positions of position masks (``cumsum`` of a padding mask gives position ids)
and of packed sequences are what models use them for.
"""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import DTypeLike, Operand as ExprLike, apply, as_dtype
from tfexec.ir.ops.attrs import check_int
from tfexec.ir.ops.base import Op, Operand, normalize_axis
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class ScanOp(Op):
    """Base of the scans: element ``i`` along ``axis`` combines elements ``0..i``.

    Type rule: ``x``'s shape; the dtype is ``dtype`` when given, else ``x``'s, except that an
    integer or ``b1`` operand gives ``i64`` (as torch accumulates integers).
    Value rule: ``torch.{op}(x, dim=axis, dtype=dtype)`` on the run's device (``x`` is
    converted to ``dtype`` first, as torch does). A rank-0 ``x`` is its own scan (axis 0 or
    -1, as torch allows). Floating scans accumulate sequentially on CPU: bitwise
    reproducible.
    Constraints:
        (C1) ``axis`` is in range for ``x``'s rank (a rank-0 ``x`` counts as rank 1).
    Example: def example(x: f32[2, 3]): return {op}(x, axis=1)
    Example: def example(x: b1[4]): return {op}(x, axis=0)
    Refused (C1): def example(x: f32[2, 3]): return {op}(x, axis=2)
    """

    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    axis: int = 0
    dtype: DType | None = None

    def __post_init__(self) -> None:
        check_int(self.name, "axis", self.axis)
        if self.dtype is not None and not isinstance(self.dtype, DType):
            raise TypeError(f"{self.name} dtype must be None or a DType (f32, i64, ...), got {self.dtype!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        normalize_axis(self, self.axis, max(x.rank, 1), "C1")
        if self.dtype is not None:
            return TensorType(x.shape, self.dtype)
        return TensorType(x.shape, x.dtype if x.dtype.is_floating else DType.int64)


@dataclass(frozen=True, slots=True)
class Cumsum(ScanOp):
    """The running sum of ``x`` along ``axis``."""

    name: ClassVar[str] = "cumsum"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class Cumprod(ScanOp):
    """The running product of ``x`` along ``axis``."""

    name: ClassVar[str] = "cumprod"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


SCAN_OPS: tuple[type[Op], ...] = (Cumsum, Cumprod)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def cumsum(x: ExprLike, *, axis: int, dtype: DTypeLike | None = None, span: Span | None = None) -> Call:
    """``torch.cumsum(x, axis, dtype)``: integers and bools accumulate as ``i64``."""
    return apply(Cumsum(axis, None if dtype is None else as_dtype(dtype, "cumsum dtype")), x, span=span)


def cumprod(x: ExprLike, *, axis: int, dtype: DTypeLike | None = None, span: Span | None = None) -> Call:
    """``torch.cumprod(x, axis, dtype)``: integers and bools accumulate as ``i64``."""
    return apply(Cumprod(axis, None if dtype is None else as_dtype(dtype, "cumprod dtype")), x, span=span)
