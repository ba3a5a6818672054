"""Creation ops: ``full`` and ``arange`` (no operands; made on the run's device)."""

from dataclasses import dataclass
from typing import ClassVar

import torch

from tfexec.ir.dims import ShapeDim, is_shape_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import DTypeLike, Operand as ExprLike, apply, as_dtype
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class Full(Op):
    """A tensor of ``shape`` and ``dtype`` with every element ``value``.

    Type rule: ``shape``, ``dtype``.
    Value rule: ``torch.full(shape, value, dtype=dtype)`` on the run's device (torch's
    default device when the run has no tensor input), ``shape`` resolved through the run's
    dim bindings.
    Constraints:
        (C1) ``value`` converts to ``dtype`` as torch converts it: a float given for an
        integer dtype truncates toward zero, anything given for ``b1`` is ``value != 0``, a
        value out of the dtype's range (``300`` for ``i8``, ``inf`` for ``i32``, ``70000.0``
        for ``f16``) is an error — whichever torch itself refuses when it fills several
        elements. (torch's one-element fill is laxer and rounds an out-of-range float to
        ``inf``; the rule does not depend on the shape, so it keeps the general answer.)
    Example: def example(): return full(shape=(2, 3), value=1.5, dtype=f32)
    Example: def example(): return full(shape=(3,), value=2.7, dtype=i32)
    Refused (C1): def example(): return full(shape=(2,), value=300, dtype=i8)
    """

    name: ClassVar[str] = "full"
    max_args: ClassVar[int | None] = 0
    shape: tuple[ShapeDim, ...] = ()
    value: bool | int | float = 0.0
    dtype: DType = DType.float32

    def __post_init__(self) -> None:
        if not isinstance(self.shape, tuple) or not all(is_shape_dim(d) for d in self.shape):
            raise TypeError(f"full shape must be a tuple of int/DimVar/DimExpr, got {self.shape!r}")
        if not isinstance(self.value, (bool, int, float)):
            raise TypeError(f"full value must be a bool, int or float, got {self.value!r}")
        if not isinstance(self.dtype, DType):
            raise TypeError(f"full dtype must be a DType, got {self.dtype!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        try:  # (C1): torch's own scalar conversion decides (two elements: its general fill path)
            torch.full((2,), self.value, dtype=self.dtype.torch, device="cpu")
        except (RuntimeError, OverflowError) as exc:
            raise TypeRuleError(f"full (C1): value {self.value!r} does not fit dtype {self.dtype}: {exc}") from None
        return TensorType(self.shape, self.dtype)


@dataclass(frozen=True, slots=True)
class Arange(Op):
    """The sequence ``0, 1, …, extent - 1`` as a 1-D tensor of ``dtype``.

    Type rule: ``[extent]``, ``dtype`` (default ``i64``).
    Value rule: ``torch.arange(extent, dtype=dtype)`` on the run's device, ``extent``
    resolved through the run's dim bindings.
    Constraints:
        (C1) ``dtype`` is an integer or floating dtype (torch refuses ``b1``).
    Example: def example(): return arange(extent=4)
    Example: def example(): return arange(extent=3, dtype=f16)
    Refused (C1): def example(): return arange(extent=3, dtype=b1)
    """

    name: ClassVar[str] = "arange"
    max_args: ClassVar[int | None] = 0
    extent: ShapeDim = 0
    dtype: DType = DType.int64

    def __post_init__(self) -> None:
        if not is_shape_dim(self.extent):
            raise TypeError(f"arange extent must be an int/DimVar/DimExpr, got {self.extent!r}")
        if not isinstance(self.dtype, DType):
            raise TypeError(f"arange dtype must be a DType, got {self.dtype!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        if self.dtype is DType.bool:
            raise TypeRuleError(f"arange needs an integer or floating dtype, found b1 (torch rejects it){cite(self.name, 'C1')}")
        return TensorType((self.extent,), self.dtype)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def full(*, shape: tuple[ShapeDim, ...], value: bool | int | float, dtype: DTypeLike, span: Span | None = None) -> Call:
    """``torch.full(shape, value, dtype)`` on the run's device."""
    return apply(Full(shape, value, as_dtype(dtype, "full dtype")), span=span)


def arange(*, extent: ShapeDim, dtype: DTypeLike = DType.int64, span: Span | None = None) -> Call:
    """``torch.arange(extent, dtype)`` on the run's device."""
    return apply(Arange(extent, as_dtype(dtype, "arange dtype")), span=span)
