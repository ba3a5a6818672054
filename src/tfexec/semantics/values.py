"""Evaluated values (evaluator spec §1): ``Value``, ``TensorValue``, ``TupleValue``.

``Value = TensorValue | TupleValue`` is a closed union: code that takes a value apart
matches on the two classes and ends in ``assert_never``.
"""

from dataclasses import dataclass, field
from typing import TypeAlias, Union, assert_never

import torch

from tfexec.errors import EvalError, IRConstructionError
from tfexec.ir.dtypes import DType
from tfexec.ir.types import MAX_TUPLE_DEPTH, TUPLE_DEPTH_REFUSED, Layout, ShardLayout, TensorType, TupleType, Type

LayoutTree: TypeAlias = Union[Layout, ShardLayout, None, tuple["LayoutTree", ...]]
"""The layout(s) a value carries: one per tensor, in the value's tuple structure (a single
layout or None stands for every leaf of a tuple)."""


class _ValueBase:
    """The base of every evaluated value (evaluator spec §1: ``Value``)."""

    __slots__ = ()


@dataclass(slots=True, eq=False)
class TensorValue(_ValueBase):
    """A logical tensor value and its HIR type (concrete shape, dtype, layout).

    ``scalar`` is set when the value is a weak Python-scalar constant (core-ir §2), as a
    plain ``register_eval`` handler sees it in ``ctx.args``. Not frozen (a frozen dataclass
    pays for ``object.__setattr__`` per field on the visitor's per-node path); treat values
    as read-only.
    """

    data: torch.Tensor
    type: TensorType
    scalar: bool | int | float | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.type, TensorType):
            raise IRConstructionError(
                f"TensorValue.type must be a TensorType, got {type(self.type).__name__} {self.type!r}"
            )

    @property
    def layout(self) -> "Layout | ShardLayout | None":
        """The layout the value carries (its type's)."""
        return self.type.layout


class ComputedValue(TensorValue):
    """A ``TensorValue`` an op kernel made on the direct route: its ``type`` is made from its
    data and layout the first time someone reads it. Most such values are only ever read as
    tensors, by later kernels, and making a type costs more than a small op."""

    __slots__ = ("_layout", "_type")
    scalar = None  # never a weak scalar (and one attribute less to set)
    _type: TensorType

    def __init__(self, data: torch.Tensor, layout: "Layout | ShardLayout | None") -> None:  # noqa: D107
        self.data = data
        self._layout = layout

    @property
    def type(self) -> TensorType:
        try:
            return self._type
        except AttributeError:  # not read before: make it now
            t = self._type = type_of_data(self.data, self._layout)
            return t

    @type.setter
    def type(self, value: TensorType) -> None:
        self._type = value
        self._layout = value.layout

    @property
    def layout(self) -> "Layout | ShardLayout | None":
        return self._layout  # known without making the type


I64_MIN, I64_MAX = -(2**63), 2**63 - 1
"""The range of an index value (``i64[()]``): every host int a run holds as one lies in it —
``dim_*`` results are checked (their C3), loop indices and dim sizes are smaller — so making
its tensor never fails (proofs_notes, Lemma 15)."""


def index_tensor(i: int, device: "str | None") -> torch.Tensor:
    """An index value as a tensor: a rank-0 int64 on the run's device (the induction variable's
    value, a ``dim_*`` result). ``torch.scalar_tensor`` makes the same tensor as
    ``torch.tensor`` for an int64 in range, at less than half the cost."""
    return torch.scalar_tensor(i, dtype=torch.int64, device=device)


def host_indices(device: "str | None") -> bool:
    """Whether a run on ``device`` keeps index values as host ints (core-ir §2 allows it where
    nothing observable changes). Not on ``meta``: there, reading an index is an ``EvalError``,
    so indices stay tensors and every read of one fails as the spec says."""
    return device is None or not device.startswith("meta")


def observed(value: object, device: "str | None") -> object:
    """A run-time value as it is observed (a table, an output, an operand that must be a
    tensor): a host-int index becomes its tensor; tensors and tuples of them are as they are."""
    if type(value) is int:
        return index_tensor(value, device)
    if isinstance(value, tuple):
        return tuple(observed(v, device) for v in value)
    return value


class LazyTensorValue(TensorValue):
    """A ``TensorValue`` whose ``data`` is made by ``make_data`` the first time it is read
    (then kept): for values that later kernels mostly take in another form (a host int, a
    Python scalar), so most runs never make their tensor."""

    __slots__ = ("_data",)
    scalar = None
    _data: torch.Tensor

    def make_data(self) -> torch.Tensor:
        """The value's tensor (called once, at the first read of ``data``)."""
        raise NotImplementedError

    @property
    def data(self) -> torch.Tensor:
        try:
            return self._data
        except AttributeError:  # first read: make the tensor
            t = self._data = self.make_data()
            return t

    @data.setter
    def data(self, value: torch.Tensor) -> None:
        self._data = value


_INDEX_TYPE = TensorType((), DType.int64)


def may_hold_index(t: "Type | None") -> bool:
    """Whether a value of type ``t`` may be an index value held as a host int: only an
    ``i64[()]`` one can (a ``dim_*`` result; a ``slice`` takes host ints, makes tensors)."""
    return t == _INDEX_TYPE


class IndexValue(LazyTensorValue):
    """An index value (a loop's induction variable, a ``dim_*`` result) held as the host int
    ``index``; its ``data`` — ``index_tensor(index, device)`` — is made when first read, so
    index arithmetic and slice starts never make or read a tensor."""

    __slots__ = ("index", "_device")

    def __init__(self, index: int, device: "str | None") -> None:  # noqa: D107
        self.index = index
        self._device = device

    def make_data(self) -> torch.Tensor:
        return index_tensor(self.index, self._device)

    @property
    def type(self) -> TensorType:
        return _INDEX_TYPE

    @type.setter
    def type(self, value: TensorType) -> None:
        raise AttributeError("an index value's type is i64[()]")


@dataclass(frozen=True, slots=True, eq=False)
class TupleValue(_ValueBase):
    """Evaluated values in field order; ``depth`` is how deep it nests (at most
    ``MAX_TUPLE_DEPTH``: a deeper one is refused with an ``EvalError`` when made)."""

    elements: tuple["Value", ...]
    depth: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        depth = 1
        for e in self.elements:
            if isinstance(e, TupleValue) and e.depth >= depth:
                depth = e.depth + 1
        if depth > MAX_TUPLE_DEPTH:
            raise EvalError(TUPLE_DEPTH_REFUSED)
        object.__setattr__(self, "depth", depth)


Value: TypeAlias = TensorValue | TupleValue

_TYPES: dict[tuple[object, object, object], TensorType] = {}


def type_of_data(data: torch.Tensor, layout: "Layout | ShardLayout | None" = None) -> TensorType:
    """The concrete ``TensorType`` of a tensor (its shape and dtype) with ``layout``.

    Types are values, so the few distinct ones a run produces are made once and reused
    (this is on the visitor's per-node path).
    """
    key = (data.shape, data.dtype, layout)
    t = _TYPES.get(key)
    if t is None:
        if len(_TYPES) > 4096:
            _TYPES.clear()
        t = _TYPES[key] = TensorType(tuple(data.shape), DType.from_torch(data.dtype), layout)
    return t


def type_of_value(value: Value) -> Type:
    """The concrete type of a value (a tuple's, field by field)."""
    if isinstance(value, TensorValue):
        return value.type
    return TupleType(tuple(type_of_value(v) for v in value.elements))


def layout_leaf(tree: LayoutTree, index: int) -> LayoutTree:
    """Field ``index`` of a layout tree (a single layout stands for every field)."""
    return tree[index] if isinstance(tree, tuple) and index < len(tree) else (None if isinstance(tree, tuple) else tree)


def as_value(data: object, layouts: LayoutTree) -> Value:
    """The ``Value`` of raw data (a tensor, or nested tuples of them) carrying ``layouts``."""
    if isinstance(data, torch.Tensor):
        layout = layouts if not isinstance(layouts, tuple) else None
        return TensorValue(data, type_of_data(data, layout))
    if isinstance(data, tuple):
        return TupleValue(tuple(as_value(d, layout_leaf(layouts, i)) for i, d in enumerate(data)))
    raise TypeError(f"not a tensor or a tuple of tensors: {type(data).__name__}")


def relabel(value: Value, layouts: LayoutTree) -> Value:
    """``value`` carrying ``layouts`` and no weak scalar (what a node's value is, whatever a
    handler returned or a binding received)."""
    if isinstance(value, TensorValue):
        layout = layouts if not isinstance(layouts, tuple) else None
        if value.scalar is None and value.layout == layout:
            return value
        return TensorValue(value.data, value.type.with_layout(layout))
    if isinstance(value, TupleValue):
        return TupleValue(tuple(relabel(v, layout_leaf(layouts, i)) for i, v in enumerate(value.elements)))
    assert_never(value)


def to_python(value: Value) -> "torch.Tensor | tuple[object, ...]":
    """The user-facing form of a value: a tensor, or a (nested) tuple of tensors.

    Iterative, so a deeply nested tuple result does not exhaust Python's stack."""
    if isinstance(value, TensorValue):
        return value.data
    done: list[object] = []
    stack: list[tuple[Value, bool]] = [(value, False)]
    while stack:
        item, expanded = stack.pop()
        if isinstance(item, TensorValue):
            done.append(item.data)
        elif not isinstance(item, TupleValue):
            raise TypeError(f"not a Value: {item!r}")
        elif expanded:
            n = len(item.elements)
            fields = tuple(done[len(done) - n :]) if n else ()
            del done[len(done) - n :]
            done.append(fields)
        else:
            stack.append((item, True))
            stack.extend((e, False) for e in reversed(item.elements))
    result = done[0]
    assert isinstance(result, tuple)
    return result
