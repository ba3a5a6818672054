"""Indexing: ``gather`` along an axis, advanced ``index`` with several index tensors, and
``scatter`` / ``scatter_add``.

Indices count from 0 and never wrap: a negative or out-of-range index is an ``EvalError``
at run time (hir.md §ops), where torch would wrap a negative one or fail in its kernel.
"""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dims import ShapeDim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.attrs import check_int, check_ints
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite, normalize_axis
from tfexec.ir.ops.promotion import broadcast_shapes, tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type

INDEX_DTYPES = (DType.int32, DType.int64)
"""The dtypes the indexing ops take as indices (torch's ``long`` and ``int``)."""


def _no_longer(op: Op, a: TensorType, what_a: str, b: TensorType, what_b: str, skip: int | None, label: str) -> None:
    """Every static size of ``a`` is at most ``b``'s on the same axis (but ``skip``)."""
    for i, (da, db) in enumerate(zip(a.shape, b.shape)):
        if i != skip and isinstance(da, int) and isinstance(db, int) and da > db:
            raise TypeRuleError(
                f"{op.name}: axis {i} of {what_a} {a} has size {da}, more than the {db} of {what_b} {b}{cite(op.name, label)}"
            )


@dataclass(frozen=True, slots=True)
class Gather(Op):
    """Pick elements of ``x`` along ``axis`` at ``index``: ``out[i][j] = x[index[i][j]][j]`` for ``axis=0``.

    Type rule: ``index``'s shape, with ``x``'s dtype.
    Value rule: ``torch.gather(x, axis, index)`` on the run's device. A negative or
    out-of-range index is an ``EvalError``, never a wrap-around.
    Constraints:
        (C1) ``index`` is ``i32`` or ``i64`` (as torch requires).
        (C2) ``index`` has ``x``'s rank.
        (C3) ``axis`` is in range for ``x``'s rank.
        (C4) on every axis but ``axis``, ``index`` is no longer than ``x`` (static sizes are
        checked by the type rule, the others at run time).
        (C5) at run time every index is in ``0 .. x.shape[axis] - 1``.
    Example: def example(x: f32[2, 3]): return gather(x, constant([[2, 0], [1, 1]], dtype=i64), axis=1)
    Refused (C1): def example(x: f32[2, 3], i: i16[2, 3]): return gather(x, i, axis=1)
    Refused (C2): def example(x: f32[2, 3], i: i64[3]): return gather(x, i, axis=1)
    Refused (C3): def example(x: f32[2, 3], i: i64[2, 3]): return gather(x, i, axis=2)
    Refused (C4): def example(x: f32[2, 3], i: i64[3, 3]): return gather(x, i, axis=1)
    Refused (C5): def example(x: f32[2, 3], i: i64[2, 3]): return gather(x, i, axis=1)
    """

    name: ClassVar[str] = "gather"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2
    axis: int = 0

    def __post_init__(self) -> None:
        check_int("gather", "axis", self.axis)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x, index = tensor_args(self.name, args)
        if index.dtype not in INDEX_DTYPES:
            raise TypeRuleError(f"gather index must be i32 or i64, found {index} (cast it first){cite(self.name, 'C1')}")
        if index.rank != x.rank:
            raise TypeRuleError(f"gather index {index} must have the rank of {x} ({x.rank}){cite(self.name, 'C2')}")
        axis = normalize_axis(self, self.axis, max(x.rank, 1), "C3")
        _no_longer(self, index, "index", x, "x", axis, "C4")
        return TensorType(index.shape, x.dtype)


@dataclass(frozen=True, slots=True)
class Index(Op):
    """Advanced indexing: ``x[..., i0, ..., i1, ...]`` with one integer index tensor per axis in ``axes``.

    The index tensors broadcast together to one shape ``I``; each output element picks
    ``x`` at the indices found at its position in ``I`` (the other axes are kept whole).
    This is ``aten.index.Tensor``, what ``x[idx]``, ``x[:, rows, cols]`` and the mask-building
    code of ``transformers`` compile to.

    Type rule: with ``axes`` adjacent, ``x``'s shape with those axes replaced by ``I``;
    otherwise ``I`` followed by the axes not indexed (torch's and NumPy's rule). The dtype
    is ``x``'s.
    Value rule: ``x[idx]`` (``torch.Tensor.__getitem__``, i.e. ``aten.index``) with each
    index tensor at its axis and full slices elsewhere. A negative or out-of-range index is
    an ``EvalError``, never a wrap-around.
    Constraints:
        (C1) ``axes`` has one axis per index operand, each in range for ``x``'s rank,
        strictly increasing.
        (C2) every index is ``i32`` or ``i64`` (a ``b1`` mask gives a data-dependent shape).
        (C3) the index shapes broadcast.
        (C4) at run time every index is in ``0 .. x.shape[axis] - 1`` for its axis.
    Example: def example(x: f32[3, 4]): return index(x, constant([2, 0], dtype=i64), constant([[1], [3]], dtype=i64), axes=(0, 1))
    Example: def example(x: f32[2, 3, 4]): return index(x, constant([0, 2], dtype=i64), axes=(1,))
    Refused (C1): def example(x: f32[3, 4], i: i64[2]): return index(x, i, i, axes=(1, 0))
    Refused (C2): def example(x: f32[3, 4], m: b1[3]): return index(x, m, axes=(0,))
    Refused (C3): def example(x: f32[3, 4], i: i64[2], j: i64[3]): return index(x, i, j, axes=(0, 1))
    Refused (C4): def example(x: f32[3, 4], i: i64[4]): return index(x, i, axes=(0,))
    """

    name: ClassVar[str] = "index"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = None
    axes: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        check_ints("index", "axes", self.axes)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x, *indices = tensor_args(self.name, args)
        axes = self.normalized_axes(x.rank, len(indices))
        for i, idx in enumerate(indices):
            if idx.dtype not in INDEX_DTYPES:
                raise TypeRuleError(
                    f"index operand {i + 1} must be i32 or i64, found {idx}"
                    f"{' (a bool mask selects a data-dependent number of elements)' if idx.dtype is DType.bool else ''}"
                    f"{cite(self.name, 'C2')}"
                )
        picked = broadcast_shapes(self.name, *(idx.shape for idx in indices), label="C3")
        return TensorType(self.result_shape(x.shape, axes, picked), x.dtype)

    def normalized_axes(self, rank: int, count: int) -> tuple[int, ...]:
        """``axes`` made non-negative, or a ``TypeRuleError`` citing (C1)."""
        if len(self.axes) != count:
            raise TypeRuleError(f"index has {count} index operand(s) but axes {self.axes} names {len(self.axes)}{cite(self.name, 'C1')}")
        axes = tuple(normalize_axis(self, a, rank, "C1") for a in self.axes)
        if any(b <= a for a, b in zip(axes, axes[1:])):
            raise TypeRuleError(f"index axes {self.axes} must be strictly increasing{cite(self.name, 'C1')}")
        return axes

    @staticmethod
    def result_shape(shape: tuple[ShapeDim, ...], axes: tuple[int, ...], picked: tuple[ShapeDim, ...]) -> tuple[ShapeDim, ...]:
        """torch's result shape: ``picked`` in place of adjacent ``axes``, else in front."""
        rest = tuple(d for i, d in enumerate(shape) if i not in axes)
        if axes == tuple(range(axes[0], axes[0] + len(axes))):
            return shape[: axes[0]] + picked + shape[axes[-1] + 1 :]
        return picked + rest


@dataclass(frozen=True, slots=True)
class ScatterOp(Op):
    """Base of the scatters: ``x`` with ``src``'s elements written along ``axis`` at ``index``.

    For ``axis=0``, element ``src[i][j]`` goes to ``out[index[i][j]][j]``; positions no index
    names keep ``x``'s value. Only the leading ``index.shape`` block of ``src`` is read.

    Type rule: ``x``'s type.
    Constraints:
        (C1) ``index`` is ``i32`` or ``i64`` (as torch requires).
        (C2) ``x``, ``index`` and ``src`` have one rank.
        (C3) ``axis`` is in range for ``x``'s rank.
        (C4) ``index`` is no longer than ``src`` on any axis, nor than ``x`` on any axis but
        ``axis`` (static sizes are checked by the type rule, the others at run time).
        (C5) ``src`` has ``x``'s dtype (torch does not convert it).
        (C6) at run time every index is in ``0 .. x.shape[axis] - 1``.
    Refused (C1): def example(x: f32[3], i: i16[2], s: f32[2]): return {op}(x, i, s)
    Refused (C2): def example(x: f32[3], i: i64[2, 1], s: f32[2]): return {op}(x, i, s)
    Refused (C3): def example(x: f32[3], i: i64[2], s: f32[2]): return {op}(x, i, s, axis=1)
    Refused (C4): def example(x: f32[3], i: i64[2], s: f32[1]): return {op}(x, i, s)
    Refused (C5): def example(x: f32[3], i: i64[2], s: f16[2]): return {op}(x, i, s)
    Refused (C6): def example(x: f32[3], i: i64[2], s: f32[2]): return {op}(x, i, s)
    """

    min_args: ClassVar[int] = 3
    max_args: ClassVar[int | None] = 3
    axis: int = 0

    def __post_init__(self) -> None:
        check_int(self.name, "axis", self.axis)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x, index, src = tensor_args(self.name, args)
        if index.dtype not in INDEX_DTYPES:
            raise TypeRuleError(f"{self.name} index must be i32 or i64, found {index} (cast it first){cite(self.name, 'C1')}")
        if not x.rank == index.rank == src.rank:
            raise TypeRuleError(f"{self.name} needs x, index and src of one rank, found {x}, {index} and {src}{cite(self.name, 'C2')}")
        axis = normalize_axis(self, self.axis, max(x.rank, 1), "C3")
        _no_longer(self, index, "index", src, "src", None, "C4")
        _no_longer(self, index, "index", x, "x", axis, "C4")
        if src.dtype is not x.dtype:
            raise TypeRuleError(f"{self.name} src {src} must have the dtype of x {x} (cast it first){cite(self.name, 'C5')}")
        return TensorType(x.shape, x.dtype)


@dataclass(frozen=True, slots=True)
class Scatter(ScatterOp):
    """Write ``src`` into ``x`` along ``axis`` at ``index`` (``torch.scatter``).

    Value rule: ``torch.scatter(x, axis, index, src)`` on the run's device. torch leaves the
    result open when two entries of ``index`` name one position; here that is an
    ``EvalError`` (C7), so every result is determined.
    Constraints:
        (C7) at run time no two entries of ``index`` name the same position of the result.
    Example: def example(x: f32[2, 3], s: f32[2, 3]): return scatter(x, constant([[2, 0, 1], [0, 1, 2]], dtype=i64), s, axis=1)
    Refused (C7): def example(x: f32[3], s: f32[2]): return scatter(x, constant([1, 1], dtype=i64), s)
    """

    name: ClassVar[str] = "scatter"
    min_args: ClassVar[int] = 3
    max_args: ClassVar[int | None] = 3


@dataclass(frozen=True, slots=True)
class ScatterAdd(ScatterOp):
    """Add ``src`` into ``x`` along ``axis`` at ``index`` (``torch.scatter_add``); repeated indices accumulate.

    Value rule: ``torch.scatter_add(x, axis, index, src)`` on the run's device. Entries that
    name one position are added in index order (torch's CPU kernel is sequential, so a
    floating result is bitwise reproducible on CPU; other devices may add in another order).
    Example: def example(x: f32[3], s: f32[4]): return scatter_add(x, constant([0, 2, 0, 1], dtype=i64), s)
    """

    name: ClassVar[str] = "scatter_add"
    min_args: ClassVar[int] = 3
    max_args: ClassVar[int | None] = 3


INDEXING_OPS: tuple[type[Op], ...] = (Gather, Index, Scatter, ScatterAdd)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def gather(x: ExprLike, index: ExprLike, *, axis: int, span: Span | None = None) -> Call:
    """``torch.gather(x, axis, index)``: ``i64`` indices of ``x``'s rank; no wrap-around."""
    return apply(Gather(axis), x, index, span=span)


def index(x: ExprLike, *indices: ExprLike, axes: tuple[int, ...], span: Span | None = None) -> Call:
    """``x[...]`` with one integer index tensor per axis of ``axes`` (``aten.index.Tensor``); no wrap-around."""
    return apply(Index(axes), x, *indices, span=span)


def scatter(x: ExprLike, index: ExprLike, src: ExprLike, *, axis: int = 0, span: Span | None = None) -> Call:
    """``torch.scatter(x, axis, index, src)``; two writes to one position are an error."""
    return apply(Scatter(axis), x, index, src, span=span)


def scatter_add(x: ExprLike, index: ExprLike, src: ExprLike, *, axis: int = 0, span: Span | None = None) -> Call:
    """``torch.scatter_add(x, axis, index, src)``: repeated indices accumulate."""
    return apply(ScatterAdd(axis), x, index, src, span=span)
