"""Reductions: ``reduce`` (sum, mean, max, min, prod) and ``argmax``, with the decisions
hir.md fixes where torch leaves them open (stated in each op's docstring)."""

from dataclasses import dataclass
from typing import ClassVar, Literal

from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite, normalize_axis
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type

ReduceKind = Literal["sum", "mean", "max", "min", "prod"]
REDUCE_KINDS: tuple[str, ...] = ("sum", "mean", "max", "min", "prod")


def _check_axes(owner: str, axes: object) -> None:
    if axes is None:
        return
    if not isinstance(axes, tuple) or not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
        raise TypeError(f"{owner} axes must be None or a tuple of ints, got {axes!r}")


def reduced_axes(op: Op, axes: tuple[int, ...] | None, rank: int, label: str | None = None) -> tuple[int, ...]:
    """``axes`` normalised (non-negative, sorted); None means every axis. Duplicates are an
    error (citing constraint ``label`` of ``op`` when given, as an axis out of range does)."""
    if axes is None:
        return tuple(range(rank))
    norm = tuple(sorted(normalize_axis(op, a, rank, label) for a in axes))
    if len(set(norm)) != len(norm):
        raise TypeRuleError(f"{op.name}: axes {axes} name an axis twice{cite(op.name, label)}")
    return norm


@dataclass(frozen=True, slots=True)
class Reduce(Op):
    """Reduce ``x`` over ``axes`` with ``kind`` (``sum``, ``mean``, ``max``, ``min`` or ``prod``).

    Type rule: ``x``'s shape without the reduced axes (with each kept as size 1 when
    ``keepdims``); ``axes=None`` reduces every axis, ``axes=()`` none (the result is ``x``'s
    type). The dtype is ``x``'s, except that ``sum`` and ``prod`` of an integer or ``b1``
    operand give ``i64``.
    Value rule: ``torch.sum``, ``torch.mean``, ``torch.amax``, ``torch.amin`` over ``axes``
    (``keepdim=keepdims``); ``prod`` over several axes is one ``torch.prod`` over them
    flattened. hir.md fixes what torch leaves open: ``axes=()`` is the identity, and over a
    zero-length axis ``sum`` gives 0, ``prod`` 1 and ``mean`` NaN. Parallel float sums
    reproduce bitwise only at a fixed thread count.
    Constraints:
        (C1) every axis is in range for ``x``'s rank (negative axes count from the end) and
        none is named twice.
        (C2) ``mean`` needs a floating ``x`` (unless ``axes=()``).
        (C3) ``max`` and ``min`` reduce no zero-length axis: there is no value to return.
    Example: def example(x: f32[2, 3]): return reduce(x, kind="sum", axes=(1,))
    Example: def example(x: i32[2, 3]): return reduce(x, kind="max", keepdims=True)
    Refused (C1): def example(x: f32[2, 3]): return reduce(x, kind="sum", axes=(1, -1))
    Refused (C2): def example(x: i32[3]): return reduce(x, kind="mean")
    Refused (C3): def example(x: f32[0, 3]): return reduce(x, kind="max", axes=(0,))
    """

    name: ClassVar[str] = "reduce"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    kind: ReduceKind = "sum"
    axes: tuple[int, ...] | None = None
    keepdims: bool = False

    def __post_init__(self) -> None:
        if self.kind not in REDUCE_KINDS:
            raise TypeError(f"reduce kind must be one of {', '.join(REDUCE_KINDS)}, got {self.kind!r}")
        _check_axes("reduce", self.axes)
        if not isinstance(self.keepdims, bool):
            raise TypeError(f"reduce keepdims must be a bool, got {self.keepdims!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        axes = reduced_axes(self, self.axes, x.rank, "C1")
        if self.axes == ():
            return TensorType(x.shape, x.dtype)
        dtype = x.dtype
        if self.kind in ("sum", "prod") and not dtype.is_floating:
            dtype = DType.int64
        if self.kind == "mean" and not dtype.is_floating:
            raise TypeRuleError(f"reduce mean needs a floating operand, found {x} (cast it first){cite(self.name, 'C2')}")
        if self.kind in ("max", "min"):
            for a in axes:
                if x.shape[a] == 0:
                    raise TypeRuleError(
                        f"reduce {self.kind} over axis {a} of {x} has no value: the axis has length 0"
                        f" (expected a non-empty axis){cite(self.name, 'C3')}"
                    )
        shape = tuple((1 if i in axes else d) for i, d in enumerate(x.shape) if self.keepdims or i not in axes)
        return TensorType(shape, dtype)


@dataclass(frozen=True, slots=True)
class ArgMax(Op):
    """The index of the maximum of ``x`` along ``axis``.

    Type rule: ``x``'s shape without ``axis`` (kept as size 1 when ``keepdims``), dtype ``i64``.
    Value rule: ``torch.argmax(x, dim=axis, keepdim=keepdims)``; of several maximal
    elements, the first index (hir.md fixes it).
    Constraints:
        (C1) ``x`` is not ``b1`` (torch refuses it).
        (C2) ``axis`` is in range for ``x``'s rank.
        (C3) the axis is not zero-length: there is no index to return.
    Example: def example(x: f32[2, 3]): return argmax(x, axis=1)
    Example: def example(x: i32[2, 2]): return argmax(x, axis=0, keepdims=True)
    Refused (C1): def example(x: b1[3]): return argmax(x)
    Refused (C2): def example(x: f32[2, 3]): return argmax(x, axis=2)
    Refused (C3): def example(x: f32[2, 0]): return argmax(x, axis=1)
    """

    name: ClassVar[str] = "argmax"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    axis: int = -1
    keepdims: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.axis, int) or isinstance(self.axis, bool):
            raise TypeError(f"argmax axis must be an int, got {self.axis!r}")
        if not isinstance(self.keepdims, bool):
            raise TypeError(f"argmax keepdims must be a bool, got {self.keepdims!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        if x.dtype is DType.bool:
            raise TypeRuleError(f"argmax is not defined for bool (torch rejects it), found {x}; cast first{cite(self.name, 'C1')}")
        axis = normalize_axis(self, self.axis, x.rank, "C2")
        if x.shape[axis] == 0:
            raise TypeRuleError(
                f"argmax over axis {axis} of {x} has no value: the axis has length 0 (expected a non-empty axis)"
                f"{cite(self.name, 'C3')}"
            )
        shape = tuple((1 if i == axis else d) for i, d in enumerate(x.shape) if self.keepdims or i != axis)
        return TensorType(shape, DType.int64)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def reduce(
    x: ExprLike, *, kind: ReduceKind, axes: tuple[int, ...] | None = None, keepdims: bool = False, span: Span | None = None
) -> Call:
    """Reduce over ``axes`` (None: every axis; ``()``: none) with ``kind`` sum/mean/max/min/prod."""
    return apply(Reduce(kind, axes, keepdims), x, span=span)


def argmax(x: ExprLike, *, axis: int = -1, keepdims: bool = False, span: Span | None = None) -> Call:
    """``torch.argmax(x, axis, keepdims)``: the first maximal index, as int64."""
    return apply(ArgMax(axis, keepdims), x, span=span)
