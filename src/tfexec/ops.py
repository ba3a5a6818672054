"""Builders for every op of the catalogue (hir.md §ops), plus the op classes.

The v1 builders are written here; catalogue v2's live in ``tfexec.builders`` (one module
per family) and are re-exported, so every builder is ``tfexec.ops.NAME``.

Operands are positional, attributes keyword-only. A Python ``bool``/``int``/``float``
operand becomes a weak rank-0 ``Constant`` (``b1``/``i64``/``f32``) that promotes like a
torch Python scalar. Builders build; they never type-check (``infer_types`` does) and the
``dim_*`` builders never fold. What they do check at once is the *kind* of each argument:
an operand that is neither an ``Expr`` nor a Python scalar is an ``IRConstructionError``
naming the operand, and a malformed attribute is a ``TypeError`` naming the attribute
(raised by the op class).
"""

from typing import Literal

from tfexec.builders.arrays import (
    all, any, argsort, argtopk, cumprod, cumsum, diagonal, flip, gather, histc, index, pad, roll, scatter, scatter_add,
    sort, topk, tril, triu, vector_norm,
)
from tfexec.builders.attention import attention
from tfexec.builders.linalg import linear
from tfexec.builders.elementwise import (
    atan, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, ceil, celu, clamp, elu, expm1, floor, floor_divide,
    fmod, hardsigmoid, hardswish, isfinite, isinf, isnan, leaky_relu, log1p, log2, log10, logical_not, logical_xor,
    mish, reciprocal, remainder, round, selu, sign, softplus, tan, trunc, trunc_divide,
)
from tfexec.builders.operands import EXPR_CLASSES, DTypeLike, Operand, apply, as_dtype, as_expr, call, short
from tfexec.builders.vision import (
    adaptive_avg_pool, avg_pool, batch_norm, conv, conv_transpose, group_norm, interpolate, max_pool,
)
from tfexec.errors import IRConstructionError
from tfexec.ir.dims import ShapeDim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Expr, Tuple
from tfexec.ir.ops.activation import Celu, Elu, Hardsigmoid, Hardswish, LeakyRelu, Mish, Selu, Softplus
from tfexec.ir.ops.aggregate import Histc, ReduceAll, ReduceAny, VectorNorm
from tfexec.ir.ops.attention import Attention
from tfexec.ir.ops.base import Op
from tfexec.ir.ops.channel_norm import BatchNorm, GroupNorm
from tfexec.ir.ops.conv import Conv, ConvTranspose
from tfexec.ir.ops.creation import Arange, Full
from tfexec.ir.ops.dimarith import DimAdd, DimFloorDiv, DimMax, DimMin, DimMod, DimMul, DimSub
from tfexec.ir.ops.distribution import Local, Reshard
from tfexec.ir.ops.elementwise import (
    Abs, Add, Cast, Cos, Div, Eq, Erf, Exp, Ge, Gelu, Gt, Le, Log, LogicalAnd, LogicalOr, Lt, Maximum, Minimum, Mul,
    Ne, Neg, Pow, Relu, Rsqrt, Sigmoid, Silu, Sin, Sqrt, Sub, Tanh, Where,
)
from tfexec.ir.ops.indexing import Gather, Index, Scatter, ScatterAdd
from tfexec.ir.ops.integer import (
    BitwiseAnd, BitwiseNot, BitwiseOr, BitwiseXor, FloorDivide, Fmod, LogicalXor, Remainder, TruncDivide,
)
from tfexec.ir.ops.linalg import Linear, MatMul
from tfexec.ir.ops.norm import LayerNorm, RmsNorm, Softmax
from tfexec.ir.ops.pool import AdaptiveAvgPool, AvgPool, Interpolate, MaxPool
from tfexec.ir.ops.rearrange import Diagonal, Flip, Pad, Roll, Tril, Triu
from tfexec.ir.ops.reduction import ArgMax, Reduce, ReduceKind
from tfexec.ir.ops.rounding import Ceil, Clamp, Floor, Round, Sign, Trunc
from tfexec.ir.ops.scan import Cumprod, Cumsum
from tfexec.ir.ops.shape import BroadcastTo, Concat, Reshape, Slice, Take, Transpose
from tfexec.ir.ops.sorting import Argsort, ArgTopK, Sort, TopK
from tfexec.ir.ops.unary_math import Atan, Expm1, IsFinite, IsInf, IsNan, Log1p, Log2, Log10, LogicalNot, Reciprocal, Tan
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
    # catalogue v2: builders (tfexec.builders), then op classes
    "floor", "ceil", "round", "trunc", "sign", "clamp",
    "log1p", "expm1", "log2", "log10", "tan", "atan", "reciprocal", "isnan", "isinf", "isfinite", "logical_not",
    "elu", "selu", "celu", "leaky_relu", "softplus", "hardsigmoid", "hardswish", "mish",
    "floor_divide", "trunc_divide", "remainder", "fmod", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "logical_xor",
    "cumsum", "cumprod", "gather", "index", "scatter", "scatter_add", "flip", "roll", "diagonal", "triu", "tril", "pad",
    "sort", "argsort", "topk", "argtopk", "any", "all", "vector_norm", "histc", "Histc",
    "conv", "conv_transpose", "max_pool", "avg_pool", "adaptive_avg_pool", "interpolate", "batch_norm", "group_norm", "attention",
    "Floor", "Ceil", "Round", "Trunc", "Sign", "Clamp", "Log1p", "Expm1", "Log2", "Log10", "Tan", "Atan",
    "Reciprocal", "IsNan", "IsInf", "IsFinite", "LogicalNot", "Elu", "Selu", "Celu", "LeakyRelu", "Softplus",
    "Hardsigmoid", "Hardswish", "Mish", "FloorDivide", "TruncDivide", "Remainder", "Fmod", "BitwiseAnd",
    "BitwiseOr", "BitwiseXor", "BitwiseNot", "LogicalXor", "Cumsum", "Cumprod", "Gather", "Index", "Scatter",
    "ScatterAdd", "Flip", "Roll", "Diagonal", "Triu", "Tril", "Pad", "Sort", "Argsort", "TopK", "ArgTopK",
    "ReduceAny", "ReduceAll", "VectorNorm", "Conv", "MaxPool", "AvgPool", "AdaptiveAvgPool", "Interpolate",
    "BatchNorm", "GroupNorm", "Attention", "ConvTranspose", "linear", "Linear",
]

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
    elif isinstance(starts, EXPR_CLASSES):
        start_tuple = starts
    else:
        raise IRConstructionError(
            f"slice starts must be a tuple of ints and Exprs, or a Tuple, got {type(starts).__name__} {short(starts)}"
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
