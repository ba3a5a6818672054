"""What the ATen translation rules share: axes and starts, windows and reshapes, dtypes and
scalars, the reduced axes of an argument (each a small building block over ``tfexec.ops``)."""

import math

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Operand, RuleError, is_expr
from tfexec.ir.dims import ShapeDim, dim_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Constant, Expr
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType


def axis_of(t: NodeContext, axis: int, rank: int) -> int:
    """``axis`` counted from the front of a rank-``rank`` value, or a ``RuleError``."""
    if not -rank <= axis < max(rank, 1):
        raise RuleError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def start_operand(t: NodeContext, start: ShapeDim) -> Operand:
    """A slice start as an operand: an int, or a symbolic size computed at run time."""
    if isinstance(start, int):
        return start
    return t.tensor_of_dim(start)


def reshape_to(t: NodeContext, x: Expr, want: TensorType) -> Expr:
    """``x`` reshaped to ``want``'s shape (``x`` itself when it already has it)."""
    if t.type_of(x).shape == want.shape:
        return x
    return hir.reshape(x, shape=want.shape, span=t.span)


def tensor_list(t: NodeContext, name: str) -> list[Expr]:
    """Argument ``name`` as a non-empty list of tensors (``cat``'s ``tensors``)."""
    value = t.arg(name)
    if not isinstance(value, (list, tuple)) or not value:
        raise RuleError(f"argument {name} is not a non-empty list of tensors")
    out = []
    for item in value:
        if not is_expr(item):
            raise RuleError(f"argument {name} holds a non-tensor")
        out.append(item)
    return out


def window(t: NodeContext, x: Expr, axis: int, start: ShapeDim, size: ShapeDim, step: int = 1) -> Expr:
    """``slice`` of ``x`` along ``axis`` from ``start`` (``size`` elements every ``step``)."""
    xt = t.type_of(x)
    if start == 0 and size == xt.shape[axis] and step == 1:
        return x
    starts: list[Operand] = [0] * len(xt.shape)
    starts[axis] = start_operand(t, start)
    sizes = xt.shape[:axis] + (size,) + xt.shape[axis + 1:]
    strides = None if step == 1 else tuple(step if i == axis else 1 for i in range(len(xt.shape)))
    return hir.slice(x, tuple(starts), sizes=sizes, strides=strides, span=t.span)


def normalise_index(t: NodeContext, index: ShapeDim, length: ShapeDim, clamp: bool) -> ShapeDim:
    """A possibly negative start/index counted from the front; clamped to ``[0, length]``
    where torch clamps (slice bounds), as torch does."""
    if isinstance(index, int) and index < 0:
        if isinstance(length, int):
            index = index + length
            return max(index, 0) if clamp else index
        index = dim_expr("add", length, index)
        return dim_expr("max", index, 0) if clamp else index
    if clamp and isinstance(length, int) and isinstance(index, int):
        return min(index, length)
    return index


def repeat_each(t: NodeContext, x: Expr, axis: int, times: int) -> Expr:
    """Each element along ``axis`` repeated ``times`` times in place (``repeat_interleave``)."""
    shape = t.type_of(x).shape
    lifted = shape[: axis + 1] + (1,) + shape[axis + 1:]
    spread = shape[: axis + 1] + (times,) + shape[axis + 1:]
    merged = shape[:axis] + (dim_expr("mul", shape[axis], times),) + shape[axis + 1:]
    grown = hir.broadcast_to(hir.reshape(x, shape=lifted, span=t.span), shape=spread, span=t.span)
    return hir.reshape(grown, shape=merged, span=t.span)


def typed_scalar(value: bool | int | float, dtype: DType, span: Span | None) -> Constant:
    """A strong rank-0 constant of ``dtype`` holding ``value`` converted as torch converts it."""
    converted: bool | int | float
    if dtype is DType.bool:
        converted = bool(value)
    elif dtype.is_floating:
        converted = float(value)
    else:
        if isinstance(value, float) and not math.isfinite(value):
            raise RuleError(f"value {value} does not fit {dtype}")
        converted = int(value)
    return Constant(converted, TensorType((), dtype), span=span)


def to_dtype(t: NodeContext, x: Expr, dtype: DType | None) -> Expr:
    """``x`` cast to ``dtype`` (``x`` itself when ``dtype`` is None or already its own)."""
    if dtype is None or dtype is t.type_of(x).dtype:
        return x
    return hir.cast(x, dtype=dtype, span=t.span)


def transposed(t: NodeContext, x: Expr) -> Expr:
    """``x`` with its last two axes swapped (a vector as it is), as ``Tensor.t`` / ``mT``."""
    rank = len(t.type_of(x).shape)
    if rank < 2:
        return x
    perm = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    return hir.transpose(x, perm=perm, span=t.span)


def axes_arg(t: NodeContext, name: str) -> tuple[int, ...] | None:
    """The reduced axes; ``None`` or ``[]`` reduce every axis (torch's convention for ``dim``)."""
    dims = t.ints(name)
    return dims if dims else None


def flattened(t: NodeContext, x: Expr) -> Expr:
    """``x`` reshaped to one axis of all its elements."""
    count: ShapeDim = 1
    for d in t.type_of(x).shape:
        count = dim_expr("mul", count, d)
    return hir.reshape(x, shape=(count,), span=t.span)
