"""Shape ops: ``reshape``, ``transpose``, ``broadcast_to``, ``concat``, ``slice``, ``take``.

Sizes in attributes are ``ShapeDim``s, resolved through the run's dim bindings.
"""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.errors import IRConstructionError
from tfexec.ir.dims import ShapeDim, dim_expr, is_shape_dim, shape_product
from tfexec.ir.expr import Call, Expr, Tuple
from tfexec.ir.operands import EXPR_CLASSES, Operand as ExprLike, apply, as_expr, short
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite, normalize_axis
from tfexec.ir.ops.promotion import TensorTypeShape, promote, tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, TupleType, Type


def _check_dims(owner: str, field: str, dims: object) -> None:
    if not isinstance(dims, tuple) or not all(is_shape_dim(d) for d in dims):
        raise TypeError(f"{owner} {field} must be a tuple of int/DimVar/DimExpr, got {dims!r}")
    if any(isinstance(d, int) and d < 0 for d in dims):
        raise TypeError(f"{owner} {field} must not contain negative sizes, got {dims!r}")


@dataclass(frozen=True, slots=True)
class Reshape(Op):
    """A logical reshape of ``x`` to ``shape``: the same elements in row-major order.

    The way to regroup an axis, e.g. ``(S, H*D)`` to ``(S, H, D)`` before a per-head norm
    (evaluator spec §6).

    Type rule: ``shape``, with ``x``'s dtype.
    Value rule: ``x.reshape(shape)`` with ``shape``'s dims resolved through the run's dim
    bindings.
    Constraints:
        (C1) the element counts agree. Counts that provably differ are a type error: two
        static counts, or one product of the same DimVars with different constant factors
        (``B*2`` against ``B*3``; they could only agree for ``B == 0``). Counts over
        different DimVars (``B`` against ``6``) are checked at run time, an ``EvalError``.
    Example: def example(x: f32[2, 3]): return reshape(x, shape=(3, 2))
    Refused (C1): def example(x: f32[2, 3]): return reshape(x, shape=(4, 2))
    """

    name: ClassVar[str] = "reshape"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    shape: tuple[ShapeDim, ...] = ()

    def __post_init__(self) -> None:
        _check_dims("reshape", "shape", self.shape)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        before, after = shape_product(x.shape), shape_product(self.shape)
        if before is not None and after is not None and before[1] == after[1] and before[0] != after[0]:
            raise TypeRuleError(
                f"reshape cannot change the element count: {x} has {_count(before)} elements, "
                f"shape {TensorTypeShape(self.shape)} has {_count(after)}{cite(self.name, 'C1')}"
            )
        return TensorType(self.shape, x.dtype)


def _count(factors: tuple[int, tuple[str, ...]]) -> str:
    const, names = factors
    parts = ([str(const)] if const != 1 or not names else []) + list(names)
    return "*".join(parts)


@dataclass(frozen=True, slots=True)
class Transpose(Op):
    """Permute the axes of ``x``: output axis ``i`` is input axis ``perm[i]``.

    Type rule: ``x``'s shape permuted by ``perm``, with ``x``'s dtype.
    Value rule: ``x.permute(perm)``.
    Constraints:
        (C1) ``perm`` is a permutation of ``x``'s axes (negative entries count from the end).
    Example: def example(x: f32[2, 3]): return transpose(x, perm=(1, 0))
    Refused (C1): def example(x: f32[2, 3]): return transpose(x, perm=(0, 0))
    """

    name: ClassVar[str] = "transpose"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    perm: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.perm, tuple) or not all(isinstance(p, int) and not isinstance(p, bool) for p in self.perm):
            raise TypeError(f"transpose perm must be a tuple of ints, got {self.perm!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        norm = [normalize_axis(self, p, x.rank, "C1") for p in self.perm] if len(self.perm) == x.rank else None
        if norm is None or sorted(norm) != list(range(x.rank)):
            raise TypeRuleError(
                f"transpose perm {self.perm} is not a permutation of the {x.rank} axes of {x}{cite(self.name, 'C1')}"
            )
        return TensorType(tuple(x.shape[p] for p in norm), x.dtype)


@dataclass(frozen=True, slots=True)
class BroadcastTo(Op):
    """Broadcast ``x`` to ``shape``, aligning axes from the right.

    Type rule: ``shape``, with ``x``'s dtype.
    Value rule: ``x.broadcast_to(shape)`` with ``shape``'s dims resolved through the run's dim
    bindings (a view: no copy).
    Constraints:
        (C1) ``shape`` has at least ``x``'s rank.
        (C2) each axis of ``x`` is 1 or equal to the target axis it aligns with.
    Example: def example(x: f32[3]): return broadcast_to(x, shape=(2, 3))
    Refused (C1): def example(x: f32[2, 3]): return broadcast_to(x, shape=(3,))
    Refused (C2): def example(x: f32[2]): return broadcast_to(x, shape=(2, 3))
    """

    name: ClassVar[str] = "broadcast_to"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    shape: tuple[ShapeDim, ...] = ()

    def __post_init__(self) -> None:
        _check_dims("broadcast_to", "shape", self.shape)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        if x.rank > len(self.shape):
            raise TypeRuleError(f"broadcast_to cannot lower the rank: {x} to {TensorTypeShape(self.shape)}{cite(self.name, 'C1')}")
        offset = len(self.shape) - x.rank
        for i, d in enumerate(x.shape):
            if d != 1 and d != self.shape[offset + i]:
                raise TypeRuleError(
                    f"broadcast_to: axis {i} of {x} has size {d}, target {TensorTypeShape(self.shape)} needs "
                    f"{self.shape[offset + i]} (or 1){cite(self.name, 'C2')}"
                )
        return TensorType(self.shape, x.dtype)


@dataclass(frozen=True, slots=True)
class Concat(Op):
    """Concatenate the operands (one or more) along ``axis``.

    Type rule: the operands' shape with ``axis`` the sum of their sizes there; the dtype is
    torch's promotion of all of them.
    Value rule: ``torch.cat(xs, dim=axis)`` on the run's device.
    Constraints:
        (C1) ``axis`` is in range for the first operand's rank.
        (C2) the operands have one rank.
        (C3) the operands' sizes agree on every axis but ``axis``.
    Example: def example(a: f32[2, 2], b: i32[2, 1]): return concat(a, b, axis=1)
    Refused (C1): def example(a: f32[2, 2]): return concat(a, a, axis=2)
    Refused (C2): def example(a: f32[2, 2], b: f32[2]): return concat(a, b)
    Refused (C3): def example(a: f32[2, 2], b: f32[3, 3]): return concat(a, b, axis=1)
    """

    name: ClassVar[str] = "concat"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = None
    axis: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.axis, int) or isinstance(self.axis, bool):
            raise TypeError(f"concat axis must be an int, got {self.axis!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        types = tensor_args(self.name, args)
        first = types[0]
        axis = normalize_axis(self, self.axis, first.rank, "C1")
        total: ShapeDim = 0
        for t in types:
            if t.rank != first.rank:
                raise TypeRuleError(f"concat operands must share a rank, found {first} and {t}{cite(self.name, 'C2')}")
            for i, (a, b) in enumerate(zip(first.shape, t.shape)):
                if i != axis and a != b:
                    raise TypeRuleError(
                        f"concat operands differ off axis {axis}: {first} and {t} at axis {i}{cite(self.name, 'C3')}"
                    )
            total = dim_expr("add", total, t.shape[axis])
        shape = first.shape[:axis] + (total,) + first.shape[axis + 1 :]
        return TensorType(shape, promote(*((t, a.weak) for t, a in zip(types, args))))


@dataclass(frozen=True, slots=True)
class Slice(Op):
    """A strided window of ``x``: ``sizes[i]`` elements from ``starts[i]``, ``strides[i]`` apart.

    ``starts`` is a tuple of rank-0 integer operands, one per axis (static starts are
    constants; a start computed from a loop index is a ``dim_*`` call); ``sizes`` and
    ``strides`` (default all 1) are attributes.

    Type rule: ``sizes``, with ``x``'s dtype.
    Value rule: basic indexing ``x[start:start + (size - 1) * stride + 1:stride, ...]``, with
    sizes and strides resolved through the run's dim bindings (evaluator spec §4). A window
    running past the axis is an ``EvalError``, never a short tensor; a negative start is an
    ``EvalError`` too (starts never count from the end).
    Constraints:
        (C1) ``len(starts) == len(sizes) == len(strides) == rank(x)``.
        (C2) at run time every start is at least 0 and the window fits the axis:
        ``start + (size - 1) * stride < dim`` for ``size > 0``; otherwise ``EvalError``.
        (C3) where size, stride and axis length are static, a window that cannot fit the axis
        even at start 0 (``(size - 1) * stride >= dim``) is a type error.
        (C4) ``starts`` is a tuple of rank-0 integers.
    Example: def example(x: f32[4, 4]): return slice(x, (1, 0), sizes=(2, 2), strides=(1, 2))
    Refused (C1): def example(x: f32[4, 4]): return slice(x, (0,), sizes=(2,))
    Refused (C2): def example(x: f32[4]): return slice(x, (3,), sizes=(2,))
    Refused (C3): def example(x: f32[4]): return slice(x, (0,), sizes=(3,), strides=(2,))
    Refused (C4): def example(x: f32[4], s: f32[()]): return slice(x, (s,), sizes=(2,))
    """

    name: ClassVar[str] = "slice"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2
    sizes: tuple[ShapeDim, ...] = ()
    strides: tuple[ShapeDim, ...] | None = None

    def __post_init__(self) -> None:
        _check_dims("slice", "sizes", self.sizes)
        if self.strides is not None:
            _check_dims("slice", "strides", self.strides)
            if len(self.strides) != len(self.sizes):
                raise TypeError(f"slice needs one stride per size, got sizes {self.sizes} and strides {self.strides}")
            if any(isinstance(s, int) and s < 1 for s in self.strides):
                raise TypeError(f"slice strides must be positive, got {self.strides}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x, starts = args[0].type, args[1].type
        if not isinstance(x, TensorType):
            raise TypeRuleError(f"slice operand must be a tensor, found tuple {x}")
        if not isinstance(starts, TupleType):
            raise TypeRuleError(f"slice starts must be a tuple of rank-0 integers, found {starts}{cite(self.name, 'C4')}")
        if len(starts.fields) != x.rank or len(self.sizes) != x.rank:
            raise TypeRuleError(
                f"slice (C1): {x} has rank {x.rank} but got {len(starts.fields)} starts and {len(self.sizes)} sizes"
            )
        for i, s in enumerate(starts.fields):
            if not isinstance(s, TensorType) or s.rank != 0 or not (s.dtype.is_integral):
                raise TypeRuleError(f"slice start {i} must be a rank-0 integer, found {s}{cite(self.name, 'C4')}")
        strides = self.strides if self.strides is not None else (1,) * x.rank
        for axis, (dim, size, stride) in enumerate(zip(x.shape, self.sizes, strides)):
            if isinstance(dim, int) and isinstance(size, int) and isinstance(stride, int) and size > 0:
                span = (size - 1) * stride + 1
                if span > dim:
                    raise TypeRuleError(
                        f"slice (C3): a window of {size} with stride {stride} spans {span} elements, "
                        f"axis {axis} of {x} has only {dim}"
                    )
        return TensorType(self.sizes, x.dtype)


@dataclass(frozen=True, slots=True)
class Take(Op):
    """Gather the entries of ``x`` at ``indices`` along ``axis`` (the embedding lookup).

    Type rule: ``x.shape[:axis] + indices.shape + x.shape[axis+1:]``, with ``x``'s dtype.
    Value rule: ``torch.index_select(x, axis, indices)`` with the indices flattened (as
    ``i64``) and the result reshaped to the type's shape: ``torch.index_select`` generalised
    to any index shape. A negative or out-of-range index is an ``EvalError``, never a
    wrap-around.
    Constraints:
        (C1) ``indices`` are integers.
        (C2) ``axis`` is in range for ``x``'s rank.
        (C3) at run time every index is in ``0 .. x.shape[axis] - 1``.
    Example: def example(x: f32[3, 2]): return take(x, constant([[2, 0], [1, 1]], dtype=i64))
    Refused (C1): def example(x: f32[3, 2], i: f32[2]): return take(x, i)
    Refused (C2): def example(x: f32[3, 2], i: i64[2]): return take(x, i, axis=2)
    Refused (C3): def example(x: f32[3, 2], i: i64[3]): return take(x, i)
    """

    name: ClassVar[str] = "take"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2
    axis: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.axis, int) or isinstance(self.axis, bool):
            raise TypeError(f"take axis must be an int, got {self.axis!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x, idx = tensor_args(self.name, args)
        if not idx.dtype.is_integral:
            raise TypeRuleError(f"take indices must be integers, found {idx}{cite(self.name, 'C1')}")
        axis = normalize_axis(self, self.axis, x.rank, "C2")
        return TensorType(x.shape[:axis] + idx.shape + x.shape[axis + 1 :], x.dtype)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def reshape(x: ExprLike, *, shape: tuple[ShapeDim, ...], span: Span | None = None) -> Call:
    """A logical reshape to ``shape`` (same element count, row-major order)."""
    return apply(Reshape(shape), x, span=span)


def transpose(x: ExprLike, *, perm: tuple[int, ...], span: Span | None = None) -> Call:
    """``x.permute(perm)``."""
    return apply(Transpose(perm), x, span=span)


def broadcast_to(x: ExprLike, *, shape: tuple[ShapeDim, ...], span: Span | None = None) -> Call:
    """``x.broadcast_to(shape)``."""
    return apply(BroadcastTo(shape), x, span=span)


def concat(*xs: ExprLike, axis: int = 0, span: Span | None = None) -> Call:
    """``torch.cat(xs, axis)`` with dtype promotion."""
    return apply(Concat(axis), *xs, span=span)


def slice(  # noqa: A001 - the op's name
    x: ExprLike, starts: "Expr | tuple[ExprLike, ...]", *, sizes: tuple[ShapeDim, ...],
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


def take(x: ExprLike, indices: ExprLike, *, axis: int = 0, span: Span | None = None) -> Call:
    """Gather along ``axis`` (``torch.index_select`` for any index shape); no wrap-around."""
    return apply(Take(axis), x, indices, span=span)
