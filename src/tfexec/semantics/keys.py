"""Node keys: the names both routes give their values, so the two tables can be compared.

A key is the call-site path from the entry (``mlp``, ``mlp/double#1`` for the second call
of ``double`` in ``mlp``) and the node's local name: its binding when the parser gave it
one (``mlp/h``; a name bound twice becomes ``h#1``), else ``%k`` with ``k`` its position
in the post-order of that scope (operands first, left to right). A loop body is a scope
of its own, keyed per iteration: ``mlp/acc[3]/t``. Every key string is made here, once
per scope, and used by both routes, the equivalence check and the reports.
"""

import re
import weakref
from collections.abc import Sequence

from tfexec.ir.expr import Call, Expr, Function, GridRegionExpr
from tfexec.ir.graph import function_order, loop_plan

_FUNCTION_KEYS: "weakref.WeakKeyDictionary[Function, ScopeKeys]" = weakref.WeakKeyDictionary()
_LOOP_KEYS: "weakref.WeakKeyDictionary[GridRegionExpr, ScopeKeys]" = weakref.WeakKeyDictionary()
_ITERATION = re.compile(r"\[\d+\]")


class ScopeKeys:
    """Local keys of one scope's nodes, and the sub-path of each function call in it."""

    __slots__ = ("local", "callee_path")

    def __init__(self, order: Sequence[Expr]) -> None:
        self.local: dict[int, str] = {}
        self.callee_path: dict[int, str] = {}
        used: dict[str, int] = {}
        calls: dict[str, int] = {}
        for k, node in enumerate(order):
            binding = node.span.binding if node.span is not None else None
            base = binding if binding else f"%{k}"
            n = used.get(base, 0)
            used[base] = n + 1
            self.local[id(node)] = base if n == 0 else f"{base}#{n}"
            if isinstance(node, Call) and isinstance(node.target, Function):
                name = node.target.name
                m = calls.get(name, 0)
                calls[name] = m + 1
                self.callee_path[id(node)] = name if m == 0 else f"{name}#{m}"

    def key(self, prefix: str, node: Expr) -> str:
        """The key of ``node`` in this scope under ``prefix`` (the scope's path)."""
        return f"{prefix}/{self.local[id(node)]}"

    def callee_prefix(self, prefix: str, call: Call) -> str:
        """The path of the callee scope that function call ``call`` opens."""
        return f"{prefix}/{self.callee_path[id(call)]}"


def function_keys(fn: Function) -> ScopeKeys:
    """The keys of ``fn``'s body scope, cached per function."""
    keys = _FUNCTION_KEYS.get(fn)
    if keys is None:
        keys = _FUNCTION_KEYS[fn] = ScopeKeys(function_order(fn))
    return keys


def loop_keys(region: GridRegionExpr) -> ScopeKeys:
    """The keys of a loop body scope (its per-iteration schedule), cached per loop."""
    keys = _LOOP_KEYS.get(region)
    if keys is None:
        keys = _LOOP_KEYS[region] = ScopeKeys(loop_plan(region).schedule)
    return keys


def iteration_prefix(loop_key: str, i: int) -> str:
    """The path of iteration ``i`` of the loop keyed ``loop_key`` (``mlp/acc[3]``)."""
    return f"{loop_key}[{i}]"


def template(key: str) -> str:
    """A key with its iteration numbers written ``[*]`` (one template per source node)."""
    return _ITERATION.sub("[*]", key)


def is_reported(node: Expr) -> bool:
    """Whether a node's value goes in the per-node table: op and function calls, and loops."""
    return isinstance(node, (Call, GridRegionExpr))


def node_sources(fn: Function) -> dict[str, Expr]:
    """Every reported node reachable from ``fn`` by its key template (iterations ``[*]``)."""
    out: dict[str, Expr] = {}
    work: list[tuple[Sequence[Expr], ScopeKeys, str]] = [(function_order(fn), function_keys(fn), fn.name)]
    while work:
        order, keys, prefix = work.pop()
        if prefix.count("/") > 256:
            continue  # calls nest deeper than any run goes (both routes refuse it)
        for node in order:
            if not is_reported(node):
                continue
            key = keys.key(prefix, node)
            out[key] = node
            if isinstance(node, Call) and isinstance(node.target, Function):
                callee = node.target
                work.append((function_order(callee), function_keys(callee), keys.callee_prefix(prefix, node)))
            elif isinstance(node, GridRegionExpr):
                work.append((loop_plan(node).schedule, loop_keys(node), f"{key}[*]"))
    return out
