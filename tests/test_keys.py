"""Node keys (architecture: "Node keys"): binding names, ``%k`` post-order positions,
repeated bindings ``h#1``, callee paths ``double`` / ``double#1``, loop-body scopes."""

import torch

from tfexec import Constant, Function, GridRegionExpr, Span, Var, f32, i64, ops
from tfexec.semantics.values import Value
from tfexec.evaluator.visitor import evaluate_value
from tfexec.ir.graph import loop_plan, post_order
from tfexec.semantics.keys import ScopeKeys, function_keys, is_reported, loop_keys

X = Var("x", f32[4])


def _span(binding: str | None) -> Span:
    return Span("m.tf.py", 1, 1, binding, "")


def test_bindings_name_nodes_and_unnamed_nodes_get_post_order_positions() -> None:
    h = ops.exp(X, span=_span("h"))
    tmp = ops.neg(h)  # unnamed: position 2 (x=0, h=1)
    out = ops.add(tmp, 1.0, span=_span("out"))  # the weak constant 1.0 is position 3
    order = post_order([out])
    keys = ScopeKeys(order)
    assert [keys.local[id(n)] for n in order] == ["%0", "h", "%2", "%3", "out"]


def test_a_name_bound_twice_gets_a_suffix() -> None:
    h0 = ops.exp(X, span=_span("h"))
    h1 = ops.mul(h0, h0, span=_span("h"))
    h2 = ops.neg(h1, span=_span("h"))
    keys = ScopeKeys(post_order([h2]))
    assert [keys.local[id(n)] for n in (h0, h1, h2)] == ["h", "h#1", "h#2"]


def test_an_empty_binding_counts_as_unnamed() -> None:
    e = ops.exp(X, span=_span(""))
    keys = ScopeKeys(post_order([e]))
    assert keys.local[id(e)] == "%1"


def test_callee_paths_count_calls_per_callee_name() -> None:
    p = Var("p", f32[4])
    double = Function("double", (p,), ops.add(p, p))
    q = Var("q", f32[4])
    triple = Function("triple", (q,), ops.mul(q, 3.0))
    c0 = ops.call(double, X)
    c1 = ops.call(triple, c0)
    c2 = ops.call(double, c1)
    keys = ScopeKeys(post_order([c2]))
    assert [keys.callee_path[id(c)] for c in (c0, c1, c2)] == ["double", "triple", "double#1"]
    assert id(X) not in keys.callee_path


def test_function_and_loop_keys_are_cached_per_node() -> None:
    fn = Function("f", (X,), ops.exp(X))
    keys = function_keys(fn)
    assert function_keys(fn) is keys
    i, acc = Var("i", i64[()]), Var("acc", f32[4])
    body = ops.add(acc, ops.cast(i, dtype=f32), span=_span("acc2"))
    loop = GridRegionExpr(2, i, (X,), (acc,), body, (body,))
    schedule = loop_plan(loop).schedule
    lk = loop_keys(loop)
    assert loop_keys(loop) is lk
    assert [lk.local[id(n)] for n in schedule] == ["%0", "%1", "%2", "acc2"]


def test_is_reported() -> None:
    i = Var("i", i64[()])
    assert is_reported(ops.exp(X)) and is_reported(GridRegionExpr(1, i, (), (), X, ()))
    assert not is_reported(X) and not is_reported(Constant(1.0, f32[()]))


def test_keys_in_an_evaluation_table() -> None:
    """The direct route names every reported value by its key, callees under their call path."""
    p = Var("p", f32[4])
    double = Function("double", (p,), ops.add(p, p, span=_span("d")))
    h = ops.exp(X, span=_span("h"))
    a = ops.call(double, h, span=_span("a"))
    b = ops.call(double, a)
    fn = Function("mlp", (X,), ops.neg(b))
    table: dict[str, Value] = {}
    evaluate_value(fn, (torch.zeros(4),), table=table)
    assert set(table) == {"mlp/h", "mlp/a", "mlp/%3", "mlp/%4", "mlp/double/d", "mlp/double#1/d"}
