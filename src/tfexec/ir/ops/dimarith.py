"""Dim arithmetic as runtime ops: ``dim_add`` … ``dim_max`` on rank-0 integer operands.

They compute what ``resolve_dim`` computes in a shape position (one implementation:
``tfexec.ir.dims.apply_dim_op``). Builders never fold them: they are runtime ops.
"""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Op, Operand, TypeRuleError
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class DimOp(Op):
    """Base of ``dim_*`` ops: two rank-0 integer operands → rank-0 int64."""

    dim_op: ClassVar[str] = ""
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2

    def infer(self, args: tuple[Operand, ...]) -> Type:
        for i, t in enumerate(tensor_args(self.name, args)):
            if t.rank != 0 or not t.dtype.is_integral:
                raise TypeRuleError(f"{self.name} operand {i} must be a rank-0 integer, found {t}")
        return TensorType((), DType.int64)


@dataclass(frozen=True, slots=True)
class DimAdd(DimOp):
    """``a + b``."""

    name: ClassVar[str] = "dim_add"
    dim_op: ClassVar[str] = "add"


@dataclass(frozen=True, slots=True)
class DimSub(DimOp):
    """``a - b``."""

    name: ClassVar[str] = "dim_sub"
    dim_op: ClassVar[str] = "sub"


@dataclass(frozen=True, slots=True)
class DimMul(DimOp):
    """``a * b``."""

    name: ClassVar[str] = "dim_mul"
    dim_op: ClassVar[str] = "mul"


@dataclass(frozen=True, slots=True)
class DimFloorDiv(DimOp):
    """``a // b`` (floor division; by zero is an error)."""

    name: ClassVar[str] = "dim_floordiv"
    dim_op: ClassVar[str] = "floordiv"


@dataclass(frozen=True, slots=True)
class DimMod(DimOp):
    """``a % b`` (sign of the divisor; by zero is an error)."""

    name: ClassVar[str] = "dim_mod"
    dim_op: ClassVar[str] = "mod"


@dataclass(frozen=True, slots=True)
class DimMin(DimOp):
    """``min(a, b)``."""

    name: ClassVar[str] = "dim_min"
    dim_op: ClassVar[str] = "min"


@dataclass(frozen=True, slots=True)
class DimMax(DimOp):
    """``max(a, b)``."""

    name: ClassVar[str] = "dim_max"
    dim_op: ClassVar[str] = "max"


DIM_OPS: tuple[type[DimOp], ...] = (DimAdd, DimSub, DimMul, DimFloorDiv, DimMod, DimMin, DimMax)
