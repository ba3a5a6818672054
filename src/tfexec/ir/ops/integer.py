"""Integer division and bitwise ops: ``floor_divide``, ``trunc_divide``, ``remainder``,
``fmod``, ``bitwise_and``, ``bitwise_or``, ``bitwise_xor``, ``bitwise_not``, ``logical_xor``.

They broadcast and promote as the other binary ops do (``BinaryOp``). The divisions and
remainders keep an integer dtype for integer operands (Python's ``//`` and ``%`` on
tensors); an integer division by zero is an ``EvalError``, never torch's crash or a
made-up value.
"""

from dataclasses import dataclass
from typing import ClassVar

import torch

from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.base import Op, Operand, Reference, TypeRuleError, cite
from tfexec.ir.ops.elementwise import BinaryKind, BinaryOp, UnaryKind, UnaryOp
from tfexec.ir.ops.promotion import broadcast_shapes, promote, tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


def _trunc_divide(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.div(a, b, rounding_mode="trunc")


@dataclass(frozen=True, slots=True)
class IntegerDivisionOp(BinaryOp):
    """Base of the integer-preserving divisions and remainders.

    Type rule: the broadcast shape (C1); torch's promotion of ``a`` and ``b`` (integers stay
    integers, unlike ``div``).
    Value rule: ``torch.{op}(a, b)`` on the run's device, with torch's promotion.
    Constraints:
        (C1) the shapes broadcast: aligned from the right, each pair of sizes is equal or
        one of them is 1.
        (C2) the promoted dtype is not ``b1`` (torch refuses bool division).
        (C3) at run time, an integer divisor has no zero element (``EvalError``; a floating
        divisor of 0 gives ``inf`` or NaN, as torch computes).
    Example: def example(a: i32[2, 3]): return {op}(a, -2)
    Example: def example(a: f32[4], b: f32[4]): return {op}(a, b)
    Refused (C1): def example(a: i32[2, 3], b: i32[2]): return {op}(a, b)
    Refused (C2): def example(a: b1[3], b: b1[3]): return {op}(a, b)
    Refused (C3): def example(a: i32[3], b: i32[3]): return {op}(a, b)
    """

    kind: ClassVar[BinaryKind] = "no_bool_result"


@dataclass(frozen=True, slots=True)
class FloorDivide(IntegerDivisionOp):
    """Elementwise ``a // b``: the quotient rounded toward negative infinity (Python's ``//``)."""

    name: ClassVar[str] = "floor_divide"
    reference: ClassVar[Reference] = torch.floor_divide
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2


@dataclass(frozen=True, slots=True)
class TruncDivide(IntegerDivisionOp):
    """Elementwise quotient rounded toward zero (C's integer division).

    Value rule: ``torch.div(a, b, rounding_mode="trunc")`` on the run's device, with torch's
    promotion.
    """

    name: ClassVar[str] = "trunc_divide"
    reference: ClassVar[Reference] = _trunc_divide
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2


@dataclass(frozen=True, slots=True)
class Remainder(IntegerDivisionOp):
    """Elementwise ``a % b`` with the sign of the divisor (Python's ``%``)."""

    name: ClassVar[str] = "remainder"
    reference: ClassVar[Reference] = torch.remainder
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2


@dataclass(frozen=True, slots=True)
class Fmod(IntegerDivisionOp):
    """Elementwise remainder with the sign of the dividend (C's ``fmod``)."""

    name: ClassVar[str] = "fmod"
    reference: ClassVar[Reference] = torch.fmod
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2


@dataclass(frozen=True, slots=True)
class BitwiseOp(BinaryOp):
    """Base of the bitwise binary ops: integers and ``b1`` only.

    Type rule: the broadcast shape (C1); torch's promotion of ``a`` and ``b`` (two ``b1``
    give ``b1``, where the op is the logical one).
    Value rule: ``torch.{op}(a, b)`` on the run's device, with torch's promotion.
    Constraints:
        (C1) the shapes broadcast: aligned from the right, each pair of sizes is equal or
        one of them is 1.
        (C2) the promoted dtype is an integer or ``b1`` (torch refuses floating operands).
    Example: def example(a: i32[2, 3], b: i32[3]): return {op}(a, b)
    Example: def example(a: b1[4], b: b1[4]): return {op}(a, b)
    Refused (C1): def example(a: i32[2, 3], b: i32[2]): return {op}(a, b)
    Refused (C2): def example(a: f32[3], b: i32[3]): return {op}(a, b)
    """

    def infer(self, args: tuple[Operand, ...]) -> Type:
        a, b = tensor_args(self.name, args)
        shape = broadcast_shapes(self.name, a.shape, b.shape, label="C1")
        dtype = promote((a, args[0].weak), (b, args[1].weak))
        if dtype.is_floating:
            raise TypeRuleError(
                f"{self.name} needs integer or bool operands, found {a} and {b} (promoted to {dtype}){cite(self.name, 'C2')}"
            )
        return TensorType(shape, dtype)


@dataclass(frozen=True, slots=True)
class BitwiseAnd(BitwiseOp):
    """Elementwise bitwise and ``a & b``."""

    name: ClassVar[str] = "bitwise_and"
    reference: ClassVar[Reference] = torch.bitwise_and
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2


@dataclass(frozen=True, slots=True)
class BitwiseOr(BitwiseOp):
    """Elementwise bitwise or ``a | b``."""

    name: ClassVar[str] = "bitwise_or"
    reference: ClassVar[Reference] = torch.bitwise_or
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2


@dataclass(frozen=True, slots=True)
class BitwiseXor(BitwiseOp):
    """Elementwise bitwise exclusive or ``a ^ b``."""

    name: ClassVar[str] = "bitwise_xor"
    reference: ClassVar[Reference] = torch.bitwise_xor
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2


@dataclass(frozen=True, slots=True)
class LogicalXor(BinaryOp):
    """Elementwise logical exclusive or of ``a`` and ``b`` (nonzero is true)."""

    name: ClassVar[str] = "logical_xor"
    reference: ClassVar[Reference] = torch.logical_xor
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2
    kind: ClassVar[BinaryKind] = "logical"


@dataclass(frozen=True, slots=True)
class BitwiseNot(UnaryOp):
    """Elementwise bitwise not ``~x`` (on ``b1``, the logical not).

    Type rule: the shape and dtype of ``x``.
    Value rule: ``torch.bitwise_not(x)`` on the run's device.
    Constraints:
        (C1) ``x`` is an integer or ``b1`` (torch refuses floating operands).
    Example: def example(x: i32[4]): return bitwise_not(x)
    Example: def example(x: b1[4]): return bitwise_not(x)
    Refused (C1): def example(x: f32[3]): return bitwise_not(x)
    """

    name: ClassVar[str] = "bitwise_not"
    reference: ClassVar[Reference] = torch.bitwise_not
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "same"

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        if x.dtype.is_floating:
            raise TypeRuleError(f"bitwise_not needs an integer or bool operand, found {x}{cite(self.name, 'C1')}")
        return TensorType(x.shape, x.dtype)


INTEGER_OPS: tuple[type[Op], ...] = (
    FloorDivide, TruncDivide, Remainder, Fmod, BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot, LogicalXor,
)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def floor_divide(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.floor_divide``: ``a // b``; integers stay integers."""
    return apply(FloorDivide(), a, b, span=span)


def trunc_divide(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.div(a, b, rounding_mode="trunc")``: the quotient toward zero."""
    return apply(TruncDivide(), a, b, span=span)


def remainder(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.remainder``: ``a % b`` with the divisor's sign."""
    return apply(Remainder(), a, b, span=span)


def fmod(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.fmod``: the remainder with the dividend's sign."""
    return apply(Fmod(), a, b, span=span)


def bitwise_and(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.bitwise_and``: ``a & b`` of integers or bools."""
    return apply(BitwiseAnd(), a, b, span=span)


def bitwise_or(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.bitwise_or``: ``a | b`` of integers or bools."""
    return apply(BitwiseOr(), a, b, span=span)


def bitwise_xor(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.bitwise_xor``: ``a ^ b`` of integers or bools."""
    return apply(BitwiseXor(), a, b, span=span)


def bitwise_not(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.bitwise_not``: ``~x`` of an integer or bool."""
    return apply(BitwiseNot(), x, span=span)


def logical_xor(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.logical_xor`` (nonzero is true) as bool."""
    return apply(LogicalXor(), a, b, span=span)
