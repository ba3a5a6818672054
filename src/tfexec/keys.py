"""Node keys: the names both routes give their values, so the two tables can be compared.

A key is the call-site path from the entry (``mlp``, ``mlp/double#1`` for the second call
of ``double`` in ``mlp``) and the node's local name: its binding when the parser gave it
one (``mlp/h``; a name bound twice becomes ``h#1``), else ``%k`` with ``k`` its position
in the post-order of that scope (operands first, left to right). A loop body is a scope
of its own, keyed per iteration: ``mlp/acc[3]/t``. Keys are computed here, once per
scope, and used by both routes.
"""

import weakref
from collections.abc import Sequence

from tfexec.ir.expr import Call, Expr, Function, GridRegionExpr

_FUNCTION_KEYS: "weakref.WeakKeyDictionary[Function, ScopeKeys]" = weakref.WeakKeyDictionary()
_LOOP_KEYS: "weakref.WeakKeyDictionary[GridRegionExpr, ScopeKeys]" = weakref.WeakKeyDictionary()


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


def function_keys(fn: Function, order: Sequence[Expr]) -> ScopeKeys:
    """The keys of ``fn``'s body scope (``order`` is its post-order), cached per function."""
    keys = _FUNCTION_KEYS.get(fn)
    if keys is None:
        keys = _FUNCTION_KEYS[fn] = ScopeKeys(order)
    return keys


def loop_keys(region: GridRegionExpr, schedule: Sequence[Expr]) -> ScopeKeys:
    """The keys of a loop body scope (``schedule`` is its per-iteration post-order)."""
    keys = _LOOP_KEYS.get(region)
    if keys is None:
        keys = _LOOP_KEYS[region] = ScopeKeys(schedule)
    return keys


def is_reported(node: Expr) -> bool:
    """Whether a node's value goes in the per-node table: op and function calls, and loops."""
    return isinstance(node, (Call, GridRegionExpr))
