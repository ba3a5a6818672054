"""The vocabulary of denotations: one constructor per kind of term, and its text form.

Both denotations build their terms with these constructors only, so a head says the same
thing whichever side made it: an op term names the op (kind and attributes, by value), the
``Arg``s its value rule is told (which fix the kernel it picks) and the structure of its
operands; a term whose value depends on ``DimVar`` sizes (a kernel that reads its context,
a plain handler, a loop's trip count) takes the term of its dim scope as its first
argument — the entry's, or an inlined call's, which is the callee applied to its arguments.
A loop body is written with *bound* terms for the induction variable and the carries (one
level per enclosing loop), so a loop term is the recursion itself: its scope, its initial
carries and its roots over those bound terms.
"""

import dataclasses
from collections.abc import Sequence

import torch

from tfexec.ir.dims import ShapeDim
from tfexec.ir.expr import Constant, ConstTensor, Function
from tfexec.ir.ops.base import Op
from tfexec.ir.types import Type
from tfexec.ir.weak import OperandView, Weak
from tfexec.semantics.registry import Arg
from tfexec.semantics.values import LayoutTree
from tfexec.text.grammar import format_value, required_attributes
from tfexec.validate.terms import Den, Shape, Terms, leaves, of_type, shape, static_key

INDEX = -1
"""The ``index`` of the induction variable's bound term (carry leaves count from 0)."""


def input_leaf(terms: Terms, index: int, path: tuple[int, ...]) -> int:
    """Field ``path`` of the entry function's parameter ``index``."""
    return terms.make(("input", index, path))


def parameter(terms: Terms, index: int, t: Type) -> Den:
    """The entry function's parameter ``index`` of type ``t``."""
    return of_type(t, lambda path: input_leaf(terms, index, path))


def constant(terms: Terms, c: Constant) -> int:
    """A ``Constant`` made as a tensor (core-ir §2): its value and type (a tensor by identity)."""
    value = ("tensor", terms.keep(c.value)) if isinstance(c.value, torch.Tensor) else static_key(c.value)
    return terms.make(("const", value, c.type, c.weak, None if isinstance(c.value, torch.Tensor) else c.value))


def scalar(terms: Terms, value: object) -> int:
    """A weak Python scalar as a kernel receives it (the Python value itself)."""
    return terms.make(("scalar", static_key(value), value))


def weight(terms: Terms, w: ConstTensor) -> int:
    """A module weight, by name and declared type."""
    return terms.make(("weight", w.name, w.type))


def is_weak_constant(terms: Terms, term: int) -> bool:
    """Whether ``term`` is a weak Python-scalar constant (which a loop never hoists: it has no slot)."""
    head = terms.head(term)
    return head[0] == "const" and head[3] is True


def kernel_operand(terms: Terms, view: OperandView, den: Den) -> Den:
    """What a kernel receives for an operand whose static view is ``view`` and value ``den``."""
    if isinstance(view, Weak):
        return scalar(terms, view.value)
    if view is None or isinstance(den, int) or len(view) != len(den):
        return den
    return tuple(kernel_operand(terms, v, d) for v, d in zip(view, den))


def apply_op(terms: Terms, op: Op, args: tuple[Arg, ...], operands: Sequence[Den], scope: int | None) -> int:
    """``op``'s kernel (picked from ``args``) applied to ``operands``; ``scope`` when it reads its context."""
    if all(type(o) is int for o in operands):  # the common case: tensors only
        structure: tuple[Shape, ...] = _TENSORS[len(operands)] if len(operands) < len(_TENSORS) else (None,) * len(operands)
        flat: tuple[int, ...] = tuple(operands)  # type: ignore[arg-type]
    else:
        structure = tuple(shape(o) for o in operands)
        flat = tuple(leaf for o in operands for leaf in leaves(o))
    head = ("op", terms.op_key(op), args, structure, scope is not None)
    return terms.make(head, flat if scope is None else (scope, *flat))


_TENSORS: tuple[tuple[None, ...], ...] = tuple((None,) * n for n in range(8))


def view_key(view: OperandView) -> object:
    if isinstance(view, Weak):
        return ("weak", static_key(view.value))
    if view is None:
        return None
    return tuple(view_key(v) for v in view)


def apply_handler(
    terms: Terms, op: Op, views: tuple[OperandView, ...], layouts: tuple[LayoutTree, ...], layout: object,
    result_type: Type | None, result: Type | None, operands: Sequence[Den], scope: int,
) -> tuple[int, Den]:
    """A plain handler called on ``operands`` (with the views, layouts and result type it is
    told): its term, and its value shaped by ``result`` (a tensor when ``None``)."""
    structure = tuple(shape(o) for o in operands)
    flat = [leaf for o in operands for leaf in leaves(o)]
    head = ("handler", terms.op_key(op), tuple(view_key(v) for v in views), layouts, layout, result_type, structure)
    term = terms.make(head, (scope, *flat))
    if result is None:
        return term, term
    return term, of_type(result, lambda path: term if not path else terms.make(("field", path), (term,)))


def entry_scope(terms: Terms) -> int:
    """The entry function's dim scope (its ``DimVar``s as the inputs bind them)."""
    return terms.make(("entry",))


def call_scope(terms: Terms, callee: Function, layouts: tuple[object, ...], args: Sequence[Den]) -> int:
    """The dim scope a call of ``callee`` opens: its parameters bound to ``args`` (with ``layouts``)."""
    structure = tuple(shape(a) for a in args)
    flat = tuple(leaf for a in args for leaf in leaves(a))
    return terms.make(("scope", terms.keep(callee), layouts, structure), flat)


def bound(terms: Terms, level: int, index: int) -> int:
    """The induction variable (``INDEX``) or carry leaf ``index`` of the loop ``level`` deep."""
    return terms.make(("bound", level, index))


def loop(terms: Terms, extent: ShapeDim, carried: bool, scope: int | None, inits: Sequence[int], roots: Sequence[int]) -> int:
    """A loop: ``extent`` trips (resolved in ``scope`` when symbolic) from carries ``inits``,
    each trip computing ``roots`` (the next carries, or without carries the last value)."""
    head = ("loop", static_key(extent), extent, carried, len(inits), scope is not None)
    args = (*inits, *roots) if scope is None else (scope, *inits, *roots)
    return terms.make(head, args)


def loop_out(terms: Terms, loop_term: int, m: int) -> int:
    """Leaf ``m`` of a loop's value: its final carries, or its last trip's roots."""
    return terms.make(("out", m), (loop_term,))


def failure(terms: Terms, error: Exception) -> int:
    """A step that raises ``error`` (its class and message)."""
    return terms.make(("fail", type(error).__name__, str(error)))


def malformed(terms: Terms, why: str) -> int:
    """What a graph node denotes when its structure makes no sense (a read of a missing field)."""
    return terms.make(("bad", why))


# -- the text form ----------------------------------------------------------------------------


def render(terms: Terms, den: Den, names: Sequence[str], depth: int = 3) -> str:
    """``den`` in the text form, ``depth`` operands deep (deeper ones are ``…``); ``names``
    are the entry's parameter names."""
    if not isinstance(den, int):
        return "(" + ", ".join(render(terms, d, names, depth) for d in den) + ("," if len(den) == 1 else "") + ")"
    return _Renderer(terms, names).term(den, depth)


def _attributes(op: Op) -> list[str]:
    """``name=value`` of the attributes the text form prints: required ones and those off their default."""
    required = required_attributes(type(op))
    out = []
    for f in dataclasses.fields(op):
        value = getattr(op, f.name)
        if f.name in required or f.default is dataclasses.MISSING or static_key(value) != static_key(f.default):
            try:
                text = format_value(value)
            except TypeError:
                text = repr(value)
            out.append(f"{f.name}={text}")
    return out


class _Renderer:
    def __init__(self, terms: Terms, names: Sequence[str]) -> None:
        self.terms, self.names = terms, names

    def many(self, items: Sequence[int], depth: int, limit: int = 6) -> list[str]:
        shown = [self.term(t, depth) for t in items[:limit]]
        return shown + ["…"] if len(items) > limit else shown

    def tree(self, structure: Shape, flat: list[int], depth: int) -> str:
        if structure is None:
            return self.term(flat.pop(0), depth) if flat else "?"
        inner = [self.tree(s, flat, depth) for s in structure]
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"

    def dims(self, scope: int, depth: int) -> str:
        """A dim scope: ``entry``, or the call that opens it (``g(x, y)``)."""
        head = self.terms.head(scope)
        if head[0] != "scope":
            return "entry" if head[0] == "entry" else self.term(scope, depth)
        callee = self.terms.kept.get(head[1])  # type: ignore[call-overload]
        name = callee.name if isinstance(callee, Function) else "?"
        return f"{name}({', '.join(self.many(list(self.terms.args(scope)), depth - 1))})"

    def term(self, term: int, depth: int) -> str:
        terms = self.terms
        head, args = terms.head(term), list(terms.args(term))
        tag = head[0]
        if tag == "input":
            index, path = head[1], head[2]
            assert isinstance(index, int) and isinstance(path, tuple)
            name = self.names[index] if 0 <= index < len(self.names) else f"input{index}"
            return name + "".join(f"[{i}]" for i in path)
        if tag == "const":
            value = head[4]
            if value is None:
                return f"constant({head[2]})"
            return repr(value) if head[3] else f"constant({value!r}, {head[2]})"
        if tag == "scalar":
            return repr(head[2])
        if tag == "weight":
            return f"weight({head[1]})"
        if tag == "bound":
            return f"index@{head[1]}" if head[2] == INDEX else f"carry@{head[1]}.{head[2]}"
        if tag == "entry":
            return "dims(entry)"
        if tag == "fail":
            return f"error({head[2]})"
        if tag == "bad":
            return f"malformed({head[1]})"
        if depth <= 0:
            return "…"
        if tag == "field":
            path = head[1]
            assert isinstance(path, tuple)
            return self.term(args[0], depth) + "".join(f"[{i}]" for i in path)
        if tag == "out":
            return f"{self.term(args[0], depth)}[{head[1]}]"
        if tag == "scope":
            return f"dims({self.dims(term, depth)})"
        if tag == "loop":
            scoped = head[5]
            if scoped:
                args = args[1:]
            n_init = head[4]
            assert isinstance(n_init, int)
            inits, roots = args[:n_init], args[n_init:]
            what = "carry" if head[3] else "last"
            return (
                f"grid({head[2]}, init=({', '.join(self.many(inits, depth - 1))}), "
                f"{what}=({', '.join(self.many(roots, depth - 1))}))"
            )
        if tag in ("op", "handler"):
            op = terms.op_of(head[1])
            name = op.name if op is not None else "?"
            structure = head[3] if tag == "op" else head[6]
            scope = args.pop(0) if tag == "handler" or head[4] else None
            assert isinstance(structure, tuple)
            shown = [self.tree(s, args, depth - 1) for s in structure[:8]] + (["…"] if len(structure) > 8 else [])
            attrs = _attributes(op) if op is not None else []
            dims = [f"dims={self.dims(scope, depth - 1)}"] if scope is not None and scope != entry_scope(terms) else []
            return f"{name}({', '.join(shown + attrs + dims)})"
        return f"<{tag}>"


__all__ = [
    "INDEX", "apply_handler", "apply_op", "bound", "call_scope", "constant", "entry_scope", "failure", "input_leaf",
    "is_weak_constant", "kernel_operand", "loop", "loop_out", "malformed", "parameter", "render", "scalar", "weight",
]
