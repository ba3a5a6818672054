"""Engineering requirements of the direct route (architecture.md, visitor-mutator §1):
deep graphs evaluate without recursion, values are dropped after their last reader (unless
the caller asks for the whole table), and nothing keeps the environment alive after
``evaluate`` returns."""

import gc
import re
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
import torch
from spec_helpers import tensor

from tfexec import (
    EvalError,
    EvaluateContext,
    EvaluatorVisitor,
    Expr,
    Function,
    GridRegionExpr,
    Op,
    TensorValue,
    Tuple,
    TupleGetItem,
    Value,
    Var,
    evaluate,
    f32,
    i64,
    ops,
    register_eval,
)
from tfexec.evaluator.visitor import evaluate_value
from tfexec import TypeInferenceError, lower
from tfexec.ir.graph import MAX_NESTING

# -- ops that watch tensor lifetimes ---------------------------------------------------------------

WATCHED: dict[str, "weakref.ref[torch.Tensor]"] = {}
ALIVE_AT_CHECK: dict[str, bool] = {}


@dataclass(frozen=True, slots=True)
class SpecWatch(Op):
    """Copies its operand into a fresh tensor and keeps only a weak reference to it."""

    name: ClassVar[str] = "spec_watch"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    tag: str = ""


@dataclass(frozen=True, slots=True)
class SpecCheck(Op):
    """Identity; records whether the watched tensor ``tag`` is still alive when it runs."""

    name: ClassVar[str] = "spec_check"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    tag: str = ""


@register_eval(SpecWatch)
def _watch(ctx: EvaluateContext) -> Value:
    op, arg = ctx.op, ctx.args[0]
    assert isinstance(op, SpecWatch) and isinstance(arg, TensorValue)
    data = arg.data.clone()
    WATCHED[op.tag] = weakref.ref(data)
    return TensorValue(data, arg.type)


@register_eval(SpecCheck)
def _check(ctx: EvaluateContext) -> Value:
    op = ctx.op
    assert isinstance(op, SpecCheck)
    ALIVE_AT_CHECK[op.tag] = WATCHED[op.tag]() is not None
    return ctx.args[0]


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    WATCHED.clear()
    ALIVE_AT_CHECK.clear()
    yield
    WATCHED.clear()
    ALIVE_AT_CHECK.clear()


# -- deep graphs -------------------------------------------------------------------------------------


def _chain(n: int) -> Function:
    x = Var("x", f32[1])
    y: Expr = x
    for _ in range(n):
        y = ops.add(y, x)
    return Function("chain", (x,), y)


def test_engineering_chain_of_1e5_adds_evaluates_without_recursion() -> None:
    out = evaluate(_chain(100_000), torch.ones(1))
    assert isinstance(out, torch.Tensor) and out.item() == 100_001.0


@pytest.mark.slow
def test_engineering_chain_of_1e6_adds_evaluates_without_recursion() -> None:
    out = evaluate(_chain(1_000_000), torch.ones(1))
    assert isinstance(out, torch.Tensor) and out.item() == 1_000_001.0


def test_engineering_deep_chain_inside_loop_body_and_callee() -> None:
    y = Var("y", f32[1])
    g = _chain(20_000)
    k = Var("k", i64[()])
    acc = Var("acc", f32[1])
    step = ops.call(g, acc)
    loop = GridRegionExpr(2, k, (y,), (acc,), step, (step,))
    out = evaluate(Function("f", (y,), loop), torch.ones(1))
    want = torch.ones(1)
    for _ in range(2):  # the same float32 additions, in the same order
        acc_value = want
        for _ in range(20_000):
            want = want + acc_value
    assert isinstance(out, torch.Tensor) and torch.equal(out, want)


# -- freeing --------------------------------------------------------------------------------------------


def _watched_function() -> Function:
    # a is read only by b; by the time check runs, a has had its last reader
    x = Var("x", f32[4])
    a = ops.apply(SpecWatch("a"), ops.exp(x))
    b = ops.neg(a)
    c = ops.apply(SpecCheck("a"), ops.exp(b))
    return Function("f", (x,), c)


def test_engineering_values_freed_after_last_use() -> None:
    out = evaluate(_watched_function(), torch.zeros(4))
    assert torch.equal(tensor(out), torch.exp(-torch.ones(4)))
    assert ALIVE_AT_CHECK["a"] is False


def test_engineering_values_kept_when_a_table_is_requested() -> None:
    table: dict[str, Value] = {}
    evaluate_value(_watched_function(), (torch.zeros(4),), table=table)
    assert ALIVE_AT_CHECK["a"] is True
    assert WATCHED["a"]() is not None  # the table still holds it
    del table
    gc.collect()
    assert WATCHED["a"]() is None


def test_engineering_loop_body_values_freed_between_iterations() -> None:
    k = Var("k", i64[()])
    x = Var("x", f32[4])
    acc = Var("acc", f32[4])
    watched = ops.apply(SpecWatch("a"), ops.add(acc, 1.0))
    step = ops.apply(SpecCheck("a"), ops.mul(ops.neg(watched), -1.0))
    loop = GridRegionExpr(3, k, (x,), (acc,), step, (step,))
    out = evaluate(Function("f", (x,), loop), torch.zeros(4))
    assert torch.equal(tensor(out), torch.full((4,), 3.0))
    assert ALIVE_AT_CHECK["a"] is False


def test_engineering_no_reference_cycle_keeps_memo_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    visitors: list["weakref.ref[EvaluatorVisitor]"] = []
    original = EvaluatorVisitor.__init__

    def recording_init(self: EvaluatorVisitor, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        visitors.append(weakref.ref(self))

    monkeypatch.setattr(EvaluatorVisitor, "__init__", recording_init)
    x, unused = Var("x", f32[3]), Var("unused", f32[3])
    k = Var("k", i64[()])
    acc = Var("acc", f32[3])
    y = Var("y", f32[3])
    g = Function("g", (y,), ops.exp(y))
    loop = GridRegionExpr(2, k, (x,), (acc,), ops.call(g, acc), (ops.call(g, acc),))
    fn = Function("f", (x, unused), Tuple((loop, ops.add(x, 1.0))))
    spare = torch.ones(3)
    spare_ref = weakref.ref(spare)
    gc.collect()
    gc.disable()
    try:
        out = evaluate(fn, torch.zeros(3), spare)
        del spare
        assert visitors, "the evaluator made no visitor"
        # freed by reference counting alone: no cycle holds a visitor or its memo
        assert all(v() is None for v in visitors)
        assert spare_ref() is None
    finally:
        gc.enable()
    assert isinstance(out, tuple)
    gc.collect()
    assert all(v() is None for v in visitors)


def test_engineering_nested_tuples_evaluate_up_to_the_limit_and_are_refused_past_it() -> None:
    # tuples nest at most MAX_TUPLE_DEPTH deep, the same limit on both routes (issue #28, E):
    # up to it the direct route evaluates and projects them; past it the Tuple node that
    # would go deeper is an EvalError naming the limit, never a RecursionError
    from tfexec.ir.types import MAX_TUPLE_DEPTH

    def nested(depth: int) -> tuple[Var, Expr, Expr]:
        x = Var("x", f32[1])
        t: Expr = x
        for _ in range(depth):
            t = Tuple((t, x))
        out: Expr = t
        for _ in range(depth):
            out = TupleGetItem(out, 0)
        return x, t, out

    x, t, out = nested(MAX_TUPLE_DEPTH)
    assert tensor(evaluate(Function("proj", (x,), ops.add(out, 1.0)), torch.ones(1))).item() == 2.0
    value = evaluate(Function("nested", (x,), t), torch.ones(1))
    depth = 0
    while isinstance(value, tuple):
        assert len(value) == 2 and torch.equal(tensor(value[1]), torch.ones(1))
        value, depth = value[0], depth + 1
    assert depth == MAX_TUPLE_DEPTH and torch.equal(tensor(value), torch.ones(1))
    x, t, out = nested(5_000)
    for body in (ops.add(out, 1.0), t):
        with pytest.raises(EvalError, match=rf"^tuple\(<Tuple>, x\): tuples nest more than {MAX_TUPLE_DEPTH} deep"):
            evaluate(Function("deep", (x,), body), torch.ones(1))


def test_engineering_call_nesting_past_the_limit_is_the_same_evalerror_on_both_routes() -> None:
    # calls nest on Python's stack: past MAX_NESTING (128) calls, both routes refuse the call
    # that goes deeper with the same EvalError naming it (inference refuses it as a type
    # error), never a raw RecursionError; 128 nested calls evaluate on both routes
    def chain(n: int) -> Function:
        y = Var("y", f32[1])
        fn = Function("f0", (y,), ops.add(y, 1.0))
        for i in range(1, n + 1):
            y = Var("y", f32[1])
            fn = Function(f"f{i}", (y,), ops.call(fn, y))
        return fn

    ok = chain(MAX_NESTING)
    assert tensor(evaluate(ok, torch.ones(1))).item() == 2.0
    assert tensor(lower(ok).run(torch.ones(1))).item() == 2.0
    deep = chain(2_000)
    with pytest.raises(EvalError, match=r"^f1871\(y\): function calls and loops nest more than 128 deep here"):
        evaluate(deep, torch.ones(1))
    with pytest.raises(TypeInferenceError, match=r"^f1871\(y\): function calls and loops nest more than 128 deep"):
        lower(deep)
