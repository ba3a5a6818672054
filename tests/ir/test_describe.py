"""``describe_expr`` (hir §text): the prefix of every error about a node."""

import torch

from tfexec import (
    Constant,
    ConstTensor,
    DimVar,
    Function,
    GridRegionExpr,
    Span,
    Tuple,
    TupleGetItem,
    Var,
    describe_expr,
    f32,
    i64,
    ops,
)
from tfexec.ir.describe import op_label

X = Var("x", f32[4])
W = Var("w1", f32[4, 4])


def test_with_a_span_it_renders_location_binding_and_authored_text() -> None:
    call = ops.matmul(X, W, span=Span("model.tf.py", 12, 8, "h", "matmul(x, w1)"))
    assert describe_expr(call) == "model.tf.py:12:8 h = matmul(x, w1)"


def test_a_span_without_binding_or_text() -> None:
    unnamed = ops.matmul(X, W, span=Span("model.tf.py", 3, 12, None, "matmul(x, w1)"))
    assert describe_expr(unnamed) == "model.tf.py:3:12 matmul(x, w1)"
    no_text = ops.add(X, 1.0, span=Span("model.tf.py", 4, 5, "h"))
    assert describe_expr(no_text) == "model.tf.py:4:5 h = add(x, 1.0)"


def test_function_description() -> None:
    fn = Function("mlp", (X, W), X)
    assert describe_expr(fn) == "function mlp(x, w1)"
    spanned = Function("mlp", (X, W), X, span=Span("model.tf.py", 1, 1, "mlp", "def mlp(x, w1)"))
    assert describe_expr(spanned) == "model.tf.py:1:1 mlp = def mlp(x, w1)"


def test_without_a_span_it_renders_the_op_and_one_level_of_structure() -> None:
    h = ops.matmul(X, W)
    assert describe_expr(h) == "matmul(x, w1)"
    assert describe_expr(ops.add(h, 0.5)) == "add(<matmul>, 0.5)"
    named = ops.exp(X, span=Span("m.tf.py", 2, 5, "e"))
    assert describe_expr(ops.add(named, True)) == "add(e, True)"
    assert describe_expr(ops.reduce(X, kind="sum", axes=(0,))) == "reduce(x, kind=sum, axes=(0,), keepdims=False)"
    assert describe_expr(ops.full(shape=(2,), value=0.0, dtype=f32)) == "full(shape=(2,), value=0.0, dtype=f32)"
    callee = Function("double", (X,), ops.add(X, X))
    assert describe_expr(ops.call(callee, h)) == "double(<matmul>)"


def test_leaf_and_structural_nodes_without_a_span() -> None:
    assert describe_expr(X) == "var x: f32[4]"
    assert describe_expr(Constant(2, i64[()])) == "constant 2: i64[()]"
    assert describe_expr(Constant(torch.zeros(2, 3), f32[2, 3])) == "constant constant f32[2, 3]: f32[2, 3]"
    assert describe_expr(ConstTensor("wq", f32[4, 4])) == "const_tensor wq: f32[4, 4]"
    pair = Tuple((X, ConstTensor("wq", f32[4, 4]), Constant(torch.ones(1), f32[1])))
    assert describe_expr(pair) == "tuple(x, const wq, constant f32[1])"
    assert describe_expr(TupleGetItem(pair, 1)) == "<Tuple>[1]"
    i, acc = Var("i", i64[()]), Var("acc", f32[4])
    loop = GridRegionExpr(DimVar("K") // 32, i, (X,), (acc,), acc, (acc,))
    assert describe_expr(loop) == "grid(extent=K // 32, index=i, carries=(acc))"
    assert describe_expr(ops.neg(loop)) == "neg(<grid>)"


def test_op_label() -> None:
    assert op_label(ops.add(X, X)) == "add"
    assert op_label(Function("f", (), X)) == "function f"
    assert op_label(X) == "Var"
    i = Var("i", i64[()])
    assert op_label(GridRegionExpr(1, i, (), (), X, ())) == "grid"


def test_describe_never_walks_the_graph() -> None:
    h = X
    c = Constant(1.0, f32[()])
    for _ in range(20_000):
        h = ops.add(h, c)  # type: ignore[assignment]
    assert describe_expr(h) == "add(<add>, 1.0)"
    assert describe_expr(Function("chain", (X,), h)) == "function chain(x)"
