"""What a lowered graph looks like to a reader: its snoc list as labelled rows.

The explorer page (``tfexec explain``) and the pictures (``tfexec graph``) both draw a
``ForwardGraph`` from this one description, so they name every node the same way:

* one ``Row`` per slot, in page order — the graph's inputs and nodes, and after each loop
  node its body: the frontier values, the index and the carries it is passed, then the
  body's nodes (each body numbers its own slots, as ``str(graph)`` does);
* a row's **call form** (``mul(%47, 0.25)``): its operands are its reads by position and
  the weak Python scalars the kernel holds (they have no slot), then the op's attributes;
* **types in the caller's dims**: an inlined callee declares its nodes in its own dim
  names (``N``); a row shows them in the entry function's (``S``) by unifying each call's
  parameter types with its argument types;
* **keys** as templates (``flash/%10[*]/s``: one ``[*]`` per enclosing loop) and the key of
  the value a row shows — a call boundary shows its call's value;
* **folding**: a constant of at most ``FOLD_MAX`` elements has a literal, which a picture
  writes into its consumers' labels instead of drawing a box;
* **clusters**: the inlined calls and loops that enclose a row, outermost first;
* ``producer``: where a read's value really comes from, through call boundaries.
"""

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias, Union

import torch

from tfexec.forward.graph import ForwardGraph
from tfexec.forward.kinds import EnterCall, Fail, HandlerCall, MakeConstant, OpApply, ReadWeight, RunLoop, Shape
from tfexec.forward.node import ForwardNode, Read
from tfexec.forward.run import Body, leaves
from tfexec.ir.describe import describe_expr
from tfexec.ir.dims import DimExpr, DimVar, ShapeDim, dim_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Constant, Expr
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.ir.weak import Weak
from tfexec.semantics.keys import ScopeKeys, function_keys, loop_keys

RowKind = Literal["input", "frontier", "index", "carry", "op", "constant", "weight", "call", "loop", "error"]
Part: TypeAlias = Union[int, str, tuple["Part", ...]]
"""One operand of a call form: a read (its position in the row's reads), a literal, or a tuple."""

TOP = -1
"""The ``body`` of the graph's own rows (a loop body's rows have their loop row's index)."""

FOLD_MAX = 4
"""Constants with at most this many elements are written as literals where they are used."""


@dataclass(frozen=True, slots=True, eq=False)
class Row:
    """One slot of the snoc list (a graph's or a loop body's) as a reader sees it.

    ``body`` is ``TOP`` (-1) for the graph's list, else the loop row whose body it is in; ``slot`` its
    slot there. ``name`` is what a reader calls the value (binding, parameter, carry or weight
    name; "" when it has none), ``op`` what computes it and ``operands``/``attributes`` the
    rest of its call form. ``reads`` are the node's declared reads, ``read_rows`` the rows
    they point at (always earlier rows of the same body). ``type`` is in the entry's dims,
    ``declared`` as the node declares it. ``frees``: the slots released after this row.
    ``origin``: for a frontier input the outer row it is passed, for a carry its initial
    value's row; ``feedback``: for a carry the row yielding its next value.
    """

    index: int
    body: int
    slot: int
    kind: RowKind
    name: str
    op: str
    operands: tuple[Part, ...]
    attributes: str
    reads: tuple[Read, ...]
    read_rows: tuple[int, ...]
    type: str
    declared: str
    frees: tuple[int, ...]
    key: str | None
    value_key: str | None
    where: str
    source: Expr | None
    clusters: tuple[int, ...]
    loops: tuple[int, ...]
    node: ForwardNode | None = None
    origin: int | None = None
    feedback: int | None = None
    literal: str | None = None
    result_of: int | None = None
    """For a callee's result: the call row whose value it is (a reader may know it by that call's name)."""

    @property
    def label(self) -> str:
        """``name = op`` (or the op alone), the short title of the row."""
        if self.kind in ("input", "frontier", "index", "carry", "weight"):
            return self.name
        return f"{self.name} = {self.op}" if self.name else self.op

    def call_form(self, show_read: Callable[[int], str]) -> str:
        """``op(operands, attributes)`` with each read written by ``show_read(position)``."""
        parts = [_part_text(p, show_read) for p in self.operands]
        if self.attributes:
            parts.append(self.attributes)
        return f"{self.op}({', '.join(parts)})"


def _part_text(part: Part, show_read: Callable[[int], str]) -> str:
    if isinstance(part, int):
        return show_read(part)
    if isinstance(part, str):
        return part
    inner = ", ".join(_part_text(p, show_read) for p in part)
    return f"({inner},)" if len(part) == 1 else f"({inner})"


@dataclass(frozen=True, slots=True)
class Loop:
    """A loop row's body: its rows (inputs first), which rows are its outputs, its index
    and carries, and its trip count as written (``T // 16``)."""

    row: int
    rows: tuple[int, ...]
    outputs: tuple[int, ...]
    index: int
    carries: tuple[int, ...]
    extent: str


@dataclass(frozen=True, slots=True)
class Outline:
    """The rows of a lowered graph, its loops (by loop row), its output rows and, per
    ``(body, slot)``, the row holding it."""

    graph: ForwardGraph
    rows: tuple[Row, ...]
    loops: dict[int, Loop]
    outputs: tuple[int, ...]
    slots: dict[tuple[int, int], int]

    def row_at(self, body: int, slot: int) -> Row:
        """The row holding ``slot`` of ``body`` (``TOP``: the graph's list, else a loop row)."""
        return self.rows[self.slots[(body, slot)]]

    def producer(self, row: Row, position: int) -> tuple[Row, tuple[int, ...], str]:
        """Where read ``position`` of ``row`` comes from, seen through call boundaries: the
        producing row, the tuple field path still to take in its value, and the callee
        parameter names it passed through (``"t"``, ``"t → t"`` through two calls; "" when none)."""
        index, path, names = through_calls(self.rows, self.slots, row, row.reads[position])
        return self.rows[index], path, names


def through_calls(
    rows: Sequence[Row], slots: dict[tuple[int, int], int], row: Row, read: Read,
) -> tuple[int, tuple[int, ...], str]:
    """The row ``read`` (a read of ``row``) takes its value from, past every call boundary
    that only passes an argument on; the field path left; the parameter names passed through."""
    current, path, names = rows[slots[(row.body, read.slot)]], read.path, []
    while current.kind == "call" and path and current.node is not None and isinstance(current.node.what, EnterCall):
        enter = current.node.what
        names.append(enter.callee.params[path[0]].name if path[0] < len(enter.callee.params) else "")
        shape: Shape = enter.args[path[0]]
        path = path[1:]
        while isinstance(shape, tuple) and path:
            shape, path = shape[path[0]], path[1:]
        if not isinstance(shape, int):
            break
        inner = current.reads[shape]
        current, path = rows[slots[(current.body, inner.slot)]], inner.path + path
    return current.index, path, " \u2192 ".join(n for n in reversed(names) if n)  # "t \u2192 t": passed on twice


def outline(graph: ForwardGraph) -> Outline:
    """The outline of ``graph`` (see the module docstring)."""
    walk = _Walk()
    fn = graph.function
    inputs = [
        walk.add(body=TOP, slot=i, kind="input", name=p.name, type=p.type, clusters=(), loops=(), source=p)
        for i, p in enumerate(fn.params)
    ]
    scopes = {0: (function_keys(fn), fn.name)}
    walk.body(graph.body, TOP, inputs, "", scopes, {0: ()}, ())
    outputs = tuple(walk.slots[(TOP, r.slot)] for r in leaves(graph.body.outputs))
    return Outline(graph, tuple(walk.rows), walk.loops, outputs, walk.slots)


class _Walk:
    """Builds the rows of one graph: its bodies depth-first, each loop's body after its row."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.loops: dict[int, Loop] = {}
        self.slots: dict[tuple[int, int], int] = {}
        self.dims: dict[int, dict[str, ShapeDim]] = {0: {}}
        """Per dim scope, each of its dim names in the entry function's dims."""
        self.types: list[Type | None] = []
        """Per row, its type as declared (in its own scope's dims), and as shown (the entry's)."""
        self.shown: list[Type | None] = []

    def add(
        self, *, body: int, slot: int, kind: RowKind, name: str, type: Type | None, clusters: tuple[int, ...],
        loops: tuple[int, ...], source: Expr | None, scope: int = 0, shown: Type | None = None, **more: object,
    ) -> int:
        index = len(self.rows)
        if shown is None and type is not None:
            shown = rename_dims(type, self.dims.get(scope, {}))
        fields: dict[str, object] = dict(
            index=index, body=body, slot=slot, kind=kind, name=name, op=more.pop("op", kind), operands=(),
            attributes="", reads=(), read_rows=(), type=str(shown) if shown is not None else "-",
            declared=str(type) if type is not None else "-", frees=(), key=None, value_key=None,
            where=describe_expr(source) if source is not None else "", source=source, clusters=clusters, loops=loops,
        )
        fields.update(more)
        self.rows.append(Row(**fields))  # type: ignore[arg-type]
        self.types.append(type)
        self.shown.append(shown)
        self.slots[(body, slot)] = index
        return index

    def body(
        self, body: Body, body_id: int, inputs: Sequence[int], prefix: str, scopes: dict[int, tuple[ScopeKeys, str]],
        paths: dict[int, tuple[int, ...]], loops: tuple[int, ...],
    ) -> None:
        n = body.data.n_inputs
        assert len(inputs) == n
        for j, node in enumerate(body.nodes):
            slot = n + j
            what = node.what
            keys, kprefix = scopes[node.scope]
            clusters = paths.get(node.scope, ())
            key = prefix + node.key if node.key else None
            value_key = key
            if isinstance(what, EnterCall):
                value_key = prefix + keys.key(kprefix, what.call)
                scopes[what.callee_scope] = (function_keys(what.callee), keys.callee_prefix(kprefix, what.call))
            read_rows = tuple(self.slots[(body_id, r.slot)] for r in node.reads)
            kind, name, op, operands, attributes, literal = describe_node(node)
            index = self.add(
                body=body_id, slot=slot, kind=kind, name=name, type=node.type, clusters=clusters, loops=loops,
                source=node.source, scope=node.scope, op=op, operands=operands, attributes=attributes,
                reads=node.reads, read_rows=read_rows, frees=body.frees[j], key=key, value_key=value_key, node=node,
                literal=literal,
            )
            if isinstance(what, EnterCall):
                paths[what.callee_scope] = clusters + (index,)
                self.dims[what.callee_scope] = call_dims(what, self.dims.get(node.scope, {}))
            elif isinstance(what, RunLoop):
                self.loop(index, node, what, key or "")
        self.results(body, body_id, prefix)

    def results(self, body: Body, body_id: int, prefix: str) -> None:
        """Mark each call's result row with the call (a call's key names its callee's result)."""
        keyed = {prefix + k: ref for k, ref in body.keyed}
        for row in [r for r in self.rows if r.body == body_id and r.kind == "call"]:
            ref = keyed.get(row.value_key or "")
            if isinstance(ref, Read) and not ref.path and (body_id, ref.slot) in self.slots:
                target = self.slots[(body_id, ref.slot)]
                self.rows[target] = dataclasses.replace(self.rows[target], result_of=row.index)

    def loop(self, index: int, node: ForwardNode, what: RunLoop, key: str) -> None:
        region = what.region
        row = self.rows[index]
        clusters, loops = row.clusters + (index,), row.loops + (index,)
        common = dict(body=index, clusters=clusters, loops=loops, scope=node.scope)
        inputs: list[int] = []
        for k in range(what.n_front):
            outer, path = self.rows[row.read_rows[k]], row.reads[k].path
            declared, shown = _field(self.types[outer.index], path), _field(self.shown[outer.index], path)
            origin = through_calls(self.rows, self.slots, row, row.reads[k])[0]
            inputs.append(self.add(slot=k, kind="frontier", name=_read_name(outer, row.reads[k]), type=declared,
                                   shown=shown, source=None, op="frontier", origin=origin,
                                   **common))  # type: ignore[arg-type]
        var = region.induction_var
        index_row = self.add(slot=what.n_front, kind="index", name=var.name, type=var.type, source=var, op="index",
                             **common)  # type: ignore[arg-type]
        inputs.append(index_row)
        carries: list[int] = []
        for c, phi in enumerate(region.carried_args):
            init = through_calls(self.rows, self.slots, row, row.reads[what.n_front + c])[0]
            carries.append(self.add(slot=what.n_front + 1 + c, kind="carry", name=phi.name, type=phi.type,
                                    source=phi, op="carry", origin=init, **common))  # type: ignore[arg-type]
        inputs.extend(carries)
        start = len(self.rows)
        self.body(what.body, index, inputs, key + "[*]", {node.scope: (loop_keys(region), "")},
                  {node.scope: clusters}, loops)
        outputs = tuple(self.slots[(index, r.slot)] for r in leaves(what.body.outputs))
        for c, carry in enumerate(carries):
            if c < len(outputs):
                self.rows[carry] = dataclasses.replace(self.rows[carry], feedback=outputs[c])
        self.loops[index] = Loop(index, tuple(inputs) + tuple(range(start, len(self.rows))), outputs, index_row,
                                 tuple(carries), str(region.extent))


def _field(t: Type | None, path: tuple[int, ...]) -> Type | None:
    for i in path:
        if not isinstance(t, TupleType) or i >= len(t.fields):
            return None
        t = t.fields[i]
    return t


def _read_name(row: Row, read: Read) -> str:
    """What a reader calls the value ``read`` takes from ``row``: a callee parameter's name
    for a field of a call boundary, else the row's name (or its slot) and the field path."""
    if row.kind == "call" and read.path and row.node is not None and isinstance(row.node.what, EnterCall):
        params = row.node.what.callee.params
        if read.path[0] < len(params) and len(read.path) == 1:
            return params[read.path[0]].name
    return (row.name or f"%{row.slot}") + "".join(f"[{i}]" for i in read.path)


def describe_node(node: ForwardNode) -> tuple[RowKind, str, str, tuple[Part, ...], str, str | None]:
    """A node's kind, name, op, call-form operands, attributes and (small constants) literal."""
    what = node.what
    span = node.source.span
    name = span.binding if span is not None and span.binding else ""
    if isinstance(what, OpApply):
        counter = iter(range(len(node.reads)))  # the kernel's run-time operands, in read order
        return "op", name, what.op.name, tuple(_fill_parts(f, counter) for f in what.fills), attributes_text(what.op.attributes()), None
    if isinstance(what, HandlerCall):
        return "op", name, what.op.name, tuple(_shape_parts(s) for s in what.operands), attributes_text(what.op.attributes()), None
    if isinstance(what, MakeConstant):
        return "constant", name, "constant", (), "", constant_literal(what.constant)
    if isinstance(what, ReadWeight):
        return "weight", what.weight.name, f"weight {what.weight.name}", (), "", None
    if isinstance(what, EnterCall):
        return "call", name, f"call {what.callee.name}", tuple(_shape_parts(s) for s in what.args), "", None
    if isinstance(what, RunLoop):
        return "loop", name, "grid", tuple(range(len(node.reads))), f"extent={what.region.extent}", None
    assert isinstance(what, Fail)
    return "error", name, "error", (), "", None


def _fill_parts(fill: object, counter: Iterator[int]) -> Part:
    if fill is None:
        return next(counter)
    if isinstance(fill, Weak):
        return literal(fill.value)
    assert isinstance(fill, tuple)
    return tuple(_fill_parts(f, counter) for f in fill)


def _shape_parts(shape: Shape) -> Part:
    return shape if isinstance(shape, int) else tuple(_shape_parts(s) for s in shape)


def literal(value: bool | int | float) -> str:
    """A Python scalar as the text form writes it (short floats for labels)."""
    if isinstance(value, bool) or isinstance(value, int):
        return str(value)
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    text = repr(value)
    return text if len(text) <= 8 else f"{value:.6g}"


def constant_literal(const: Constant) -> str | None:
    """A constant's value as a literal when it has at most ``FOLD_MAX`` elements."""
    value = const.value
    if not isinstance(value, torch.Tensor):
        return literal(value)
    if value.numel() > FOLD_MAX:
        return None
    items = value.flatten().tolist()
    text = ", ".join(literal(v) for v in items)
    return text if value.dim() == 0 else f"[{text}]"


def attributes_text(attributes: dict[str, object]) -> str:
    """``name=value, ...`` with dims, dtypes and tuples written as the text form writes them
    (attributes left at ``None`` are omitted, as the printer omits them)."""
    return ", ".join(f"{k}={_attribute(v)}" for k, v in attributes.items() if v is not None)


def _attribute(value: object) -> str:
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_attribute(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, (DimVar, DimExpr, DType)):
        return str(value)
    if isinstance(value, (bool, int, float)):
        return literal(value)
    if isinstance(value, str):
        return repr(value)
    return str(value)


# -- the caller's dims ------------------------------------------------------------------


def call_dims(enter: EnterCall, caller: dict[str, ShapeDim]) -> dict[str, ShapeDim]:
    """The callee's dim names in the entry's dims: its parameter types unified with the
    call's argument types (themselves renamed by the caller's map)."""
    out: dict[str, ShapeDim] = {}
    for param, arg in zip(enter.callee.params, enter.call.args):
        if arg.checked_type is not None:
            _unify(param.type, rename_dims(arg.checked_type, caller), out)
    return out


def _unify(param: Type, arg: Type, out: dict[str, ShapeDim]) -> None:
    if isinstance(param, TupleType) and isinstance(arg, TupleType):
        for pf, af in zip(param.fields, arg.fields):
            _unify(pf, af, out)
    elif isinstance(param, TensorType) and isinstance(arg, TensorType) and param.rank == arg.rank:
        for pd, ad in zip(param.shape, arg.shape):
            if isinstance(pd, DimVar) and pd.name not in out:
                out[pd.name] = ad


def rename_dims(t: Type, names: dict[str, ShapeDim]) -> Type:
    """``t`` with each ``DimVar`` named in ``names`` replaced by its dim there."""
    if not names:
        return t
    if isinstance(t, TupleType):
        return TupleType(tuple(rename_dims(f, names) for f in t.fields))
    return dataclasses.replace(t, shape=tuple(_rename_dim(d, names) for d in t.shape))


def _rename_dim(d: ShapeDim, names: dict[str, ShapeDim]) -> ShapeDim:
    if isinstance(d, DimVar):
        return names.get(d.name, d)
    if isinstance(d, DimExpr):
        return dim_expr(d.op, _rename_dim(d.lhs, names), _rename_dim(d.rhs, names))
    return d


__all__ = ["TOP", "FOLD_MAX", "Loop", "Outline", "Part", "Row", "RowKind", "literal", "outline", "rename_dims"]
