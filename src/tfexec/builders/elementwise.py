"""Builders of catalogue v2's elementwise ops: rounding and ``clamp``, more math, the
predicates, the activations, integer division and bitwise ops (re-exported by
``tfexec.ops``)."""

from tfexec.builders.operands import Operand, apply
from tfexec.ir.expr import Call
from tfexec.ir.ops.activation import Celu, Elu, Hardsigmoid, Hardswish, LeakyRelu, Mish, Selu, Softplus
from tfexec.ir.ops.integer import (
    BitwiseAnd,
    BitwiseNot,
    BitwiseOr,
    BitwiseXor,
    Fmod,
    FloorDivide,
    LogicalXor,
    Remainder,
    TruncDivide,
)
from tfexec.ir.ops.rounding import Ceil, Clamp, Floor, Round, Sign, Trunc
from tfexec.ir.ops.unary_math import Atan, Expm1, IsFinite, IsInf, IsNan, Log1p, Log2, Log10, LogicalNot, Reciprocal, Tan
from tfexec.ir.span import Span

# -- rounding and clamping ----------------------------------------------------------------


def floor(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.floor``; the identity on integers, not defined for bool."""
    return apply(Floor(), x, span=span)


def ceil(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.ceil``; the identity on integers, not defined for bool."""
    return apply(Ceil(), x, span=span)


def round(x: Operand, *, decimals: int = 0, span: Span | None = None) -> Call:  # noqa: A001 - the op's name
    """``torch.round(x, decimals=...)``: halves to even."""
    return apply(Round(decimals), x, span=span)


def trunc(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.trunc``: toward zero."""
    return apply(Trunc(), x, span=span)


def sign(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.sign``: -1, 0 or 1 in ``x``'s dtype."""
    return apply(Sign(), x, span=span)


def clamp(x: Operand, low: Operand, high: Operand, *, span: Span | None = None) -> Call:
    """``torch.clamp(x, low, high)`` with promotion of all three."""
    return apply(Clamp(), x, low, high, span=span)


# -- more math and predicates -------------------------------------------------------------


def log1p(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.log1p``: ``log(1 + x)``."""
    return apply(Log1p(), x, span=span)


def expm1(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.expm1``: ``exp(x) - 1``."""
    return apply(Expm1(), x, span=span)


def log2(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.log2``."""
    return apply(Log2(), x, span=span)


def log10(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.log10``."""
    return apply(Log10(), x, span=span)


def tan(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.tan``."""
    return apply(Tan(), x, span=span)


def atan(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.atan``."""
    return apply(Atan(), x, span=span)


def reciprocal(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.reciprocal``: ``1 / x``."""
    return apply(Reciprocal(), x, span=span)


def isnan(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.isnan`` as bool."""
    return apply(IsNan(), x, span=span)


def isinf(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.isinf`` as bool."""
    return apply(IsInf(), x, span=span)


def isfinite(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.isfinite`` as bool."""
    return apply(IsFinite(), x, span=span)


def logical_not(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.logical_not`` (zero is false) as bool."""
    return apply(LogicalNot(), x, span=span)


# -- activations ----------------------------------------------------------------------------


def elu(x: Operand, *, alpha: float = 1.0, span: Span | None = None) -> Call:
    """``F.elu(x, alpha)``; floating input only."""
    return apply(Elu(alpha), x, span=span)


def selu(x: Operand, *, span: Span | None = None) -> Call:
    """``F.selu``; floating input only."""
    return apply(Selu(), x, span=span)


def celu(x: Operand, *, alpha: float = 1.0, span: Span | None = None) -> Call:
    """``F.celu(x, alpha)``; floating input only."""
    return apply(Celu(alpha), x, span=span)


def leaky_relu(x: Operand, *, negative_slope: float = 0.01, span: Span | None = None) -> Call:
    """``F.leaky_relu(x, negative_slope)``; floating input only."""
    return apply(LeakyRelu(negative_slope), x, span=span)


def softplus(x: Operand, *, beta: float = 1.0, threshold: float = 20.0, span: Span | None = None) -> Call:
    """``F.softplus(x, beta, threshold)``; floating input only."""
    return apply(Softplus(beta, threshold), x, span=span)


def hardsigmoid(x: Operand, *, span: Span | None = None) -> Call:
    """``F.hardsigmoid``; floating input only."""
    return apply(Hardsigmoid(), x, span=span)


def hardswish(x: Operand, *, span: Span | None = None) -> Call:
    """``F.hardswish``; floating input only."""
    return apply(Hardswish(), x, span=span)


def mish(x: Operand, *, span: Span | None = None) -> Call:
    """``F.mish``; floating input only."""
    return apply(Mish(), x, span=span)


# -- integer division and bitwise ---------------------------------------------------------


def floor_divide(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.floor_divide``: ``a // b``; integers stay integers."""
    return apply(FloorDivide(), a, b, span=span)


def trunc_divide(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.div(a, b, rounding_mode="trunc")``: the quotient toward zero."""
    return apply(TruncDivide(), a, b, span=span)


def remainder(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.remainder``: ``a % b`` with the divisor's sign."""
    return apply(Remainder(), a, b, span=span)


def fmod(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.fmod``: the remainder with the dividend's sign."""
    return apply(Fmod(), a, b, span=span)


def bitwise_and(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.bitwise_and``: ``a & b`` of integers or bools."""
    return apply(BitwiseAnd(), a, b, span=span)


def bitwise_or(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.bitwise_or``: ``a | b`` of integers or bools."""
    return apply(BitwiseOr(), a, b, span=span)


def bitwise_xor(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.bitwise_xor``: ``a ^ b`` of integers or bools."""
    return apply(BitwiseXor(), a, b, span=span)


def bitwise_not(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.bitwise_not``: ``~x`` of an integer or bool."""
    return apply(BitwiseNot(), x, span=span)


def logical_xor(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.logical_xor`` (nonzero is true) as bool."""
    return apply(LogicalXor(), a, b, span=span)


__all__ = [
    "floor", "ceil", "round", "trunc", "sign", "clamp",
    "log1p", "expm1", "log2", "log10", "tan", "atan", "reciprocal", "isnan", "isinf", "isfinite", "logical_not",
    "elu", "selu", "celu", "leaky_relu", "softplus", "hardsigmoid", "hardswish", "mish",
    "floor_divide", "trunc_divide", "remainder", "fmod", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "logical_xor",
]
