"""Pairing an imported program's HIR nodes with the exported FX nodes they came from.

The translator records, for each FX node, the HIR node that *is* its value
(``TorchProgram.node_values``). Read against the node keys of the imported function, that
record pairs each FX node with one key of tfexec's per-node table — the first FX node (in
graph order) to reach an HIR node claims it. What is left on either side is *unpaired*,
with the reason: an HIR node a rule built on the way (the ``matmul`` of an ``addmm``, a
size computed at run time) has no FX node of its own; an FX node may have no
HIR node of its own (an identity op, a runtime assertion, a size, a placeholder).
"""

import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch.fx

from tfexec.frontends.torch._provenance import node_span, source_text
from tfexec.frontends.torch._typing import children_of
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, TupleGetItem, Var
from tfexec.semantics.keys import node_sources

_ASSERTIONS = ("_assert", "sym_constrain_range")


@dataclass(frozen=True, slots=True)
class Paired:
    """One FX node (its name and ATen target) and the key and op of its HIR node in
    tfexec's table."""

    fx: str
    key: str
    target: str
    op: str
    location: str
    source: str


@dataclass(frozen=True, slots=True)
class Unpaired:
    """A node with no counterpart: ``side`` says which program it is in (``"hir"``: its node
    key; ``"fx"``: the FX node's name), and ``why``."""

    side: str
    name: str
    op: str
    location: str
    why: str


@dataclass(frozen=True)
class Pairing:
    """Every paired node in FX graph order (topological), and the unpaired ones of each side."""

    paired: tuple[Paired, ...]
    unpaired_hir: tuple[Unpaired, ...]
    unpaired_fx: tuple[Unpaired, ...]
    placeholders: int


def target_name(node: Any) -> str:
    """An FX node's target as a user reads it: ``aten.linear.default``; a projection of a
    multi-output node as that node's target and the index, ``aten.max.dim[1]``."""
    target = node.target
    if isinstance(target, str):
        return target
    if target is operator.getitem and len(node.args) == 2 and isinstance(node.args[0], torch.fx.Node):
        return f"{target_name(node.args[0])}[{node.args[1]}]"
    module = getattr(target, "__module__", "")
    if module in ("_operator", "operator"):
        return f"operator.{getattr(target, '__name__', target)}"
    return str(target)


def pair(fn: Function, graph: Any, values: Mapping[str, Expr]) -> Pairing:
    """Pair ``graph``'s FX nodes with ``fn``'s keyed HIR nodes through ``values`` (FX node
    name → the HIR node that is its value)."""
    keys = {id(node): key for key, node in node_sources(fn).items()}
    claimed: dict[int, str] = {}  # id of a keyed HIR node -> the FX node that claimed it
    paired: list[Paired] = []
    unpaired_fx: list[Unpaired] = []
    placeholders = 0
    for node in graph.nodes:
        if node.op == "output":
            continue
        if node.op == "placeholder":
            placeholders += 1
            continue
        value = values.get(node.name)
        key = _key_of(value, keys) if value is not None else None
        trace = node.meta.get("stack_trace")
        span = node_span(trace, node.name)
        location = span.location() if span is not None else ""
        if value is not None and key is not None and id(_keyed(value)) not in claimed:
            root = _keyed(value)
            claimed[id(root)] = node.name
            op = root.target.name if isinstance(root, Call) else type(root).__name__
            paired.append(Paired(node.name, key, target_name(node), op, location, source_text(trace)))
            continue
        why = _why_unpaired(node, value, key, claimed)
        unpaired_fx.append(Unpaired("fx", node.name, target_name(node), location, why))
    unpaired_hir = _unpaired_hir(fn, claimed, values)
    return Pairing(tuple(paired), unpaired_hir, tuple(unpaired_fx), placeholders)


def _keyed(value: Expr) -> Expr:
    """The keyed node behind a value: a projection's tuple, else the value itself."""
    while isinstance(value, TupleGetItem):
        value = value.tuple
    return value


def _key_of(value: Expr, keys: Mapping[int, str]) -> str | None:
    """The table key of ``value``: its node key, or ``KEY.i`` for field ``i`` of a keyed tuple."""
    fields: list[str] = []
    while isinstance(value, TupleGetItem):
        fields.append(str(value.index))
        value = value.tuple
    key = keys.get(id(value))
    if key is None:
        return None
    return ".".join([key, *reversed(fields)])


def _why_unpaired(node: Any, value: Expr | None, key: str | None, claimed: Mapping[int, str]) -> str:
    name = target_name(node)
    if value is None:
        if any(part in name for part in _ASSERTIONS):
            return "a runtime assertion (dropped: HIR checks sizes where it binds them)"
        if isinstance(node.meta.get("val"), (list, tuple)):
            return "several outputs: each is paired through its getitem"
        return "a size, not a tensor (HIR computes it as a dim)"
    if key is not None:
        return f"the same HIR node as {claimed[id(_keyed(value))]} (an identity here): compared there"
    if isinstance(value, ConstTensor):
        return f"its value is the module constant {value.name}"
    if isinstance(value, Var):
        return f"its value is the input {value.name}"
    if isinstance(value, Constant):
        return "its value is a constant"
    return "its HIR node is not used by the program's outputs (dead code: not computed)"


def _unpaired_hir(fn: Function, claimed: Mapping[int, str], values: Mapping[str, Expr]) -> tuple[Unpaired, ...]:
    """The keyed HIR nodes no FX node claimed, each named after the first paired FX node
    whose translation reaches it (the rule that built it)."""
    made_by: dict[int, str] = {}
    seen: set[int] = set()
    for fx, value in values.items():
        root = _keyed(value)
        if claimed.get(id(root)) != fx:
            continue
        stack = list(children_of(root))
        while stack:
            node = stack.pop()
            if id(node) in seen or id(node) in claimed:
                continue
            seen.add(id(node))
            made_by.setdefault(id(node), fx)
            stack.extend(children_of(node))
    out: list[Unpaired] = []
    for key, node in node_sources(fn).items():
        if id(node) in claimed:
            continue
        op = node.target.name if isinstance(node, Call) else type(node).__name__
        location = node.span.location() if node.span is not None else ""
        maker = made_by.get(id(node))
        why = f"built in the translation of {maker}, with no FX node of its own" if maker else "built by the importer, with no FX node of its own"
        out.append(Unpaired("hir", key, op, location, why))
    return tuple(out)
