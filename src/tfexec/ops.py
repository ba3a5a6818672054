"""Builders for every op of the catalogue (hir.md §ops), plus the op classes.

Operands are positional, attributes keyword-only. A Python ``bool``/``int``/``float``
operand becomes a weak rank-0 ``Constant`` (``b1``/``i64``/``f32``) that promotes like a
torch Python scalar. Builders build; they never type-check (``infer_types`` does) and the
``dim_*`` builders never fold.
"""

from tfexec.errors import IRConstructionError
from tfexec.ir.dims import ShapeDim
from tfexec.ir.dtypes import DType, DTypeSpelling
from tfexec.ir.expr import Call, Constant, Expr, Function, Tuple, is_expr
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

Operand = Expr | bool | int | float
DTypeLike = DType | DTypeSpelling


def as_expr(value: Operand) -> Expr:
    """``value`` as an operand: an ``Expr`` as is, a Python scalar as a weak rank-0 ``Constant``."""
    if is_expr(value):
        return value  # type: ignore[return-value]
    if isinstance(value, bool):
        return Constant(value, TensorType((), DType.bool), weak=True)
    if isinstance(value, int):
        return Constant(value, TensorType((), DType.int64), weak=True)
    if isinstance(value, float):
        return Constant(value, TensorType((), DType.float32), weak=True)
    raise IRConstructionError(
        f"an operand must be an Expr or a Python bool/int/float, got {type(value).__name__} {value!r:.60}"
        " (wrap tensors in tfexec.Constant or pass them as parameters)"
    )


def as_dtype(value: DTypeLike) -> DType:
    """A ``DType`` from ``DType.float32`` or its short spelling ``f32``."""
    if isinstance(value, DTypeSpelling):
        return value.dtype
    if isinstance(value, DType):
        return value
    raise IRConstructionError(f"expected a dtype such as f32 or DType.float32, got {value!r}")


def apply(op: Op, *operands: Operand, span: Span | None = None) -> Call:
    """``Call(op, operands)`` with Python scalars made weak constants."""
    return Call(op, tuple(as_expr(x) for x in operands), span=span)


def call(function: Function, *args: Operand, span: Span | None = None) -> Call:
    """A call of ``function`` (hir §1.1)."""
    return Call(function, tuple(as_expr(a) for a in args), span=span)


def add(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Add(), a, b, span=span)


def sub(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Sub(), a, b, span=span)


def mul(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Mul(), a, b, span=span)


def div(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Div(), a, b, span=span)


def pow(a: Operand, b: Operand, *, span: Span | None = None) -> Call:  # noqa: A001 - the op's name
    return apply(Pow(), a, b, span=span)


def maximum(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Maximum(), a, b, span=span)


def minimum(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Minimum(), a, b, span=span)


def eq(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Eq(), a, b, span=span)


def ne(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Ne(), a, b, span=span)


def lt(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Lt(), a, b, span=span)


def le(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Le(), a, b, span=span)


def gt(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Gt(), a, b, span=span)


def ge(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Ge(), a, b, span=span)


def logical_and(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(LogicalAnd(), a, b, span=span)


def logical_or(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(LogicalOr(), a, b, span=span)


def neg(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Neg(), x, span=span)


def abs(x: Operand, *, span: Span | None = None) -> Call:  # noqa: A001 - the op's name
    return apply(Abs(), x, span=span)


def exp(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Exp(), x, span=span)


def log(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Log(), x, span=span)


def sqrt(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Sqrt(), x, span=span)


def rsqrt(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Rsqrt(), x, span=span)


def tanh(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Tanh(), x, span=span)


def sigmoid(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Sigmoid(), x, span=span)


def relu(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Relu(), x, span=span)


def silu(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Silu(), x, span=span)


def gelu(x: Operand, *, approximate: str = "none", span: Span | None = None) -> Call:
    return apply(Gelu(approximate), x, span=span)  # type: ignore[arg-type]


def erf(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Erf(), x, span=span)


def sin(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Sin(), x, span=span)


def cos(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Cos(), x, span=span)


def cast(x: Operand, *, dtype: DTypeLike, span: Span | None = None) -> Call:
    return apply(Cast(as_dtype(dtype)), x, span=span)


def where(cond: Operand, a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(Where(), cond, a, b, span=span)


def matmul(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(MatMul(), a, b, span=span)


def reduce(
    x: Operand, *, kind: ReduceKind, axes: tuple[int, ...] | None = None, keepdims: bool = False, span: Span | None = None
) -> Call:
    return apply(Reduce(kind, axes, keepdims), x, span=span)


def argmax(x: Operand, *, axis: int = -1, keepdims: bool = False, span: Span | None = None) -> Call:
    return apply(ArgMax(axis, keepdims), x, span=span)


def softmax(x: Operand, *, axis: int = -1, span: Span | None = None) -> Call:
    return apply(Softmax(axis), x, span=span)


def rms_norm(
    x: Operand, weight: Operand | None = None, *, axes: tuple[int, ...] = (-1,), eps: float | None = None,
    span: Span | None = None,
) -> Call:
    operands = (x,) if weight is None else (x, weight)
    return apply(RmsNorm(axes, eps), *operands, span=span)


def layer_norm(
    x: Operand, weight: Operand | None = None, bias: Operand | None = None, *, axes: tuple[int, ...] = (-1,),
    eps: float = 1e-5, span: Span | None = None,
) -> Call:
    if bias is not None and weight is None:
        raise IRConstructionError("layer_norm: a bias needs a weight (pass full(shape=..., value=1.0) as the weight)")
    operands = tuple(o for o in (x, weight, bias) if o is not None)
    return apply(LayerNorm(axes, eps), *operands, span=span)


def reshape(x: Operand, *, shape: tuple[ShapeDim, ...], span: Span | None = None) -> Call:
    return apply(Reshape(tuple(shape)), x, span=span)


def transpose(x: Operand, *, perm: tuple[int, ...], span: Span | None = None) -> Call:
    return apply(Transpose(tuple(perm)), x, span=span)


def broadcast_to(x: Operand, *, shape: tuple[ShapeDim, ...], span: Span | None = None) -> Call:
    return apply(BroadcastTo(tuple(shape)), x, span=span)


def concat(*xs: Operand, axis: int = 0, span: Span | None = None) -> Call:
    return apply(Concat(axis), *xs, span=span)


def slice(  # noqa: A001 - the op's name
    x: Operand, starts: "Tuple | tuple[Operand, ...]", *, sizes: tuple[ShapeDim, ...],
    strides: tuple[ShapeDim, ...] | None = None, span: Span | None = None,
) -> Call:
    """A window of ``x`` at ``starts`` (a ``Tuple`` or a plain tuple of ints and Exprs)."""
    start_tuple = starts if isinstance(starts, Tuple) else Tuple(tuple(as_expr(s) for s in starts))
    return Call(Slice(tuple(sizes), None if strides is None else tuple(strides)), (as_expr(x), start_tuple), span=span)


def take(x: Operand, indices: Operand, *, axis: int = 0, span: Span | None = None) -> Call:
    return apply(Take(axis), x, indices, span=span)


def full(*, shape: tuple[ShapeDim, ...], value: bool | int | float, dtype: DTypeLike, span: Span | None = None) -> Call:
    return apply(Full(tuple(shape), value, as_dtype(dtype)), span=span)


def arange(*, extent: ShapeDim, dtype: DTypeLike = DType.int64, span: Span | None = None) -> Call:
    return apply(Arange(extent, as_dtype(dtype)), span=span)


def reshard(x: Operand, *, layout: Layout | ShardLayout | None, span: Span | None = None) -> Call:
    return apply(Reshard(layout), x, span=span)


def local(x: Operand, *, span: Span | None = None) -> Call:
    return apply(Local(), x, span=span)


def dim_add(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(DimAdd(), a, b, span=span)


def dim_sub(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(DimSub(), a, b, span=span)


def dim_mul(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(DimMul(), a, b, span=span)


def dim_floordiv(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(DimFloorDiv(), a, b, span=span)


def dim_mod(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(DimMod(), a, b, span=span)


def dim_min(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(DimMin(), a, b, span=span)


def dim_max(a: Operand, b: Operand, *, span: Span | None = None) -> Call:
    return apply(DimMax(), a, b, span=span)
