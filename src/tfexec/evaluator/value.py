"""Evaluated values (evaluator spec §1): ``Value``, ``TensorValue``, ``TupleValue``."""

from dataclasses import dataclass, field

import torch

from tfexec.ir.dtypes import DType
from tfexec.ir.types import Layout, ShardLayout, TensorType


class Value:
    """The base of every evaluated value."""

    __slots__ = ()


@dataclass(slots=True, eq=False)
class TensorValue(Value):
    """A logical tensor value and its HIR type (concrete shape, dtype, layout).

    ``scalar`` is set when the value is a weak Python-scalar constant (core-ir §2): op value
    rules then pass the Python scalar to torch so that promotion is torch's scalar rule.
    Values are made on the visitor's per-node path, so the class is not frozen (a frozen
    dataclass pays for ``object.__setattr__`` per field); treat values as read-only.
    """

    data: torch.Tensor
    type: TensorType
    scalar: bool | int | float | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True, eq=False)
class TupleValue(Value):
    """Evaluated values in field order."""

    elements: tuple[Value, ...]


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


def kernel_arg(value: Value) -> "torch.Tensor | bool | int | float | tuple[object, ...]":
    """What a value rule receives for an operand: the tensor, the weak scalar, or a tuple of them."""
    if isinstance(value, TensorValue):
        return value.data if value.scalar is None else value.scalar
    if isinstance(value, TupleValue):
        return tuple(kernel_arg(v) for v in value.elements)
    raise TypeError(f"not a Value: {value!r}")


def layout_of(value: Value) -> "Layout | ShardLayout | None":
    """The layout of a tensor value (None for tuples)."""
    return value.type.layout if isinstance(value, TensorValue) else None


def to_python(value: Value) -> "torch.Tensor | tuple[object, ...]":
    """The user-facing result: a tensor, or a (nested) tuple of tensors.

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
