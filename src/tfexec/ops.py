"""Builders for every op of the catalogue (hir.md §ops), plus the op classes.

Operands are positional, attributes keyword-only. A Python ``bool``/``int``/``float``
operand becomes a weak rank-0 ``Constant`` (``b1``/``i64``/``f32``) that promotes like a
torch Python scalar. Builders build; they never type-check (``infer_types`` does) and the
``dim_*`` builders never fold. What they do check at once is the *kind* of each argument:
an operand that is neither an ``Expr`` nor a Python scalar is an ``IRConstructionError``
naming the operand, and a malformed attribute is a ``TypeError`` naming the attribute
(raised by the op class).
"""

from typing import Literal

import torch

from tfexec.errors import IRConstructionError
from tfexec.ir.dims import ShapeDim
from tfexec.ir.dtypes import DType, DTypeSpelling
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.ops.base import Op
from tfexec.ir.ops.creation import Arange, Full
from tfexec.ir.ops.dimarith import DimAdd, DimFloorDiv, DimMax, DimMin, DimMod, DimMul, DimSub
from tfexec.ir.ops.distribution import Local, Reshard
from tfexec.ir.ops.elementwise import (
    Abs,
    Add,
    Cast,
    Cos,
    Div,
    Eq,
    Erf,
    Exp,
    Ge,
    Gelu,
    Gt,
    Le,
    Log,
    LogicalAnd,
    LogicalOr,
    Lt,
    Maximum,
    Minimum,
    Mul,
    Ne,
    Neg,
    Pow,
    Relu,
    Rsqrt,
    Sigmoid,
    Silu,
    Sin,
    Sqrt,
    Sub,
    Tanh,
    Where,
)
from tfexec.ir.ops.linalg import MatMul
from tfexec.ir.ops.norm import LayerNorm, RmsNorm, Softmax
from tfexec.ir.ops.reduction import ArgMax, Reduce, ReduceKind
from tfexec.ir.ops.shape import BroadcastTo, Concat, Reshape, Slice, Take, Transpose
from tfexec.ir.span import Span
from tfexec.ir.types import Layout, ShardLayout, TensorType

__all__ = [
    # helpers
    "Operand", "DTypeLike", "as_expr", "as_dtype", "apply", "call",
    # builders, as the catalogue lists them
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or",
    "neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "silu", "gelu", "erf", "sin", "cos",
    "cast", "where", "matmul", "reduce", "argmax", "softmax", "rms_norm", "layer_norm",
    "reshape", "transpose", "broadcast_to", "concat", "slice", "take", "full", "arange", "reshard", "local",
    "dim_add", "dim_sub", "dim_mul", "dim_floordiv", "dim_mod", "dim_min", "dim_max",
    # op classes
    "Op", "Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum", "Eq", "Ne", "Lt", "Le", "Gt", "Ge",
    "LogicalAnd", "LogicalOr", "Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Tanh", "Sigmoid", "Relu", "Silu",
    "Gelu", "Erf", "Sin", "Cos", "Cast", "Where", "MatMul", "Reduce", "ArgMax", "Softmax", "RmsNorm",
    "LayerNorm", "Reshape", "Transpose", "BroadcastTo", "Concat", "Slice", "Take", "Full", "Arange",
    "Reshard", "Local", "DimAdd", "DimSub", "DimMul", "DimFloorDiv", "DimMod", "DimMin", "DimMax",
]

Operand = Expr | bool | int | float
"""What a builder takes as an operand: an ``Expr``, or a Python scalar (made a weak constant)."""
DTypeLike = DType | DTypeSpelling
"""A dtype attribute: ``DType.float32`` or its short spelling ``f32``."""

_EXPR_CLASSES = (Var, Constant, Call, Tuple, TupleGetItem, ConstTensor, GridRegionExpr)
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def _short(value: object) -> str:
    """A one-line, bounded rendering of a value for error messages."""
    if isinstance(value, torch.Tensor):
        return f"of shape {list(value.shape)} and dtype {value.dtype}"
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def as_expr(value: object, what: str = "an operand") -> Expr:
    """``value`` as an operand: an ``Expr`` as is, a Python scalar as a weak rank-0 ``Constant``.

    Anything else is an ``IRConstructionError`` that starts with ``what`` (``add operand 1``).
    """
    if isinstance(value, _EXPR_CLASSES):
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
        f"{what} must be an Expr or a Python bool/int/float, got {type(value).__name__} {_short(value)}{hint}"
    )


def as_dtype(value: object, what: str = "dtype") -> DType:
    """A ``DType`` from ``DType.float32`` or its short spelling ``f32``."""
    if isinstance(value, DTypeSpelling):
        return value.dtype
    if isinstance(value, DType):
        return value
    raise IRConstructionError(f"{what} must be a dtype such as f32 or DType.float32, got {_short(value)}")


def apply(op: Op, *operands: Operand, span: Span | None = None) -> Call:
    """``Call(op, operands)`` with Python scalars made weak constants."""
    if not isinstance(op, Op):
        raise IRConstructionError(f"apply: op must be an Op instance such as Add(), got {_short(op)}")
    args = tuple(as_expr(x, f"{op.name} operand {i}") for i, x in enumerate(operands))
    return Call(op, args, span=span)


def call(function: Function, *args: Operand, span: Span | None = None) -> Call:
    """A call of ``function`` (hir §1.1)."""
    if not isinstance(function, Function):
        raise IRConstructionError(f"call: the callee must be a Function, got {_short(function)}")
    name = function.name
    return Call(function, tuple(as_expr(a, f"call of {name}: argument {i}") for i, a in enumerate(args)), span=span)


# -- elementwise ------------------------------------------------------------------------


def add(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.add``: ``a + b`` with broadcasting and torch promotion."""
    return apply(Add(), a, b, span=span)


def sub(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.sub``: ``a - b``; not defined for bool operands."""
    return apply(Sub(), a, b, span=span)


def mul(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.mul``: ``a * b``."""
    return apply(Mul(), a, b, span=span)


def div(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.div``: true division (integers give a float)."""
    return apply(Div(), a, b, span=span)


def pow(a: Operand, b: Operand, *, span: Span | None = None) -> Call:  # noqa: A001 - the op's name
    """``torch.pow``: ``a ** b``."""
    return apply(Pow(), a, b, span=span)


def maximum(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.maximum``: elementwise maximum (NaN propagates)."""
    return apply(Maximum(), a, b, span=span)


def minimum(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.minimum``: elementwise minimum (NaN propagates)."""
    return apply(Minimum(), a, b, span=span)


def eq(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.eq``: ``a == b`` as bool."""
    return apply(Eq(), a, b, span=span)


def ne(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.ne``: ``a != b`` as bool."""
    return apply(Ne(), a, b, span=span)


def lt(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.lt``: ``a < b`` as bool."""
    return apply(Lt(), a, b, span=span)


def le(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.le``: ``a <= b`` as bool."""
    return apply(Le(), a, b, span=span)


def gt(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.gt``: ``a > b`` as bool."""
    return apply(Gt(), a, b, span=span)


def ge(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.ge``: ``a >= b`` as bool."""
    return apply(Ge(), a, b, span=span)


def logical_and(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.logical_and`` (nonzero is true) as bool."""
    return apply(LogicalAnd(), a, b, span=span)


def logical_or(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.logical_or`` (nonzero is true) as bool."""
    return apply(LogicalOr(), a, b, span=span)


def neg(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.neg``: ``-x``; not defined for bool."""
    return apply(Neg(), x, span=span)


def abs(x: Operand, *, span: Span | None = None) -> Call:  # noqa: A001 - the op's name
    """``torch.abs``; not defined for bool."""
    return apply(Abs(), x, span=span)


def exp(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.exp``."""
    return apply(Exp(), x, span=span)


def log(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.log``."""
    return apply(Log(), x, span=span)


def sqrt(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.sqrt``."""
    return apply(Sqrt(), x, span=span)


def rsqrt(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.rsqrt``: ``1 / sqrt(x)``."""
    return apply(Rsqrt(), x, span=span)


def tanh(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.tanh``."""
    return apply(Tanh(), x, span=span)


def sigmoid(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.sigmoid``."""
    return apply(Sigmoid(), x, span=span)


def relu(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.relu``; not defined for bool."""
    return apply(Relu(), x, span=span)


def silu(x: Operand, *, span: Span | None = None) -> Call:
    """``F.silu``; floating input only."""
    return apply(Silu(), x, span=span)


def erf(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.erf``."""
    return apply(Erf(), x, span=span)


def sin(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.sin``."""
    return apply(Sin(), x, span=span)


def cos(x: Operand, *, span: Span | None = None) -> Call:
    """``torch.cos``."""
    return apply(Cos(), x, span=span)


def gelu(x: Operand, *, approximate: Literal["none", "tanh"] = "none", span: Span | None = None) -> Call:
    """``F.gelu(x, approximate=...)``; floating input only."""
    return apply(Gelu(approximate), x, span=span)


def cast(x: Operand, *, dtype: DTypeLike, span: Span | None = None) -> Call:
    """``x.to(dtype)``: float→int truncates toward zero."""
    return apply(Cast(as_dtype(dtype, "cast dtype")), x, span=span)


def where(cond: Operand, a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.where(cond, a, b)``: ``cond`` bool; all three broadcast; ``a`` and ``b`` promote."""
    return apply(Where(), cond, a, b, span=span)


# -- linear algebra, reductions, normalisation --------------------------------------------


def matmul(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``torch.matmul(a, b)`` (1-D operands and batch broadcasting included)."""
    return apply(MatMul(), a, b, span=span)


def reduce(
    x: Operand, *, kind: ReduceKind, axes: tuple[int, ...] | None = None, keepdims: bool = False, span: Span | None = None
) -> Call:
    """Reduce over ``axes`` (None: every axis; ``()``: none) with ``kind`` sum/mean/max/min/prod."""
    return apply(Reduce(kind, axes, keepdims), x, span=span)


def argmax(x: Operand, *, axis: int = -1, keepdims: bool = False, span: Span | None = None) -> Call:
    """``torch.argmax(x, axis, keepdims)``: the first maximal index, as int64."""
    return apply(ArgMax(axis, keepdims), x, span=span)


def softmax(x: Operand, *, axis: int = -1, span: Span | None = None) -> Call:
    """``torch.softmax(x, axis)``."""
    return apply(Softmax(axis), x, span=span)


def rms_norm(
    x: Operand, weight: Operand | None = None, *, axes: tuple[int, ...] = (-1,), eps: float | None = None,
    span: Span | None = None,
) -> Call:
    """``F.rms_norm`` over the trailing ``axes``; ``eps=None`` is the dtype's machine epsilon."""
    operands = (x,) if weight is None else (x, weight)
    return apply(RmsNorm(axes, eps), *operands, span=span)


def layer_norm(
    x: Operand, weight: Operand | None = None, bias: Operand | None = None, *, axes: tuple[int, ...] = (-1,),
    eps: float = 1e-5, span: Span | None = None,
) -> Call:
    """``F.layer_norm`` over the trailing ``axes`` (biased variance); a bias needs a weight."""
    op = LayerNorm(axes, eps)
    if bias is not None and weight is None:
        raise IRConstructionError("layer_norm: a bias needs a weight (pass full(shape=..., value=1.0) as the weight)")
    operands = tuple(o for o in (x, weight, bias) if o is not None)
    return apply(op, *operands, span=span)


# -- shape ------------------------------------------------------------------------------


def reshape(x: Operand, *, shape: tuple[ShapeDim, ...], span: Span | None = None) -> Call:
    """A logical reshape to ``shape`` (same element count, row-major order)."""
    return apply(Reshape(shape), x, span=span)


def transpose(x: Operand, *, perm: tuple[int, ...], span: Span | None = None) -> Call:
    """``x.permute(perm)``."""
    return apply(Transpose(perm), x, span=span)


def broadcast_to(x: Operand, *, shape: tuple[ShapeDim, ...], span: Span | None = None) -> Call:
    """``x.broadcast_to(shape)``."""
    return apply(BroadcastTo(shape), x, span=span)


def concat(*xs: Operand, axis: int = 0, span: Span | None = None) -> Call:
    """``torch.cat(xs, axis)`` with dtype promotion."""
    return apply(Concat(axis), *xs, span=span)


def slice(  # noqa: A001 - the op's name
    x: Operand, starts: "Expr | tuple[Operand, ...]", *, sizes: tuple[ShapeDim, ...],
    strides: tuple[ShapeDim, ...] | None = None, span: Span | None = None,
) -> Call:
    """A window of ``x`` at ``starts`` (a ``Tuple``, or a plain tuple of ints and Exprs)."""
    op = Slice(sizes, strides)
    start_tuple: Expr
    if isinstance(starts, tuple):
        start_tuple = Tuple(tuple(as_expr(s, f"slice starts[{i}]") for i, s in enumerate(starts)))
    elif isinstance(starts, _EXPR_CLASSES):
        start_tuple = starts
    else:
        raise IRConstructionError(
            f"slice starts must be a tuple of ints and Exprs, or a Tuple, got {type(starts).__name__} {_short(starts)}"
        )
    return Call(op, (as_expr(x, "slice operand 0"), start_tuple), span=span)


def take(x: Operand, indices: Operand, *, axis: int = 0, span: Span | None = None) -> Call:
    """Gather along ``axis`` (``torch.index_select`` for any index shape); no wrap-around."""
    return apply(Take(axis), x, indices, span=span)


# -- creation and distribution ----------------------------------------------------------


def full(*, shape: tuple[ShapeDim, ...], value: bool | int | float, dtype: DTypeLike, span: Span | None = None) -> Call:
    """``torch.full(shape, value, dtype)`` on the run's device."""
    return apply(Full(shape, value, as_dtype(dtype, "full dtype")), span=span)


def arange(*, extent: ShapeDim, dtype: DTypeLike = DType.int64, span: Span | None = None) -> Call:
    """``torch.arange(extent, dtype)`` on the run's device."""
    return apply(Arange(extent, as_dtype(dtype, "arange dtype")), span=span)


def reshard(x: Operand, *, layout: Layout | ShardLayout | None, span: Span | None = None) -> Call:
    """Change ``x``'s layout type; the logical value is unchanged."""
    return apply(Reshard(layout), x, span=span)


def local(x: Operand, *, span: Span | None = None) -> Call:
    """The calling participant's local view of a ``ShardLayout`` value."""
    return apply(Local(), x, span=span)


# -- dim arithmetic ---------------------------------------------------------------------


def dim_add(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``a + b`` on rank-0 integer operands, at run time (never folded)."""
    return apply(DimAdd(), a, b, span=span)


def dim_sub(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``a - b`` on rank-0 integer operands, at run time (never folded)."""
    return apply(DimSub(), a, b, span=span)


def dim_mul(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``a * b`` on rank-0 integer operands, at run time (never folded)."""
    return apply(DimMul(), a, b, span=span)


def dim_floordiv(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``a // b`` (floor division) on rank-0 integer operands, at run time (never folded)."""
    return apply(DimFloorDiv(), a, b, span=span)


def dim_mod(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``a % b`` (sign of the divisor) on rank-0 integer operands, at run time (never folded)."""
    return apply(DimMod(), a, b, span=span)


def dim_min(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``min(a, b)`` on rank-0 integer operands, at run time (never folded)."""
    return apply(DimMin(), a, b, span=span)


def dim_max(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    """``max(a, b)`` on rank-0 integer operands, at run time (never folded)."""
    return apply(DimMax(), a, b, span=span)
