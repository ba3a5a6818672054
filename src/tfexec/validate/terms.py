"""The hash-consed term store both denotations are written in.

A *term* is a head (what is computed, with every static fact it depends on) applied to
earlier terms. ``Terms.make`` gives each distinct term one id, so two denotations are
equal exactly when their ids are, and a denotation takes space linear in the program
whatever its sharing (a chain of 10⁶ adds is 10⁶ terms, never a tree of 2¹⁰⁶ leaves).

A value's denotation ``Den`` is a term id for a tensor, or a tuple of ``Den`` for a tuple
value: tuples are structure, as they are in both routes (a ``Tuple`` node has no slot).
"""

import dataclasses
from collections.abc import Callable, Sequence
from typing import TypeAlias, Union

from tfexec.ir.ops.base import Op
from tfexec.ir.types import TupleType, Type

Den: TypeAlias = Union[int, tuple["Den", ...]]
"""A value's denotation: a term id (a tensor), or a tuple of denotations."""
Head: TypeAlias = tuple[object, ...]
"""What a term computes: a tag (``"op"``, ``"input"``, …) and the static facts it depends on."""
Shape: TypeAlias = Union[None, tuple["Shape", ...]]
"""A denotation's tuple structure with its leaves left out (``None`` for a leaf)."""


class Terms:
    """Hash-consed terms: ``make(head, args)`` returns the one id of that term."""

    __slots__ = ("_heads", "_head_ids", "_terms", "_ids", "kept", "_op_keys", "_ops")

    def __init__(self) -> None:
        self._heads: list[Head] = []
        self._head_ids: dict[Head, int] = {}
        self._terms: list[tuple[int, ...]] = []
        """Per term: its head's id, then its argument terms."""
        self._ids: dict[tuple[int, ...], int] = {}
        self.kept: dict[int, object] = {}
        """Objects a head names by ``id`` (ops, callees, tensors), kept alive while the store is."""
        self._op_keys: dict[int, object] = {}
        self._ops: dict[object, Op] = {}

    def __len__(self) -> int:
        return len(self._terms)

    def make(self, head: Head, args: tuple[int, ...] = ()) -> int:
        """The id of ``head`` applied to ``args`` (made once, then found)."""
        hid = self._head_ids.get(head)
        if hid is None:
            hid = self._head_ids[head] = len(self._heads)
            self._heads.append(head)
        key = (hid, *args)
        term = self._ids.get(key)
        if term is None:
            term = self._ids[key] = len(self._terms)
            self._terms.append(key)
        return term

    def head(self, term: int) -> Head:
        return self._heads[self._terms[term][0]]

    def args(self, term: int) -> tuple[int, ...]:
        return self._terms[term][1:]

    def keep(self, obj: object) -> int:
        """``id(obj)``, with ``obj`` kept alive so the id is never reused while terms name it."""
        self.kept[id(obj)] = obj
        return id(obj)

    def op_key(self, op: Op) -> object:
        """An op's kind and attributes, compared by value (``-0.0`` differs from ``0.0``)."""
        key = self._op_keys.get(id(op))
        if key is None:
            names = _fields(type(op))
            key = type(op) if not names else (type(op), tuple(static_key(getattr(op, n)) for n in names))
            self._op_keys[id(op)] = key
            self.keep(op)
            self._ops.setdefault(key, op)
        return key

    def op_of(self, key: object) -> Op | None:
        """An op whose key is ``key`` (for rendering)."""
        return self._ops.get(key)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else ()
    return names


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def static_key(value: object) -> object:
    """A static value (an attribute, a weak scalar) as a key equal only to the same value:
    floats by their bits (``0.0`` is not ``-0.0``), bools apart from ints, tuples by field."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, float):
        return ("float", value.hex() if value == value else repr(value))
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(static_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(k), static_key(v)) for k, v in value.items())))
    if _hashable(value):
        return (type(value), value)
    return ("repr", type(value), repr(value))


# -- denotation trees ------------------------------------------------------------------------


def leaves(den: Den) -> list[int]:
    """The terms of ``den``, in field order."""
    if isinstance(den, int):
        return [den]
    out: list[int] = []
    for d in den:
        out.extend(leaves(d))
    return out


def shape(den: Den) -> Shape:
    """``den``'s tuple structure."""
    if isinstance(den, int):
        return None
    return tuple(shape(d) for d in den)


def project(den: Den, path: Sequence[int]) -> Den | None:
    """Field ``path`` of ``den``, or None where the path leaves the tree."""
    for i in path:
        if isinstance(den, int) or not 0 <= i < len(den):
            return None
        den = den[i]
    return den


def of_type(t: Type, leaf: Callable[[tuple[int, ...]], int], path: tuple[int, ...] = ()) -> Den:
    """The denotation of a value of type ``t`` whose leaf at field path ``p`` is ``leaf(p)``."""
    if isinstance(t, TupleType):
        return tuple(of_type(f, leaf, path + (i,)) for i, f in enumerate(t.fields))
    return leaf(path)


def numbered(shape_of: Den, start: Callable[[int], int]) -> Den:
    """A denotation shaped like ``shape_of`` whose ``m``-th leaf (field order) is ``start(m)``."""
    count = [0]

    def walk(d: Den) -> Den:
        if isinstance(d, int):
            count[0] += 1
            return start(count[0] - 1)
        return tuple(walk(x) for x in d)

    return walk(shape_of)



class Denotation:
    """One side's denotation of a program: its table (key templates in table order, a loop
    body's keys with ``[*]`` for every iteration), its outputs, and per scope list (the
    entry's, by function name; each loop body, by loop key) the steps that can fail, in run
    order — each a term and the HIR node its errors name (None: the term holds its message)
    — and, per loop, the leaves computed once before it (its frontier), each with a label
    saying where it comes from."""

    __slots__ = ("table", "outputs", "steps", "frontiers")

    def __init__(self) -> None:
        self.table: list[tuple[str, Den]] = []
        self.outputs: Den = ()
        self.steps: dict[str, list[tuple[int, object]]] = {}
        self.frontiers: dict[str, list[tuple[int, str]]] = {}

__all__ = ["Den", "Denotation", "Head", "Shape", "Terms", "leaves", "numbered", "of_type", "project", "shape", "static_key"]
