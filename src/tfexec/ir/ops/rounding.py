"""Rounding and clamping: ``floor``, ``ceil``, ``round``, ``trunc``, ``sign``, ``clamp``.

The rounding ops keep their operand's dtype (on an integer operand they are the identity,
as in torch); ``clamp`` bounds a value between two operands, with torch's promotion of all
three.
"""

from dataclasses import dataclass
from typing import ClassVar

import torch

from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.attrs import check_int
from tfexec.ir.ops.base import Op, Operand, Reference, TypeRuleError, cite
from tfexec.ir.ops.elementwise import UnaryKind, UnaryOp
from tfexec.ir.ops.promotion import broadcast_shapes, promote, tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class Floor(UnaryOp):
    """Elementwise floor: the largest integer not above ``x``."""

    name: ClassVar[str] = "floor"
    reference: ClassVar[Reference] = torch.floor
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "no_bool"


@dataclass(frozen=True, slots=True)
class Ceil(UnaryOp):
    """Elementwise ceiling: the smallest integer not below ``x``."""

    name: ClassVar[str] = "ceil"
    reference: ClassVar[Reference] = torch.ceil
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "no_bool"


@dataclass(frozen=True, slots=True)
class Trunc(UnaryOp):
    """Elementwise rounding toward zero."""

    name: ClassVar[str] = "trunc"
    reference: ClassVar[Reference] = torch.trunc
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "no_bool"


@dataclass(frozen=True, slots=True)
class Sign(UnaryOp):
    """Elementwise sign: -1, 0 or 1 in ``x``'s dtype (``b1`` stays itself)."""

    name: ClassVar[str] = "sign"
    reference: ClassVar[Reference] = torch.sign
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "same"


@dataclass(frozen=True, slots=True)
class Round(UnaryOp):
    """Elementwise rounding to ``decimals`` decimal places, halves to even (``0.5`` → 0, ``1.5`` → 2).

    Type rule: the shape and dtype of ``x``.
    Value rule: ``torch.round(x, decimals=decimals)`` on the run's device: halves round to
    the even neighbour; with ``decimals != 0`` the value is scaled by ``10 ** decimals``,
    rounded and scaled back, as torch computes it.
    Constraints:
        (C1) ``x`` is not ``b1`` (torch refuses it).
        (C2) ``decimals != 0`` needs a floating ``x`` (torch refuses integers then).
    Example: def example(x: f32[2, 3]): return round(x)
    Example: def example(x: f32[4]): return round(x, decimals=1)
    Refused (C1): def example(x: b1[3]): return round(x)
    Refused (C2): def example(x: i32[3]): return round(x, decimals=1)
    """

    name: ClassVar[str] = "round"
    reference: ClassVar[Reference] = torch.round
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ClassVar[UnaryKind] = "no_bool"
    decimals: int = 0

    def __post_init__(self) -> None:
        check_int("round", "decimals", self.decimals)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        t = UnaryOp.infer(self, args)
        assert isinstance(t, TensorType)
        if self.decimals != 0 and not t.dtype.is_floating:
            raise TypeRuleError(
                f"round to {self.decimals} decimals needs a floating operand, found {t} (cast it first){cite(self.name, 'C2')}"
            )
        return t


@dataclass(frozen=True, slots=True)
class Clamp(Op):
    """Bound ``x`` elementwise to ``[low, high]``: ``minimum(maximum(x, low), high)``.

    Type rule: the broadcast shape of ``x``, ``low`` and ``high`` (C1); the dtype is torch's
    promotion of the three (a Python-scalar bound promotes as a Python scalar: an integer
    ``x`` clamped to ``0.5`` gives ``f32``).
    Value rule: ``torch.clamp(x, low, high)`` on the run's device. Where ``low > high``
    every element is ``high`` (torch's rule); a NaN in ``x`` stays NaN.
    Constraints:
        (C1) the three shapes broadcast (as for ``add``).
        (C2) the promoted dtype is not ``b1`` (torch refuses to clamp bools).
    Example: def example(x: f32[2, 3]): return clamp(x, -0.5, 0.5)
    Example: def example(x: i32[4], hi: i32[4]): return clamp(x, 0, hi)
    Refused (C1): def example(x: f32[3], lo: f32[2]): return clamp(x, lo, 1.0)
    Refused (C2): def example(x: b1[3]): return clamp(x, False, True)
    """

    name: ClassVar[str] = "clamp"
    reference: ClassVar[Reference] = torch.clamp
    min_args: ClassVar[int] = 3
    max_args: ClassVar[int | None] = 3

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x, low, high = tensor_args(self.name, args)
        shape = broadcast_shapes(self.name, x.shape, low.shape, high.shape, label="C1")
        dtype = promote(*((t, a.weak) for t, a in zip((x, low, high), args)))
        if dtype is DType.bool:
            raise TypeRuleError(
                f"clamp is not defined for bool (torch rejects it), found {x} between {low} and {high};"
                f" cast to an integer or floating dtype first{cite(self.name, 'C2')}"
            )
        return TensorType(shape, dtype)


ROUNDING_OPS: tuple[type[Op], ...] = (Floor, Ceil, Round, Trunc, Sign, Clamp)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def floor(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.floor``; the identity on integers, not defined for bool."""
    return apply(Floor(), x, span=span)


def ceil(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.ceil``; the identity on integers, not defined for bool."""
    return apply(Ceil(), x, span=span)


def round(x: ExprLike, *, decimals: int = 0, span: Span | None = None) -> Call:  # noqa: A001 - the op's name
    """``torch.round(x, decimals=...)``: halves to even."""
    return apply(Round(decimals), x, span=span)


def trunc(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.trunc``: toward zero."""
    return apply(Trunc(), x, span=span)


def sign(x: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.sign``: -1, 0 or 1 in ``x``'s dtype."""
    return apply(Sign(), x, span=span)


def clamp(x: ExprLike, low: ExprLike, high: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.clamp(x, low, high)`` with promotion of all three."""
    return apply(Clamp(), x, low, high, span=span)
