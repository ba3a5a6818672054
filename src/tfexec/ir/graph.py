"""Graph walks shared by every pass: operands, iterative post-order, loop plans.

Everything here is iterative over graph depth (programs with 10⁶ nodes are normal); the
only recursion is over loop *nesting*, which is as deep as the program text.

A loop's body splits in two (hir §1.2): *variant* nodes depend on the induction variable
or a carried phi and run every iteration; *invariant* nodes depend on neither and are
computed once, outside. The invariant nodes a variant node reads directly are the loop's
*frontier*: in the enclosing scope they are operands of the loop, like its ``init_args``.
"""

import weakref
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass

from tfexec.ir.expr import Call, Expr, Function, GridRegionExpr, Tuple, TupleGetItem


@dataclass(frozen=True, slots=True)
class LoopPlan:
    """How a ``GridRegionExpr`` runs: the invariant frontier and the per-iteration schedule."""

    frontier: tuple[Expr, ...]
    """Invariant nodes read by the body, in first-use order: computed once, before the loop."""
    schedule: tuple[Expr, ...]
    """Variant nodes in post-order (operands first), including the bound Vars they reach."""
    roots: tuple[Expr, ...]
    """``yield_values`` for a carried loop, ``(body,)`` for a loop with no carries."""


_PLANS: "weakref.WeakKeyDictionary[GridRegionExpr, LoopPlan]" = weakref.WeakKeyDictionary()

MAX_NESTING = 128
"""How deep function calls and loops may nest (counted together). Type inference and both
evaluation routes refuse the call or loop that would go deeper, naming it: past this,
Python's own stack could run out in one of them before the others."""

NESTING_REFUSED = (
    f"function calls and loops nest more than {MAX_NESTING} deep here; tfexec refuses deeper nesting "
    "(inline some calls or loops)"
)
"""Why a call or loop past ``MAX_NESTING`` is refused (after ``describe_expr`` of it)."""


def operands(expr: Expr) -> tuple[Expr, ...]:
    """The nodes ``expr`` reads in its own scope (a loop reads its inits and its frontier)."""
    if isinstance(expr, Call):
        return expr.args
    if isinstance(expr, Tuple):
        return expr.fields
    if isinstance(expr, TupleGetItem):
        return (expr.tuple,)
    if isinstance(expr, GridRegionExpr):
        return expr.init_args + loop_plan(expr).frontier
    return ()


def post_order(
    roots: Iterable[Expr], done: Container[int] = frozenset(), children: "Callable[[Expr], tuple[Expr, ...]] | None" = None
) -> list[Expr]:
    """Every node reachable from ``roots`` once, operands before users, left to right.

    The order is that of a recursive depth-first walk (each node after all its operands,
    an operand reached twice listed at its first reach), computed with explicit stacks.
    A node whose ``id`` is in ``done`` (a memo, say) counts as already visited: it is
    neither listed nor walked through, so a walk stops at what an earlier walk computed.
    ``children`` replaces ``operands`` for a pass with its own idea of a loop's reads.
    """
    operands_of = operands if children is None else children
    order: list[Expr] = []
    emit = order.append
    seen: set[int] = set()
    mark = seen.add
    for root in roots:
        if id(root) in seen or id(root) in done:
            continue
        mark(id(root))
        # one frame per open node: the node, its operands, the next operand to enter
        nodes: list[Expr] = [root]
        kids: list[tuple[Expr, ...]] = [operands_of(root)]
        next_kid: list[int] = [0]
        while nodes:
            reads, i = kids[-1], next_kid[-1]
            if i < len(reads):
                next_kid[-1] = i + 1
                child = reads[i]
                if id(child) in seen or id(child) in done:
                    continue
                mark(id(child))
                nodes.append(child)
                kids.append(operands_of(child))
                next_kid.append(0)
            else:
                emit(nodes.pop())
                kids.pop()
                next_kid.pop()
    return order


_FUNCTION_ORDERS: "weakref.WeakKeyDictionary[Function, tuple[Expr, ...]]" = weakref.WeakKeyDictionary()


def function_order(fn: Function) -> tuple[Expr, ...]:
    """The post-order of ``fn``'s body, computed once per function (inference, both routes
    and the node keys all walk it)."""
    order = _FUNCTION_ORDERS.get(fn)
    if order is None:
        order = _FUNCTION_ORDERS[fn] = tuple(post_order([fn.body]))
    return order


def loop_roots(region: GridRegionExpr) -> tuple[Expr, ...]:
    """What a loop iteration computes: its yield values, or its body when it has no carries."""
    return region.yield_values if region.carried_args else (region.body,)


def loop_plan(region: GridRegionExpr) -> LoopPlan:
    """The (cached) ``LoopPlan`` of ``region``."""
    plan = _PLANS.get(region)
    if plan is None:
        plan = _build_loop_plan(region)
        _PLANS[region] = plan
    return plan


def _build_loop_plan(region: GridRegionExpr) -> LoopPlan:
    bound = {id(region.induction_var)} | {id(v) for v in region.carried_args}
    roots = loop_roots(region)
    variant: set[int] = set()
    schedule: list[Expr] = []
    for node in post_order(roots):
        if id(node) in bound or any(id(c) in variant for c in operands(node)):
            variant.add(id(node))
            schedule.append(node)
    frontier: list[Expr] = []
    in_frontier: set[int] = set()
    for node in schedule:
        for child in operands(node):
            if id(child) not in variant and id(child) not in in_frontier:
                in_frontier.add(id(child))
                frontier.append(child)
    for root in roots:
        if id(root) not in variant and id(root) not in in_frontier:
            in_frontier.add(id(root))
            frontier.append(root)
    return LoopPlan(tuple(frontier), tuple(schedule), roots)


def use_counts(order: list[Expr], outputs: Iterable[Expr]) -> dict[int, int]:
    """How many times each node of ``order`` is read, counting each output once more."""
    counts: dict[int, int] = {}
    for node in order:
        for child in operands(node):
            counts[id(child)] = counts.get(id(child), 0) + 1
    for out in outputs:
        counts[id(out)] = counts.get(id(out), 0) + 1
    return counts


__all__ = ["MAX_NESTING", "NESTING_REFUSED", "LoopPlan", "loop_plan", "loop_roots", "operands", "post_order", "use_counts"]
