"""Dim arithmetic as runtime ops: ``dim_add`` … ``dim_max`` on rank-0 integer operands.

They compute what ``resolve_dim`` computes in a shape position (one implementation:
``tfexec.ir.dims.apply_dim_op``). Builders never fold them: they are runtime ops.
"""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class DimOp(Op):
    """Base of the ``dim_*`` ops: two rank-0 integer operands give a rank-0 ``i64``.

    Type rule: ``i64[()]``.
    Value rule: Python integer arithmetic on the operands' values, refused (never wrapped)
    where the result would leave i64 (``-2**63 .. 2**63-1``), exactly what
    ``resolve_dim`` computes for the same operator in a shape position (one implementation,
    ``tfexec.ir.dims.apply_dim_op``); evaluator spec §4. Builders never fold it: it is a
    runtime op.
    Constraints:
        (C1) both operands are rank-0 integers.
    Example: def example(): return {op}(7, -3)
    Example: def example(): return {op}(-7, 2)
    Refused (C1): def example(a: f32[()]): return {op}(a, 1)
    """

    dim_op: ClassVar[str] = ""
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2

    def infer(self, args: tuple[Operand, ...]) -> Type:
        for i, t in enumerate(tensor_args(self.name, args)):
            if t.rank != 0 or not t.dtype.is_integral:
                raise TypeRuleError(f"{self.name} operand {i} must be a rank-0 integer, found {t}{cite(self.name, 'C1')}")
        return TensorType((), DType.int64)


@dataclass(frozen=True, slots=True)
class DimAdd(DimOp):
    """The sum ``a + b`` of two runtime integers.

    Constraints:
        (C2) at run time the result fits in i64: an index that would overflow is refused.
    Refused (C2): def example(): return dim_add(4611686018427387904, 4611686018427387904)
    """

    name: ClassVar[str] = "dim_add"
    dim_op: ClassVar[str] = "add"


@dataclass(frozen=True, slots=True)
class DimSub(DimOp):
    """The difference ``a - b`` of two runtime integers.

    Constraints:
        (C2) at run time the result fits in i64: an index that would overflow is refused.
    Refused (C2): def example(): return dim_sub(-4611686018427387904, 4611686018427387905)
    """

    name: ClassVar[str] = "dim_sub"
    dim_op: ClassVar[str] = "sub"


@dataclass(frozen=True, slots=True)
class DimMul(DimOp):
    """The product ``a * b`` of two runtime integers (a slice start from a loop index).

    Constraints:
        (C2) at run time the result fits in i64: an index that would overflow is refused.
    Refused (C2): def example(): return dim_mul(4294967296, 2147483648)
    """

    name: ClassVar[str] = "dim_mul"
    dim_op: ClassVar[str] = "mul"


@dataclass(frozen=True, slots=True)
class DimFloorDiv(DimOp):
    """The floor quotient ``a // b`` of two runtime integers (rounds toward negative infinity).

    Constraints:
        (C2) at run time ``b`` is not 0.
        (C3) at run time the result fits in i64 (only ``-2**63 // -1`` does not): it is refused.
    Refused (C2): def example(): return dim_floordiv(7, 0)
    Refused (C3): def example(): return dim_floordiv(dim_sub(-4611686018427387904, 4611686018427387904), -1)
    """

    name: ClassVar[str] = "dim_floordiv"
    dim_op: ClassVar[str] = "floordiv"


@dataclass(frozen=True, slots=True)
class DimMod(DimOp):
    """The remainder ``a % b`` of two runtime integers (it has the sign of ``b``).

    Constraints:
        (C2) at run time ``b`` is not 0.
    Refused (C2): def example(): return dim_mod(7, 0)
    """

    name: ClassVar[str] = "dim_mod"
    dim_op: ClassVar[str] = "mod"


@dataclass(frozen=True, slots=True)
class DimMin(DimOp):
    """The smaller of two runtime integers."""

    name: ClassVar[str] = "dim_min"
    dim_op: ClassVar[str] = "min"


@dataclass(frozen=True, slots=True)
class DimMax(DimOp):
    """The larger of two runtime integers."""

    name: ClassVar[str] = "dim_max"
    dim_op: ClassVar[str] = "max"


DIM_OPS: tuple[type[DimOp], ...] = (DimAdd, DimSub, DimMul, DimFloorDiv, DimMod, DimMin, DimMax)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def dim_add(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``a + b`` on rank-0 integer operands, at run time (never folded)."""
    return apply(DimAdd(), a, b, span=span)


def dim_sub(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``a - b`` on rank-0 integer operands, at run time (never folded)."""
    return apply(DimSub(), a, b, span=span)


def dim_mul(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``a * b`` on rank-0 integer operands, at run time (never folded)."""
    return apply(DimMul(), a, b, span=span)


def dim_floordiv(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``a // b`` (floor division) on rank-0 integer operands, at run time (never folded)."""
    return apply(DimFloorDiv(), a, b, span=span)


def dim_mod(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``a % b`` (sign of the divisor) on rank-0 integer operands, at run time (never folded)."""
    return apply(DimMod(), a, b, span=span)


def dim_min(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``min(a, b)`` on rank-0 integer operands, at run time (never folded)."""
    return apply(DimMin(), a, b, span=span)


def dim_max(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``max(a, b)`` on rank-0 integer operands, at run time (never folded)."""
    return apply(DimMax(), a, b, span=span)
