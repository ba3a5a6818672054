"""Evaluator spec §1 (``Value``, ``TensorValue``, ``TupleValue``) and the return contract of
``evaluate`` (the spec's preamble: a tensor for one output, a tuple for a TupleType result)."""

import pytest
import torch
from spec_helpers import tensor, tensors

from tfexec import (
    Constant,
    DimVar,
    EvaluateContext,
    EvaluatorVisitor,
    Expr,
    Function,
    GridRegionExpr,
    Layout,
    TensorType,
    TensorValue,
    Tuple,
    TupleGetItem,
    TupleValue,
    Value,
    Var,
    evaluate,
    f32,
    i64,
    ops,
)


def _value(expr: Expr) -> Value:
    """Evaluate a closed expression through the public visitor."""
    return EvaluatorVisitor().visit(expr, EvaluateContext())


def _const(t: torch.Tensor) -> Constant:
    return Constant(t, TensorType(tuple(t.shape), f32[()].dtype))


@pytest.mark.spec("s1.value-abstract-base", "s1.value-kinds")
def test_s1_tensor_and_tuple_values_are_values() -> None:
    tv = _value(_const(torch.ones(2)))
    assert isinstance(tv, TensorValue) and isinstance(tv, Value)
    tup = _value(Tuple((_const(torch.ones(2)), _const(torch.zeros(3)))))
    assert isinstance(tup, TupleValue) and isinstance(tup, Value)


@pytest.mark.spec("s1.data-logical-shape")
def test_s1_tensorvalue_data_is_logical_shape() -> None:
    # f32[8] held in a (2, 4) layout: data stays in the logical shape (8,), type carries the layout.
    x = Var("x", f32[8])
    layout = Layout((2, 4))
    body = ops.reshard(x, layout=layout)
    v = EvaluatorVisitor().visit(ops.call(Function("f", (x,), body), Constant(torch.arange(8.0), f32[8])), EvaluateContext())
    assert isinstance(v, TensorValue)
    assert tuple(v.data.shape) == (8,)
    assert v.type.shape == (8,) and v.type.layout == layout
    assert torch.equal(v.data, torch.arange(8.0))


@pytest.mark.spec("s1.data-logical-shape")
def test_s1_tensorvalue_data_shape_is_its_type_shape_after_layout_ops() -> None:
    # A value reshaped logically then given a layout: data.shape == type.shape at every step.
    x = Var("x", f32[4, 6])
    r = ops.reshard(ops.reshape(x, shape=(2, 12)), layout=Layout((6, 4)))
    v = EvaluatorVisitor().visit(ops.call(Function("f", (x,), r), Constant(torch.ones(4, 6), f32[4, 6])), EvaluateContext())
    assert isinstance(v, TensorValue)
    assert tuple(v.data.shape) == v.type.shape == (2, 12)


@pytest.mark.spec("s1.scalar-rank0")
def test_s1_scalar_is_rank0() -> None:
    x = Var("x", f32[3])
    s = ops.reduce(x, kind="sum")
    v = EvaluatorVisitor().visit(ops.call(Function("f", (x,), s), Constant(torch.ones(3), f32[3])), EvaluateContext())
    assert isinstance(v, TensorValue)
    assert v.data.dim() == 0 and v.type.shape == () and v.type.rank == 0
    assert v.data.item() == 3.0
    # a Python scalar constant is a rank-0 tensor of a rank-0 type too
    c = _value(Constant(2.5, f32[()]))
    assert isinstance(c, TensorValue) and c.data.dim() == 0 and c.type.shape == ()
    # and evaluate returns the scalar as a rank-0 tensor
    out = evaluate(Function("g", (x,), s), torch.ones(3))
    assert isinstance(out, torch.Tensor) and out.dim() == 0


@pytest.mark.spec("s1.value-kinds", "s1.tuple-elements")
def test_s1_tuplevalue_of_tuple_node_in_field_order() -> None:
    a, b = _const(torch.ones(2)), _const(torch.zeros(3))
    v = _value(Tuple((a, b)))
    assert isinstance(v, TupleValue) and len(v.elements) == 2
    first, second = v.elements
    assert isinstance(first, TensorValue) and torch.equal(first.data, torch.ones(2))
    assert isinstance(second, TensorValue) and torch.equal(second.data, torch.zeros(3))


@pytest.mark.spec("s1.tuple-elements")
def test_s1_tuple_get_item_projects_by_static_index() -> None:
    t = Tuple((_const(torch.ones(2)), _const(torch.full((3,), 7.0))))
    v = _value(TupleGetItem(t, 1))
    assert isinstance(v, TensorValue) and torch.equal(v.data, torch.full((3,), 7.0))


@pytest.mark.spec("s1.value-kinds")
def test_s1_tuplevalue_of_tuple_returning_function_call() -> None:
    x = Var("x", f32[2])
    pair = Function("pair", (x,), Tuple((ops.neg(x), ops.add(x, x))))
    v = _value(ops.call(pair, Constant(torch.tensor([1.0, 2.0]), f32[2])))
    assert isinstance(v, TupleValue) and len(v.elements) == 2
    neg, double = v.elements
    assert isinstance(neg, TensorValue) and torch.equal(neg.data, torch.tensor([-1.0, -2.0]))
    assert isinstance(double, TensorValue) and torch.equal(double.data, torch.tensor([2.0, 4.0]))


@pytest.mark.spec("s1.value-kinds")
def test_s1_tuplevalue_of_multi_carry_loop() -> None:
    k = Var("k", i64[()])
    a, b = Var("a", f32[()]), Var("b", f32[()])
    loop = GridRegionExpr(
        3, k, (Constant(1.0, f32[()]), Constant(0.0, f32[()])), (a, b), Tuple((ops.add(a, 1.0), ops.add(b, a))),
        (ops.add(a, 1.0), ops.add(b, a)),
    )
    v = _value(loop)
    assert isinstance(v, TupleValue) and len(v.elements) == 2
    av, bv = v.elements
    assert isinstance(av, TensorValue) and isinstance(bv, TensorValue)
    assert av.data.item() == 4.0 and bv.data.item() == 1.0 + 2.0 + 3.0


@pytest.mark.spec("s0.tensor-or-tuple-result")
def test_s0_evaluate_returns_tensor_for_single_output() -> None:
    x = Var("x", f32[2])
    out = evaluate(Function("f", (x,), ops.mul(x, 3.0)), torch.tensor([1.0, 2.0]))
    assert isinstance(out, torch.Tensor)
    assert torch.equal(out, torch.tensor([3.0, 6.0]))


@pytest.mark.spec("s0.tensor-or-tuple-result")
def test_s0_evaluate_returns_tuple_for_tuple_type_result() -> None:
    x = Var("x", f32[2])
    fn = Function("f", (x,), Tuple((x, Tuple((ops.neg(x), ops.exp(x))))))
    out = evaluate(fn, torch.tensor([0.0, 1.0]))
    assert isinstance(out, tuple) and len(out) == 2
    assert torch.equal(tensor(out[0]), torch.tensor([0.0, 1.0]))
    inner = out[1]
    assert isinstance(inner, tuple) and len(inner) == 2
    assert torch.equal(inner[0], torch.tensor([-0.0, -1.0]))
    assert torch.equal(inner[1], torch.exp(torch.tensor([0.0, 1.0])))


@pytest.mark.spec("s0.bind-in-order")
def test_s0_evaluate_binds_inputs_in_order() -> None:
    x, y = Var("x", f32[2]), Var("y", f32[2])
    out = evaluate(Function("f", (x, y), ops.sub(x, y)), torch.tensor([5.0, 5.0]), torch.tensor([1.0, 2.0]))
    assert torch.equal(tensor(out), torch.tensor([4.0, 3.0]))


@pytest.mark.spec("s0.tensor-or-tuple-result")
def test_s0_evaluate_tuple_result_of_dim_var_function_is_concrete() -> None:
    # a TupleType result with symbolic dims still comes back as concrete tensors
    n = DimVar("N")
    x = Var("x", f32[n])
    out = evaluate(Function("f", (x,), Tuple((x, ops.reduce(x, kind="max")))), torch.arange(5.0))
    first, top = tensors(out)
    assert torch.equal(first, torch.arange(5.0))
    assert top.item() == 4.0
