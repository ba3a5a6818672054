"""Builders of catalogue v2's array ops: scans, indexing, rearranging, sorting, logical
reductions and norms (re-exported by ``tfexec.ops``)."""

from tfexec.builders.operands import DTypeLike, Operand, apply, as_dtype
from tfexec.ir.expr import Call
from tfexec.ir.ops.aggregate import Histc, ReduceAll, ReduceAny, VectorNorm
from tfexec.ir.ops.indexing import Gather, Index, Scatter, ScatterAdd
from tfexec.ir.ops.rearrange import Diagonal, Flip, Pad, PadMode, Roll, Tril, Triu
from tfexec.ir.ops.scan import Cumprod, Cumsum
from tfexec.ir.ops.sorting import Argsort, ArgTopK, Sort, TopK
from tfexec.ir.span import Span

# -- scans ------------------------------------------------------------------------------------


def cumsum(x: Operand, *, axis: int, dtype: DTypeLike | None = None, span: Span | None = None) -> Call:
    """``torch.cumsum(x, axis, dtype)``: integers and bools accumulate as ``i64``."""
    return apply(Cumsum(axis, None if dtype is None else as_dtype(dtype, "cumsum dtype")), x, span=span)


def cumprod(x: Operand, *, axis: int, dtype: DTypeLike | None = None, span: Span | None = None) -> Call:
    """``torch.cumprod(x, axis, dtype)``: integers and bools accumulate as ``i64``."""
    return apply(Cumprod(axis, None if dtype is None else as_dtype(dtype, "cumprod dtype")), x, span=span)


# -- indexing ---------------------------------------------------------------------------------


def gather(x: Operand, index: Operand, *, axis: int, span: Span | None = None) -> Call:
    """``torch.gather(x, axis, index)``: ``i64`` indices of ``x``'s rank; no wrap-around."""
    return apply(Gather(axis), x, index, span=span)


def index(x: Operand, *indices: Operand, axes: tuple[int, ...], span: Span | None = None) -> Call:
    """``x[...]`` with one integer index tensor per axis of ``axes`` (``aten.index.Tensor``); no wrap-around."""
    return apply(Index(axes), x, *indices, span=span)


def scatter(x: Operand, index: Operand, src: Operand, *, axis: int = 0, span: Span | None = None) -> Call:
    """``torch.scatter(x, axis, index, src)``; two writes to one position are an error."""
    return apply(Scatter(axis), x, index, src, span=span)


def scatter_add(x: Operand, index: Operand, src: Operand, *, axis: int = 0, span: Span | None = None) -> Call:
    """``torch.scatter_add(x, axis, index, src)``: repeated indices accumulate."""
    return apply(ScatterAdd(axis), x, index, src, span=span)


# -- rearranging ------------------------------------------------------------------------------


def flip(x: Operand, *, axes: tuple[int, ...], span: Span | None = None) -> Call:
    """``torch.flip(x, axes)``."""
    return apply(Flip(axes), x, span=span)


def roll(x: Operand, *, shifts: tuple[int, ...], axes: tuple[int, ...] | None = None, span: Span | None = None) -> Call:
    """``torch.roll(x, shifts, axes)`` (``axes=None``: the flattened value)."""
    return apply(Roll(shifts, axes), x, span=span)


def diagonal(x: Operand, *, offset: int = 0, axis1: int = 0, axis2: int = 1, span: Span | None = None) -> Call:
    """``torch.diagonal(x, offset, axis1, axis2)``: the diagonal as a new last axis."""
    return apply(Diagonal(offset, axis1, axis2), x, span=span)


def triu(x: Operand, *, diagonal: int = 0, span: Span | None = None) -> Call:
    """``torch.triu(x, diagonal)``: zeros below the diagonal."""
    return apply(Triu(diagonal), x, span=span)


def tril(x: Operand, *, diagonal: int = 0, span: Span | None = None) -> Call:
    """``torch.tril(x, diagonal)``: zeros above the diagonal."""
    return apply(Tril(diagonal), x, span=span)


def pad(
    x: Operand, *, pads: tuple[int, ...], mode: PadMode = "constant", value: float = 0.0, span: Span | None = None
) -> Call:
    """``F.pad(x, pads, mode, value)``: (before, after) pairs from the last axis."""
    return apply(Pad(pads, mode, value), x, span=span)


# -- sorting ----------------------------------------------------------------------------------


def sort(x: Operand, *, axis: int = -1, descending: bool = False, span: Span | None = None) -> Call:
    """The values of ``torch.sort(x, axis, descending, stable=True)``."""
    return apply(Sort(axis, descending), x, span=span)


def argsort(x: Operand, *, axis: int = -1, descending: bool = False, span: Span | None = None) -> Call:
    """``torch.argsort(x, axis, descending, stable=True)``."""
    return apply(Argsort(axis, descending), x, span=span)


def topk(x: Operand, *, k: int, axis: int = -1, largest: bool = True, span: Span | None = None) -> Call:
    """The values of ``torch.topk(x, k, axis, largest)``, in order."""
    return apply(TopK(k, axis, largest), x, span=span)


def argtopk(x: Operand, *, k: int, axis: int = -1, largest: bool = True, span: Span | None = None) -> Call:
    """The indices of ``topk``'s values; of equal values, the lower index first."""
    return apply(ArgTopK(k, axis, largest), x, span=span)


# -- logical reductions and norms -----------------------------------------------------------


def any(x: Operand, *, axes: tuple[int, ...] | None = None, keepdims: bool = False, span: Span | None = None) -> Call:  # noqa: A001
    """``torch.any(x, axes, keepdims)`` (``axes=None``: every axis)."""
    return apply(ReduceAny(axes, keepdims), x, span=span)


def all(x: Operand, *, axes: tuple[int, ...] | None = None, keepdims: bool = False, span: Span | None = None) -> Call:  # noqa: A001
    """``torch.all(x, axes, keepdims)`` (``axes=None``: every axis)."""
    return apply(ReduceAll(axes, keepdims), x, span=span)


def vector_norm(
    x: Operand, *, ord: float = 2.0, axes: tuple[int, ...] | None = None, keepdims: bool = False,  # noqa: A002
    span: Span | None = None,
) -> Call:
    """``torch.linalg.vector_norm(x, ord, axes, keepdims)``; floating input only."""
    return apply(VectorNorm(ord, axes, keepdims), x, span=span)


def histc(x: Operand, *, bins: int = 100, min: float = 0.0, max: float = 0.0, span: Span | None = None) -> Call:  # noqa: A002
    """``torch.histc(x, bins, min, max)``: counts of ``x``'s elements in ``bins`` equal bins
    over ``[min, max]`` (``min == max``: ``x``'s own range); floating input only."""
    return apply(Histc(bins, float(min), float(max)), x, span=span)


__all__ = [
    "cumsum", "cumprod", "gather", "index", "scatter", "scatter_add", "flip", "roll", "diagonal", "triu", "tril", "pad",
    "sort", "argsort", "topk", "argtopk", "any", "all", "vector_norm", "histc",
]
