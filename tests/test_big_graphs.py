"""Deep graphs are normal (visitor-mutator §1): a chain of 10⁵ nodes (10⁶ with ``-m slow``)
is built, walked, visited, mutated and type-inferred without touching Python's recursion
limit. Nothing here measures time; a recursive walk would fail with ``RecursionError``."""

import copy

import pytest

from tfexec import (
    Call,
    Expr,
    ExprMutator,
    Function,
    GridRegionExpr,
    Var,
    describe_expr,
    f32,
    i64,
    infer_types,
    ops,
)
from tfexec.ir.graph import loop_plan, post_order

from shared_helpers import ChainDepth, add_chain


class _AddToSub(ExprMutator):
    def rewrite_Call(self, node: Call) -> Expr:
        if node.target.name != "add":
            return self.rebuild(node)
        return ops.sub(self.mutated(node.args[0]), self.mutated(node.args[1]))


def _exercise(n: int) -> None:
    x = Var("x", f32[4])
    h = add_chain(x, n)
    fn = Function("chain", (x,), h)

    order = post_order([h])
    assert len(order) == n + 2 and order[0] is x and order[-1] is h

    assert ChainDepth().visit(h) == n

    new = _AddToSub().mutate(h)
    assert isinstance(new, Call) and new.target.name == "sub"
    assert len(post_order([new])) == n + 2

    assert infer_types(fn) is fn
    assert h.checked_type == f32[4]

    assert repr(h) == "Call(Add, 2 args)" and describe_expr(h) == "add(<add>, 1.0)"
    assert h == h and h != new and {h: 1}[h] == 1
    assert copy.copy(h) is h and copy.deepcopy(fn) is fn


def _exercise_loop(n: int) -> None:
    """A deep chain inside a loop body: planned, visited and inferred iteratively."""
    x = Var("x", f32[4])
    i, acc = Var("i", i64[()]), Var("acc", f32[4])
    body = add_chain(ops.add(acc, ops.cast(i, dtype=f32)), n)
    loop = GridRegionExpr(2, i, (x,), (acc,), body, (body,))
    fn = Function("looped", (x,), loop)
    plan = loop_plan(loop)
    assert len(plan.schedule) == n + 4  # acc, i, cast, the first add, then the chain
    assert len(plan.frontier) == 1  # the shared constant
    infer_types(fn)
    assert body.checked_type == f32[4] and loop.checked_type == f32[4]
    new = _AddToSub().mutate(loop)
    assert isinstance(new, GridRegionExpr) and new.body is new.yield_values[0]


def test_chain_of_1e5_nodes() -> None:
    _exercise(100_000)


def test_loop_body_of_5e4_nodes() -> None:
    _exercise_loop(50_000)


@pytest.mark.slow
def test_chain_of_1e6_nodes() -> None:
    _exercise(1_000_000)


@pytest.mark.slow
def test_loop_body_of_1e6_nodes() -> None:
    _exercise_loop(1_000_000)
