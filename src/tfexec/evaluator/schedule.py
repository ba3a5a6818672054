"""Schedules: a scope's nodes in post-order, each with the values it reads last.

Computed once per function body and per loop body (cached on the node), so the direct
route frees each value right after its last reader without counting uses on every run
(the rule itself is ``tfexec.semantics.liveness``, shared with the lowered graph).
"""

import weakref
from collections.abc import Container, Sequence
from dataclasses import dataclass

from tfexec.ir.expr import Call, Expr, Function, GridRegionExpr
from tfexec.ir.ops.base import Op
from tfexec.ir.graph import function_order, loop_plan, operands
from tfexec.semantics.liveness import last_reads


@dataclass(frozen=True, slots=True)
class Schedule:
    """``steps[i] = (node, id(node), ids of the values whose last reader is node, op_args)``;
    outputs are never freed. ``op_args`` is, for an op call, the ids of its operands (the
    visitor reads them without walking the node), else None."""

    order: tuple[Expr, ...]
    steps: "tuple[tuple[Expr, int, tuple[int, ...], tuple[int, ...] | None], ...]"


def build_schedule(order: Sequence[Expr], outputs: Sequence[Expr]) -> Schedule:
    frees = last_reads([[id(c) for c in operands(node)] for node in order], [id(o) for o in outputs])
    return Schedule(tuple(order), tuple((node, id(node), f, _op_args(node)) for node, f in zip(order, frees)))


def _op_args(node: Expr) -> tuple[int, ...] | None:
    if isinstance(node, Call) and isinstance(node.target, Op):
        return tuple(id(a) for a in node.args)
    return None


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
