"""Creation ops: ``full`` and ``arange`` (no operands; made on the run's device)."""

from dataclasses import dataclass
from typing import ClassVar

import torch

from tfexec.ir.dims import ShapeDim, is_shape_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Op, Operand, TypeRuleError
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class Full(Op):
    """``torch.full(shape, value, dtype)``.

    (C1) ``value`` converts to ``dtype`` as torch converts it: a float given for an integer
    dtype truncates toward zero, anything given for ``bool`` is ``value != 0``, a value out
    of the dtype's range (``300`` for ``i8``, ``inf`` for ``i32``, ``70000.0`` for ``f16``)
    is an error — whichever torch itself refuses when it fills several elements. (torch's
    one-element fill is laxer and rounds an out-of-range float to ``inf``; the rule does
    not depend on the shape, so it keeps the general answer.)
    """

    name: ClassVar[str] = "full"
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
    """``torch.arange(extent, dtype)``: ``0, 1, …, extent-1``."""

    name: ClassVar[str] = "arange"
    extent: ShapeDim = 0
    dtype: DType = DType.int64

    def __post_init__(self) -> None:
        if not is_shape_dim(self.extent):
            raise TypeError(f"arange extent must be an int/DimVar/DimExpr, got {self.extent!r}")
        if not isinstance(self.dtype, DType):
            raise TypeError(f"arange dtype must be a DType, got {self.dtype!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        if self.dtype is DType.bool:
            raise TypeRuleError("arange needs an integer or floating dtype, found b1 (torch rejects it)")
        return TensorType((self.extent,), self.dtype)
