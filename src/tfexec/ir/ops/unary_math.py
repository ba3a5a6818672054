"""More elementwise math: ``log1p``, ``expm1``, ``log2``, ``log10``, ``tan``, ``atan``,
``reciprocal``, and the predicates ``isnan``, ``isinf``, ``isfinite``, ``logical_not``.

The math ops follow torch's floating rule (an integer or ``b1`` operand gives torch's
default float); the predicates give ``b1`` for an operand of any dtype.
"""

from dataclasses import dataclass
from typing import ClassVar

import torch

from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.base import Op, Operand, Reference
from tfexec.ir.ops.elementwise import UnaryKind, UnaryOp
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class Log1p(UnaryOp):
    """Elementwise ``log(1 + x)``, accurate for small ``x``."""

    name: ClassVar[str] = "log1p"
    reference: ClassVar[Reference] = torch.log1p
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Expm1(UnaryOp):
    """Elementwise ``exp(x) - 1``, accurate for small ``x``."""

    name: ClassVar[str] = "expm1"
    reference: ClassVar[Reference] = torch.expm1
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Log2(UnaryOp):
    """Elementwise base-2 logarithm."""

    name: ClassVar[str] = "log2"
    reference: ClassVar[Reference] = torch.log2
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Log10(UnaryOp):
    """Elementwise base-10 logarithm."""

    name: ClassVar[str] = "log10"
    reference: ClassVar[Reference] = torch.log10
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Tan(UnaryOp):
    """Elementwise tangent."""

    name: ClassVar[str] = "tan"
    reference: ClassVar[Reference] = torch.tan
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Atan(UnaryOp):
    """Elementwise arctangent."""

    name: ClassVar[str] = "atan"
    reference: ClassVar[Reference] = torch.atan
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Reciprocal(UnaryOp):
    """Elementwise ``1 / x`` (``inf`` at 0)."""

    name: ClassVar[str] = "reciprocal"
    reference: ClassVar[Reference] = torch.reciprocal
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class PredicateOp(UnaryOp):
    """Base of the elementwise predicates: a ``b1`` answer per element.

    Type rule: the shape of ``x``, dtype ``b1`` (``x`` of any dtype).
    Value rule: ``torch.{op}(x)`` on the run's device.
    Constraints: none.
    Example: def example(x: f32[2, 3]): return {op}(x)
    Example: def example(x: i32[4]): return {op}(x)
    """

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        return TensorType(x.shape, DType.bool)


@dataclass(frozen=True, slots=True)
class IsNan(PredicateOp):
    """Whether each element is NaN (never, for integers)."""

    name: ClassVar[str] = "isnan"
    reference: ClassVar[Reference] = torch.isnan
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class IsInf(PredicateOp):
    """Whether each element is ``inf`` or ``-inf`` (never, for integers)."""

    name: ClassVar[str] = "isinf"
    reference: ClassVar[Reference] = torch.isinf
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class IsFinite(PredicateOp):
    """Whether each element is neither NaN nor infinite (always, for integers)."""

    name: ClassVar[str] = "isfinite"
    reference: ClassVar[Reference] = torch.isfinite
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class LogicalNot(PredicateOp):
    """Elementwise logical not: ``x == 0`` (zero is false, anything else true)."""

    name: ClassVar[str] = "logical_not"
    reference: ClassVar[Reference] = torch.logical_not
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


UNARY_MATH_OPS: tuple[type[Op], ...] = (Log1p, Expm1, Log2, Log10, Tan, Atan, Reciprocal, IsNan, IsInf, IsFinite, LogicalNot)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def log1p(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.log1p``: ``log(1 + x)``."""
    return apply(Log1p(), x, span=span)


def expm1(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.expm1``: ``exp(x) - 1``."""
    return apply(Expm1(), x, span=span)


def log2(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.log2``."""
    return apply(Log2(), x, span=span)


def log10(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.log10``."""
    return apply(Log10(), x, span=span)


def tan(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.tan``."""
    return apply(Tan(), x, span=span)


def atan(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.atan``."""
    return apply(Atan(), x, span=span)


def reciprocal(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.reciprocal``: ``1 / x``."""
    return apply(Reciprocal(), x, span=span)


def isnan(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.isnan`` as bool."""
    return apply(IsNan(), x, span=span)


def isinf(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.isinf`` as bool."""
    return apply(IsInf(), x, span=span)


def isfinite(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.isfinite`` as bool."""
    return apply(IsFinite(), x, span=span)


def logical_not(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.logical_not`` (zero is false) as bool."""
    return apply(LogicalNot(), x, span=span)
