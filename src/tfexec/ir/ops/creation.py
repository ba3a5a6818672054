"""Creation ops: ``full`` and ``arange`` (no operands; made on the run's device)."""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dims import ShapeDim, is_shape_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Op, Operand, TypeRuleError
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class Full(Op):
    """``torch.full(shape, value, dtype)``."""

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
        if isinstance(self.value, float) and not self.dtype.is_floating and self.value != int(self.value):
            raise TypeRuleError(f"full value {self.value} does not fit dtype {self.dtype}")
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
            raise TypeRuleError("arange is not defined for bool")
        return TensorType((self.extent,), self.dtype)
