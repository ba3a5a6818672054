"""Evaluator spec §5 (``GridRegionExpr``) with hir §1.2: carry chain, induction variable,
single / multi / no-carry results, zero-trip and negative extents, loop-invariant nodes."""

import pytest
import spec_helpers
import torch
from spec_helpers import PROBES, SpecCount, SpecProbe, tensor, tensors

from tfexec import (
    Constant,
    DimVar,
    EvalError,
    EvaluateContext,
    EvaluatorVisitor,
    Expr,
    Function,
    GridRegionExpr,
    TensorValue,
    Tuple,
    TupleValue,
    Var,
    describe_expr,
    evaluate,
    f32,
    i64,
    ops,
)

K = DimVar("K")


def _iv() -> Var:
    return Var("k", i64[()])


@pytest.mark.spec("s5.carry-chain")
def test_s5_first_iteration_binds_phi_to_init_later_to_previous_yield() -> None:
    # acc_{i+1} = 10 * acc_i + (i + 1), from acc_0 = init: the digits record the order
    k = _iv()
    acc = Var("acc", i64[()])
    init = Var("init", i64[()])
    step = ops.add(ops.mul(ops.apply(SpecProbe("phi"), acc), 10), ops.add(k, 1))
    loop = GridRegionExpr(3, k, (init,), (acc,), step, (step,))
    out = evaluate(Function("f", (init,), loop), 7)
    assert isinstance(out, torch.Tensor) and out.item() == 7123
    seen = [ctx.args[0] for ctx in PROBES["phi"]]
    assert [v.data.item() for v in seen if isinstance(v, TensorValue)] == [7, 71, 712]


@pytest.mark.spec("s5.induction-var")
def test_s5_induction_var_is_rank0_int64_current_index() -> None:
    k = _iv()
    acc = Var("acc", f32[()])
    step = ops.add(acc, ops.cast(ops.apply(SpecProbe("k"), k), dtype=f32))
    loop = GridRegionExpr(4, k, (Constant(0.0, f32[()]),), (acc,), step, (step,))
    out = evaluate(Function("f", (), loop))
    assert isinstance(out, torch.Tensor) and out.item() == 0 + 1 + 2 + 3
    values = [ctx.args[0] for ctx in PROBES["k"]]
    assert len(values) == 4
    for i, v in enumerate(values):
        assert isinstance(v, TensorValue)
        assert v.data.dim() == 0 and v.data.dtype == torch.int64 and v.data.item() == i
        assert v.type == i64[()]


@pytest.mark.spec("s5.induction-var", "s0.selects-no-device")
def test_s5_induction_var_on_run_device() -> None:
    k = _iv()
    x = Var("x", f32[2])
    loop = GridRegionExpr(2, k, (), (), ops.apply(SpecProbe("dev"), k, x), ())
    evaluate(Function("f", (x,), loop), torch.zeros(2, device="meta"))
    assert all(isinstance(c.args[0], TensorValue) and c.args[0].data.device.type == "meta" for c in PROBES["dev"])


@pytest.mark.spec("s5.result")
def test_s5_single_carry_result_is_the_final_value() -> None:
    k = _iv()
    x = Var("x", f32[3])
    acc = Var("acc", f32[3])
    y = ops.mul(acc, 2.0)
    loop = GridRegionExpr(K, k, (x,), (acc,), y, (y,))
    fn = Function("f", (x, Var("n", f32[K])), loop)
    v = EvaluatorVisitor().visit(
        ops.call(fn, Constant(torch.ones(3), f32[3]), Constant(torch.zeros(5), f32[5])), EvaluateContext()
    )
    assert isinstance(v, TensorValue) and torch.equal(v.data, torch.full((3,), 32.0))
    out = evaluate(fn, torch.ones(3), torch.zeros(5))
    assert torch.equal(tensor(out), torch.full((3,), 32.0))


@pytest.mark.spec("s5.result")
def test_s5_multi_carry_result_is_tuplevalue_in_carry_order() -> None:
    k = _iv()
    a, b = Var("a", f32[()]), Var("b", f32[()])
    ya, yb = b, ops.add(a, b)  # Fibonacci: (a, b) -> (b, a + b); a yield may be a phi itself
    loop = GridRegionExpr(6, k, (Constant(0.0, f32[()]), Constant(1.0, f32[()])), (a, b), Tuple((ya, yb)), (ya, yb))
    v = EvaluatorVisitor().visit(loop, EvaluateContext())
    assert isinstance(v, TupleValue) and len(v.elements) == 2
    assert [e.data.item() for e in v.elements if isinstance(e, TensorValue)] == [8.0, 13.0]
    out = evaluate(Function("f", (), loop))
    assert [t.item() for t in tensors(out)] == [8.0, 13.0]


@pytest.mark.spec("s5.no-carry")
def test_s5_no_carry_loop_yields_final_body_value() -> None:
    k = _iv()
    x = Var("x", f32[4])
    body = ops.mul(x, ops.cast(k, dtype=f32))
    loop = GridRegionExpr(3, k, (), (), body, ())
    out = evaluate(Function("f", (x,), loop), torch.ones(4))
    assert torch.equal(tensor(out), torch.full((4,), 2.0))


@pytest.mark.spec("s5.no-carry")
def test_s5_no_carry_loop_evaluates_body_every_iteration() -> None:
    k = _iv()
    loop = GridRegionExpr(5, k, (), (), ops.apply(SpecCount("body"), k), ())
    out = evaluate(Function("f", (), loop))
    assert isinstance(out, torch.Tensor) and out.item() == 4
    assert spec_helpers.COUNTS["body"] == 5


@pytest.mark.spec("s5.result")
def test_s5_carried_loop_does_not_evaluate_body() -> None:
    # hir §1.2: with carries the result depends on yield_values alone
    k = _iv()
    acc = Var("acc", f32[()])
    y = ops.add(acc, 1.0)
    loop = GridRegionExpr(3, k, (Constant(0.0, f32[()]),), (acc,), ops.apply(SpecCount("unused"), y), (y,))
    out = evaluate(Function("f", (), loop))
    assert isinstance(out, torch.Tensor) and out.item() == 3.0
    assert spec_helpers.COUNTS["unused"] == 0


@pytest.mark.spec("s5.carry-chain", "s5.result")
def test_s5_zero_trip_loop_returns_init_values() -> None:
    k = _iv()
    x = Var("x", f32[2])
    acc = Var("acc", f32[2])
    y = ops.apply(SpecCount("step"), ops.add(acc, 1.0))
    single = GridRegionExpr(K, k, (x,), (acc,), y, (y,))
    n = Var("n", f32[K])
    out = evaluate(Function("f", (x, n), single), torch.tensor([3.0, 4.0]), torch.zeros(0))
    assert torch.equal(tensor(out), torch.tensor([3.0, 4.0]))
    a, b = Var("a", f32[2]), Var("b", f32[()])
    ya, yb = ops.apply(SpecCount("step"), a), ops.add(b, 1.0)
    multi = GridRegionExpr(0, k, (x, Constant(5.0, f32[()])), (a, b), Tuple((ya, yb)), (ya, yb))
    out2 = evaluate(Function("g", (x,), multi), torch.tensor([3.0, 4.0]))
    first, second = tensors(out2)
    assert torch.equal(first, torch.tensor([3.0, 4.0])) and second.item() == 5.0
    assert spec_helpers.COUNTS["step"] == 0


@pytest.mark.spec("s5.no-carry")
def test_s5_zero_trip_no_carry_loop_is_error_naming_loop() -> None:
    k = _iv()
    loop = GridRegionExpr(0, k, (), (), ops.add(k, 1), ())
    with pytest.raises(EvalError, match=r"runs zero times and has no carried values, so it has no value") as info:
        evaluate(Function("f", (), loop))
    assert str(info.value).startswith(describe_expr(loop) + ": ")
    assert "grid(extent=0, index=k" in str(info.value)


@pytest.mark.spec("s5.loop-over-domain")
def test_s5_negative_extent_is_error() -> None:
    k = _iv()
    acc = Var("acc", f32[()])
    loop = GridRegionExpr(K - 3, k, (Constant(0.0, f32[()]),), (acc,), acc, (acc,))
    n = Var("n", f32[K])
    with pytest.raises(EvalError, match=r"extent K - 3 = -1 is negative") as info:
        evaluate(Function("f", (n,), loop), torch.zeros(2))
    assert str(info.value).startswith(describe_expr(loop) + ": ")


@pytest.mark.spec("s5.loop-over-domain")
def test_s5_unbound_extent_is_error_naming_the_dim() -> None:
    k = _iv()
    loop = GridRegionExpr(K, k, (), (), k, ())
    with pytest.raises(EvalError, match=r"extent K: dim K is not bound"):
        evaluate(Function("f", (), loop))


@pytest.mark.spec("s5.loop-over-domain")
def test_s5_extent_from_dim_binding() -> None:
    k = _iv()
    n = Var("n", f32[K])
    loop = GridRegionExpr(K // 2, k, (), (), k, ())
    assert tensor(evaluate(Function("f", (n,), loop), torch.zeros(9))).item() == 3


@pytest.mark.spec("s4.memo-identity")
def test_s5_loop_invariant_body_nodes_evaluated_once() -> None:
    k = _iv()
    x = Var("x", f32[3])
    acc = Var("acc", f32[3])
    invariant = ops.apply(SpecCount("invariant"), ops.exp(x))  # depends on neither k nor acc
    variant = ops.apply(SpecCount("variant"), ops.add(acc, invariant))
    loop = GridRegionExpr(5, k, (ops.mul(x, 0.0),), (acc,), variant, (variant,))
    out = evaluate(Function("f", (x,), loop), torch.zeros(3))
    assert torch.equal(tensor(out), torch.full((3,), 5.0))
    assert spec_helpers.COUNTS["invariant"] == 1
    assert spec_helpers.COUNTS["variant"] == 5


@pytest.mark.spec("s4.memo-identity")
def test_s5_loop_invariant_node_in_no_carry_loop_evaluated_once() -> None:
    k = _iv()
    x = Var("x", f32[2])
    inv = ops.apply(SpecCount("inv"), ops.neg(x))
    loop = GridRegionExpr(4, k, (), (), ops.add(inv, ops.cast(ops.apply(SpecCount("var"), k), dtype=f32)), ())
    out = evaluate(Function("f", (x,), loop), torch.ones(2))
    assert torch.equal(tensor(out), torch.full((2,), 2.0))
    assert spec_helpers.COUNTS["inv"] == 1 and spec_helpers.COUNTS["var"] == 4


@pytest.mark.spec("s5.induction-var", "s4.dim-arith-operand")
def test_s5_tiled_matmul_with_slice_start_from_induction_variable() -> None:
    # the canonical tiled loop of hir §1.2: the slice start is a dim_mul of the index
    a, b = Var("a", f32[4, K]), Var("b", f32[K, 4])
    k = _iv()
    acc = Var("acc", f32[4, 4])
    t = ops.dim_mul(k, 2)
    pa = ops.slice(a, (0, t), sizes=(4, 2))
    pb = ops.slice(b, (t, 0), sizes=(2, 4))
    y = ops.add(acc, ops.matmul(pa, pb))
    loop = GridRegionExpr(K // 2, k, (ops.full(shape=(4, 4), value=0.0, dtype=f32),), (acc,), y, (y,))
    av, bv = torch.randn(4, 6), torch.randn(6, 4)
    out = evaluate(Function("tiled", (a, b), loop), av, bv)
    want = torch.zeros(4, 4)
    for start in (0, 2, 4):  # the same accumulation order, so the result is bitwise the same
        want = want + av[:, start : start + 2] @ bv[start : start + 2]
    assert isinstance(out, torch.Tensor) and torch.equal(out, want)


@pytest.mark.spec("s5.induction-var")
def test_s5_nested_loops_read_the_outer_index() -> None:
    i, j = Var("i", i64[()]), Var("j", i64[()])
    acc, inner_acc = Var("acc", i64[()]), Var("inner", i64[()])
    inner_y = ops.add(inner_acc, ops.mul(i, j))
    inner = GridRegionExpr(3, j, (acc,), (inner_acc,), inner_y, (inner_y,))
    outer = GridRegionExpr(4, i, (Constant(0, i64[()]),), (acc,), inner, (inner,))
    out = evaluate(Function("f", (), outer))
    assert isinstance(out, torch.Tensor) and out.item() == sum(a * b for a in range(4) for b in range(3))


@pytest.mark.spec("s3.other-failure-contracts")
def test_s5_loop_body_failure_names_the_failing_body_node() -> None:
    k = _iv()
    x = Var("x", f32[4])
    acc = Var("acc", f32[2])
    window = ops.slice(x, (ops.dim_mul(k, 2),), sizes=(2,))
    y = ops.add(acc, window)
    loop = GridRegionExpr(3, k, (Constant(torch.zeros(2), f32[2]),), (acc,), y, (y,))
    with pytest.raises(EvalError, match=r"window \[4, 6\).*axis 0 of length 4") as info:
        evaluate(Function("f", (x,), loop), torch.ones(4))
    assert str(info.value).startswith(describe_expr(window) + ": ")


def _weak_init_loop() -> Expr:
    k = _iv()
    acc = Var("acc", f32[()])
    y = ops.add(acc, 0.5)
    return GridRegionExpr(2, k, (ops.as_expr(1.0),), (acc,), y, (y,))


@pytest.mark.spec("s5.result")
def test_s5_loop_result_is_an_ordinary_value() -> None:
    v = EvaluatorVisitor().visit(_weak_init_loop(), EvaluateContext())
    assert isinstance(v, TensorValue) and v.scalar is None and v.data.item() == 2.0


@pytest.mark.spec("s5.visitor-method")
def test_s5_loop_is_the_visitor_method_no_separate_eval_grid() -> None:
    import tfexec
    import tfexec.evaluator.visitor as visitor_module

    assert "visit_GridRegionExpr" in EvaluatorVisitor.__dict__
    assert not hasattr(visitor_module, "eval_grid") and not hasattr(tfexec, "eval_grid")
