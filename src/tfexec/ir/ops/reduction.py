"""Reductions: ``reduce`` (sum, mean, max, min, prod) and ``argmax``.

hir.md fixes what torch leaves open: ``axes=None`` reduces every axis, ``axes=()``
reduces none (the identity, dtype unchanged); over a zero-length axis ``sum`` gives 0,
``prod`` 1, ``mean`` NaN and ``max``/``min`` are an error; ``argmax`` gives the first
maximal index.
"""

from dataclasses import dataclass
from typing import ClassVar, Literal

from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, normalize_axis
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.types import TensorType, Type

ReduceKind = Literal["sum", "mean", "max", "min", "prod"]
REDUCE_KINDS: tuple[str, ...] = ("sum", "mean", "max", "min", "prod")


def _check_axes(owner: str, axes: object) -> None:
    if axes is None:
        return
    if not isinstance(axes, tuple) or not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
        raise TypeError(f"{owner} axes must be None or a tuple of ints, got {axes!r}")


def reduced_axes(op: Op, axes: tuple[int, ...] | None, rank: int) -> tuple[int, ...]:
    """``axes`` normalised (non-negative, sorted); None means every axis. Duplicates are an error."""
    if axes is None:
        return tuple(range(rank))
    norm = tuple(sorted(normalize_axis(op, a, rank) for a in axes))
    if len(set(norm)) != len(norm):
        raise TypeRuleError(f"{op.name}: axes {axes} name an axis twice")
    return norm


@dataclass(frozen=True, slots=True)
class Reduce(Op):
    """Reduce ``x`` over ``axes`` with ``kind``; ``sum``/``prod`` of ints or bools give int64,
    ``mean`` needs a floating operand, ``max``/``min`` keep the dtype."""

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
        axes = reduced_axes(self, self.axes, x.rank)
        if self.axes == ():
            return TensorType(x.shape, x.dtype)
        dtype = x.dtype
        if self.kind in ("sum", "prod") and not dtype.is_floating:
            dtype = DType.int64
        if self.kind == "mean" and not dtype.is_floating:
            raise TypeRuleError(f"reduce mean needs a floating operand, found {x} (cast it first)")
        if self.kind in ("max", "min"):
            for a in axes:
                if x.shape[a] == 0:
                    raise TypeRuleError(
                        f"reduce {self.kind} over axis {a} of {x} has no value: the axis has length 0"
                        " (expected a non-empty axis)"
                    )
        shape = tuple((1 if i in axes else d) for i, d in enumerate(x.shape) if self.keepdims or i not in axes)
        return TensorType(shape, dtype)


@dataclass(frozen=True, slots=True)
class ArgMax(Op):
    """``torch.argmax(x, axis, keepdims)`` → int64, the first maximal index; not for bool."""

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
            raise TypeRuleError(f"argmax is not defined for bool (torch rejects it), found {x}; cast first")
        axis = normalize_axis(self, self.axis, x.rank)
        if x.shape[axis] == 0:
            raise TypeRuleError(f"argmax over axis {axis} of {x} has no value: the axis has length 0 (expected a non-empty axis)")
        shape = tuple((1 if i == axis else d) for i, d in enumerate(x.shape) if self.keepdims or i != axis)
        return TensorType(shape, DType.int64)
