"""Static references from HIR nodes to forward slots.

Lowering resolves, once, what each HIR node denotes: a slot holding a tensor (with the
layout the value carries and, for a weak Python-scalar constant, the scalar itself) or a
tuple of such references. Tuples and projections therefore cost nothing at run time.
"""

from dataclasses import dataclass
from typing import TypeAlias, Union

from tfexec.ir.types import Layout, ShardLayout, TensorType, TupleType, Type


@dataclass(frozen=True, slots=True)
class TensorRef:
    """A tensor in ``slot``; ``scalar`` is set for a weak constant read directly by an op."""

    slot: int
    layout: Layout | ShardLayout | None = None
    scalar: bool | int | float | None = None


@dataclass(frozen=True, slots=True)
class TupleRef:
    """A tuple of references, resolved statically."""

    fields: tuple["Ref", ...]


Ref: TypeAlias = Union[TensorRef, TupleRef]


def leaves(ref: Ref) -> list[TensorRef]:
    """The tensor references of ``ref`` in field order."""
    if isinstance(ref, TensorRef):
        return [ref]
    out: list[TensorRef] = []
    for f in ref.fields:
        out.extend(leaves(f))
    return out


def rebuild(shape_of: Ref, flat: list[TensorRef]) -> Ref:
    """A reference shaped like ``shape_of`` over the tensor references ``flat`` (consumed in order)."""
    if isinstance(shape_of, TensorRef):
        return flat.pop(0)
    return TupleRef(tuple(rebuild(f, flat) for f in shape_of.fields))


def bound_to(ref: Ref, declared: Type) -> Ref:
    """``ref`` as bound to a Var of type ``declared``: the declared layout(s), never weak
    (the lowering twin of ``evaluator.runtime.rebind``)."""
    if isinstance(ref, TensorRef):
        layout = declared.layout if isinstance(declared, TensorType) else None
        return TensorRef(ref.slot, layout)
    if not isinstance(declared, TupleType):
        return ref
    return TupleRef(tuple(bound_to(r, t) for r, t in zip(ref.fields, declared.fields)) + ref.fields[len(declared.fields):])


def plain(ref: Ref) -> Ref:
    """``ref`` without weak scalars (a loop result is an ordinary value)."""
    if isinstance(ref, TensorRef):
        return TensorRef(ref.slot, ref.layout)
    return TupleRef(tuple(plain(f) for f in ref.fields))


def layouts_of(refs: tuple[Ref, ...]) -> tuple[Layout | ShardLayout | None, ...]:
    """The operand layouts a value rule is specialised on (None for tuple operands)."""
    return tuple(r.layout if isinstance(r, TensorRef) else None for r in refs)
