"""Sorting: ``sort`` and ``argsort``, ``topk`` and ``argtopk`` along one axis.

torch returns values and indices together; here each is its own op (a value rule computes
one tensor), and the frontend pairs them. The order of equal elements is fixed, where
torch leaves it open: every sort is stable (equal elements keep their order, so the lower
index comes first), and ``topk`` is the first ``k`` of that stable sort. NaN sorts above
every number, as in torch.
"""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.attrs import check_bool, check_int
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite, normalize_axis
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class SortOp(Op):
    """Base of ``sort`` and ``argsort``.

    Constraints:
        (C1) ``axis`` is in range for ``x``'s rank (a rank-0 ``x`` counts as rank 1).
    Example: def example(x: f32[2, 3]): return {op}(x, axis=1)
    Example: def example(x: i32[5]): return {op}(x, descending=True)
    Refused (C1): def example(x: f32[2, 3]): return {op}(x, axis=2)
    """

    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    axis: int = -1
    descending: bool = False

    def __post_init__(self) -> None:
        check_int(self.name, "axis", self.axis)
        check_bool(self.name, "descending", self.descending)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        normalize_axis(self, self.axis, max(x.rank, 1), "C1")
        return TensorType(x.shape, self.result_dtype(x))

    def result_dtype(self, x: TensorType) -> DType:
        """The dtype of the result for operand ``x``."""
        return x.dtype


@dataclass(frozen=True, slots=True)
class Sort(SortOp):
    """``x`` sorted along ``axis``, ascending (descending when ``descending``).

    Type rule: ``x``'s type.
    Value rule: the values of ``torch.sort(x, dim=axis, descending=descending, stable=True)``.
    """

    name: ClassVar[str] = "sort"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class Argsort(SortOp):
    """The indices that sort ``x`` along ``axis`` (stable: equal elements keep their order).

    Type rule: ``x``'s shape, dtype ``i64``.
    Value rule: ``torch.argsort(x, dim=axis, descending=descending, stable=True)``: the
    indices of ``sort``'s values.
    """

    name: ClassVar[str] = "argsort"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1

    def result_dtype(self, x: TensorType) -> DType:
        return DType.int64


@dataclass(frozen=True, slots=True)
class TopKOp(Op):
    """Base of ``topk`` and ``argtopk``: the ``k`` largest (``largest=False``: smallest) elements along ``axis``, in order.

    Type rule: ``x``'s shape with ``axis`` of size ``k``.
    Constraints:
        (C1) ``axis`` is in range for ``x``'s rank (a rank-0 ``x`` counts as rank 1).
        (C2) ``k`` is at most the size of ``axis`` (checked at run time when it is symbolic).
        (C3) ``x`` is not ``b1`` (torch refuses it).
    Example: def example(x: f32[2, 3]): return {op}(x, k=2)
    Example: def example(x: i32[5]): return {op}(x, k=3, largest=False)
    Refused (C1): def example(x: f32[2, 3]): return {op}(x, k=1, axis=2)
    Refused (C2): def example(x: f32[2, 3]): return {op}(x, k=4)
    Refused (C3): def example(x: b1[3]): return {op}(x, k=1)
    """

    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    k: int = 1
    axis: int = -1
    largest: bool = True

    def __post_init__(self) -> None:
        check_int(self.name, "k", self.k, minimum=0)
        check_int(self.name, "axis", self.axis)
        check_bool(self.name, "largest", self.largest)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        if x.dtype is DType.bool:
            raise TypeRuleError(f"{self.name} is not defined for bool (torch rejects it), found {x}; cast first{cite(self.name, 'C3')}")
        axis = normalize_axis(self, self.axis, max(x.rank, 1), "C1")
        size = x.shape[axis] if x.rank else 1
        if isinstance(size, int) and self.k > size:
            raise TypeRuleError(f"{self.name} k={self.k} is more than the {size} elements of axis {axis} of {x}{cite(self.name, 'C2')}")
        shape = tuple(self.k if i == axis else d for i, d in enumerate(x.shape))
        return TensorType(shape, self.result_dtype(x))

    def result_dtype(self, x: TensorType) -> DType:
        """The dtype of the result for operand ``x``."""
        return x.dtype


@dataclass(frozen=True, slots=True)
class TopK(TopKOp):
    """The ``k`` largest elements of ``x`` along ``axis``, largest first (``largest=False``: the smallest, smallest first).

    Type rule: ``x``'s shape with ``axis`` of size ``k``, ``x``'s dtype.
    Value rule: the first ``k`` values of ``sort(x, axis, descending=largest)``, which are
    the values of ``torch.topk(x, k, dim=axis, largest=largest)``.
    """

    name: ClassVar[str] = "topk"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class ArgTopK(TopKOp):
    """The indices of ``topk``'s elements: of equal elements, the lower index first.

    Type rule: ``x``'s shape with ``axis`` of size ``k``, dtype ``i64``.
    Value rule: the first ``k`` indices of ``argsort(x, axis, descending=largest)`` (stable).
    ``torch.topk`` leaves the choice among equal elements open; this fixes it.
    """

    name: ClassVar[str] = "argtopk"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1

    def result_dtype(self, x: TensorType) -> DType:
        return DType.int64


SORTING_OPS: tuple[type[Op], ...] = (Sort, Argsort, TopK, ArgTopK)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def sort(x: ExprLike, *, axis: int = -1, descending: bool = False, span: Span | None = None) -> Call:
    """The values of ``torch.sort(x, axis, descending, stable=True)``."""
    return apply(Sort(axis, descending), x, span=span)


def argsort(x: ExprLike, *, axis: int = -1, descending: bool = False, span: Span | None = None) -> Call:
    """``torch.argsort(x, axis, descending, stable=True)``."""
    return apply(Argsort(axis, descending), x, span=span)


def topk(x: ExprLike, *, k: int, axis: int = -1, largest: bool = True, span: Span | None = None) -> Call:
    """The values of ``torch.topk(x, k, axis, largest)``, in order."""
    return apply(TopK(k, axis, largest), x, span=span)


def argtopk(x: ExprLike, *, k: int, axis: int = -1, largest: bool = True, span: Span | None = None) -> Call:
    """The indices of ``topk``'s values; of equal values, the lower index first."""
    return apply(ArgTopK(k, axis, largest), x, span=span)
