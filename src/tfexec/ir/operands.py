"""What every builder shares: operands as ``Expr``s, dtypes from their spellings, ``apply``.

A Python ``bool``/``int``/``float`` operand becomes a weak rank-0 ``Constant``
(``b1``/``i64``/``f32``) that promotes like a torch Python scalar; anything that is neither
an ``Expr`` nor such a scalar is an ``IRConstructionError`` naming the operand. The public
names are re-exported by ``tfexec.ops``.
"""

from typing import Protocol

import torch

from tfexec.errors import IRConstructionError
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.ops.base import Op
from tfexec.ir.span import Span
from tfexec.ir.types import DTypeSpelling, TensorType

Operand = Expr | bool | int | float
"""What a builder takes as an operand: an ``Expr``, or a Python scalar (made a weak constant)."""
DTypeLike = DType | DTypeSpelling
"""A dtype attribute: ``DType.float32`` or its short spelling ``f32``."""

EXPR_CLASSES = (Var, Constant, Call, Tuple, TupleGetItem, ConstTensor, GridRegionExpr)
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def short(value: object) -> str:
    """A one-line, bounded rendering of a value for error messages."""
    if isinstance(value, torch.Tensor):
        return f"of shape {list(value.shape)} and dtype {value.dtype}"
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def as_expr(value: object, what: str = "an operand") -> Expr:
    """``value`` as an operand: an ``Expr`` as is, a Python scalar as a weak rank-0 ``Constant``.

    Anything else is an ``IRConstructionError`` that starts with ``what`` (``add operand 1``).
    """
    if isinstance(value, EXPR_CLASSES):
        return value
    if isinstance(value, bool):
        return Constant(value, TensorType((), DType.bool), weak=True)
    if isinstance(value, int):
        if not _I64_MIN <= value <= _I64_MAX:
            raise IRConstructionError(f"{what}: Python int {value} does not fit i64, the type of an integer literal")
        return Constant(value, TensorType((), DType.int64), weak=True)
    if isinstance(value, float):
        return Constant(value, TensorType((), DType.float32), weak=True)
    hint = (
        " (wrap a tensor in tfexec.Constant(value, type) or pass it as a parameter)"
        if isinstance(value, torch.Tensor)
        else ""
    )
    raise IRConstructionError(
        f"{what} must be an Expr or a Python bool/int/float, got {type(value).__name__} {short(value)}{hint}"
    )


def as_dtype(value: object, what: str = "dtype") -> DType:
    """A ``DType`` from ``DType.float32`` or its short spelling ``f32``."""
    if isinstance(value, DTypeSpelling):
        return value.dtype
    if isinstance(value, DType):
        return value
    raise IRConstructionError(f"{what} must be a dtype such as f32 or DType.float32, got {short(value)}")


def apply(op: Op, *operands: Operand, span: Span | None = None) -> Call:
    """``Call(op, operands)`` with Python scalars made weak constants."""
    if not isinstance(op, Op):
        raise IRConstructionError(f"apply: op must be an Op instance such as Add(), got {short(op)}")
    args = tuple(as_expr(x, f"{op.name} operand {i}") for i, x in enumerate(operands))
    return Call(op, args, span=span)


def call(function: Function, *args: Operand, span: Span | None = None) -> Call:
    """A call of ``function`` (hir §1.1)."""
    if not isinstance(function, Function):
        raise IRConstructionError(f"call: the callee must be a Function, got {short(function)}")
    name = function.name
    return Call(function, tuple(as_expr(a, f"call of {name}: argument {i}") for i, a in enumerate(args)), span=span)


class UnaryBuilder(Protocol):
    """The builder of an op of one operand and no attributes: ``neg(x)``."""

    def __call__(self, x: Operand, *, span: Span | None = None) -> Call: ...


class BinaryBuilder(Protocol):
    """The builder of an op of two operands and no attributes: ``add(a, b)``."""

    def __call__(self, a: Operand, b: Operand, *, span: Span | None = None) -> Call: ...


def unary_builder(op: type[Op], doc: str) -> UnaryBuilder:
    """The builder ``op.name(x)`` of an attribute-free one-operand op, derived from its class."""

    def build(x: Operand, *, span: Span | None = None) -> Call:
        return apply(op(), x, span=span)

    build.__name__ = build.__qualname__ = op.name
    build.__doc__ = doc
    return build


def binary_builder(op: type[Op], doc: str) -> BinaryBuilder:
    """The builder ``op.name(a, b)`` of an attribute-free two-operand op, derived from its class."""

    def build(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
        return apply(op(), a, b, span=span)

    build.__name__ = build.__qualname__ = op.name
    build.__doc__ = doc
    return build


__all__ = ["DTypeLike", "EXPR_CLASSES", "Operand", "apply", "as_dtype", "as_expr", "call", "short"]
