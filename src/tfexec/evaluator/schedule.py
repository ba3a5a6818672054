"""Schedules: a scope's nodes in post-order, each with the operands it reads last.

Computed once per function body and per loop body (cached on the node), so evaluation
frees each value right after its last reader without counting uses on every run.
"""

import weakref
from collections.abc import Container, Sequence
from dataclasses import dataclass

from tfexec.ir.expr import Call, Expr, Function, GridRegionExpr
from tfexec.ir.ops.base import Op
from tfexec.ir.graph import function_order, loop_plan, operands


@dataclass(frozen=True, slots=True)
class Schedule:
    """``steps[i] = (node, ids of values whose last reader is node, op)``; outputs are never
    freed. ``op`` is the node's ``Op`` for an op call (the visitor's hot path dispatches it
    directly) and None otherwise."""

    order: tuple[Expr, ...]
    steps: "tuple[tuple[Expr, tuple[int, ...], Op | None], ...]"


def build_schedule(order: Sequence[Expr], outputs: Sequence[Expr]) -> Schedule:
    last: dict[int, int] = {}
    for i, node in enumerate(order):
        for child in operands(node):
            last[id(child)] = i
    for out in outputs:
        last[id(out)] = len(order)
    frees: list[list[int]] = [[] for _ in order]
    for node_id, i in last.items():
        if i < len(order):
            frees[i].append(node_id)
    return Schedule(tuple(order), tuple((node, tuple(f), _op_of(node)) for node, f in zip(order, frees)))


def _op_of(node: Expr) -> Op | None:
    return node.target if isinstance(node, Call) and isinstance(node.target, Op) else None


def pending_order(root: Expr, known: Container[int]) -> list[Expr]:
    """The nodes ``root`` needs, operands first: ``post_order`` pruned at ``known`` nodes,
    which are listed (a schedule sees who reads them) but whose operands are not walked."""
    order: list[Expr] = []
    seen: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        if id(node) in known:
            continue
        for child in reversed(operands(node)):
            if id(child) not in seen:
                stack.append((child, False))
    return order


_FUNCTIONS: "weakref.WeakKeyDictionary[Function, Schedule]" = weakref.WeakKeyDictionary()
_LOOPS: "weakref.WeakKeyDictionary[GridRegionExpr, Schedule]" = weakref.WeakKeyDictionary()


def function_schedule(fn: Function) -> Schedule:
    """The schedule of ``fn``'s body (its output is ``fn.body``)."""
    sched = _FUNCTIONS.get(fn)
    if sched is None:
        sched = _FUNCTIONS[fn] = build_schedule(function_order(fn), [fn.body])
    return sched


def loop_schedule(region: GridRegionExpr) -> Schedule:
    """The per-iteration schedule of a loop body (its outputs are the loop's roots)."""
    sched = _LOOPS.get(region)
    if sched is None:
        plan = loop_plan(region)
        sched = _LOOPS[region] = build_schedule(plan.schedule, plan.roots)
    return sched
