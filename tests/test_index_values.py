"""Index values (a loop's induction variable, ``dim_*`` results) are kept as host ints by
both routes (core-ir §2) and are observed as the same rank-0 int64 tensor wherever anything
reads them as data: a table, an output, ``eval``'s context, a kernel that takes tensors, a
plain handler, a call's argument, a carry. On ``meta`` they stay tensors, so reading one is
still the spec's ``EvalError``."""

import pytest
import torch

import tfexec
from tfexec import EvalError, Function, GridRegionExpr, Tuple, Var, check_equivalence, evaluate, f32, i64, lower, ops
from tfexec.semantics.values import IndexValue, index_tensor


def _loop() -> Function:
    """Each iteration: an index computed from k, used by a slice, observed by a cast, carried and output."""
    x = Var("x", f32[8])
    k, acc, last = Var("k", i64[()]), Var("acc", f32[2]), Var("last", i64[()])
    t = ops.dim_mul(k, 2)
    step = ops.add(acc, ops.add(ops.slice(x, (t,), sizes=(2,)), ops.cast(t, dtype=f32)))
    loop = GridRegionExpr(4, k, (ops.full(shape=(2,), value=0.0, dtype=f32), tfexec.Constant(0, i64[()])), (acc, last),
                          Tuple((step, t)), (step, t))
    return Function("f", (x,), loop)


def test_index_values_observed_alike_on_every_route() -> None:
    fn, x = _loop(), torch.arange(8.0)
    for loops in ("collapse", "expand"):
        report = check_equivalence(fn, x, loops=loops)  # type: ignore[arg-type]
        assert report.ok and report.compared > 0, str(report)
    direct, lowered = evaluate(fn, x), lower(fn).run(x)
    for out in (direct, lowered):
        assert isinstance(out, tuple)
        acc, last = out
        assert torch.equal(acc, torch.tensor([12.0 + 12.0, 16.0 + 12.0]))  # type: ignore[arg-type]
        assert isinstance(last, torch.Tensor) and last.dtype == torch.int64 and last.dim() == 0 and int(last) == 6
    table = lower(fn).denote_all(x, loops="expand")
    assert all(isinstance(v, (torch.Tensor, tuple)) for v in table.values())
    assert torch.equal(table["f/%4[3]/%2"], index_tensor(6, None))  # type: ignore[arg-type]  # iteration 3's dim_mul, observed


def test_eval_context_holds_tensors_only() -> None:
    k = Var("k", i64[()])
    fn = Function("f", (k,), ops.dim_add(ops.dim_mul(k, 3), 1))
    context = lower(fn).eval(torch.tensor(2))
    assert all(isinstance(v, torch.Tensor) for v in context)
    assert int(context[-1]) == 7 and torch.equal(evaluate(fn, torch.tensor(2)), context[-1])  # type: ignore[arg-type]


def test_an_index_value_is_a_host_int_whose_tensor_is_made_when_read() -> None:
    from tfexec.semantics.constants import index_value

    v = index_value(3, None)
    assert isinstance(v, IndexValue) and v.index == 3 and str(v.type) == "i64[()]"
    assert torch.equal(v.data, index_tensor(3, None)) and v.data is v.data  # made once, when first read
    assert not isinstance(index_value(3, "meta"), IndexValue)  # on meta an index stays a tensor


def test_reading_a_loop_index_on_meta_is_the_same_evalerror_on_both_routes() -> None:
    x, k, acc = Var("x", f32[8]), Var("k", i64[()]), Var("acc", f32[2])
    step = ops.add(acc, ops.slice(x, (ops.dim_mul(k, 2),), sizes=(2,)))
    fn = Function("f", (x,), GridRegionExpr(4, k, (ops.full(shape=(2,), value=0.0, dtype=f32),), (acc,), step, (step,)))
    meta = torch.ones(8, device="meta")
    with pytest.raises(EvalError, match="meta") as direct:
        evaluate(fn, meta)
    with pytest.raises(EvalError) as lowered:
        lower(fn).run(meta)
    assert str(direct.value) == str(lowered.value)


def test_a_slice_of_an_index_value_or_a_weak_scalar_is_its_tensor_on_both_routes() -> None:
    """``slice`` takes host ints as starts only: a rank-0 operand that is an index value (or a
    weak scalar) is sliced as its tensor, made on the run's device (the kernel is told so by
    its ``Arg``), and the result is a tensor, never a host int."""
    x, k, acc = Var("x", f32[4]), Var("k", i64[()]), Var("acc", i64[()])
    of_index = ops.add(acc, ops.slice(ops.dim_mul(k, 3), (), sizes=()))
    of_weak = ops.slice(tfexec.Constant(7, i64[()]), (), sizes=())
    loop = GridRegionExpr(3, k, (tfexec.Constant(0, i64[()]),), (acc,), of_index, (of_index,))
    fn = Function("f", (x,), Tuple((loop, of_weak, ops.slice(x, (1,), sizes=(2,)))))
    x_in = torch.arange(4.0)
    report = check_equivalence(fn, x_in, loops="expand")
    assert report.ok and report.compared > 0, str(report)
    for out in (evaluate(fn, x_in), lower(fn).run(x_in, check="off")):
        assert isinstance(out, tuple)
        total, seven, window = out
        assert isinstance(total, torch.Tensor) and total.dtype == torch.int64 and int(total) == 0 + 3 + 6
        assert isinstance(seven, torch.Tensor) and int(seven) == 7
        assert torch.equal(window, torch.tensor([1.0, 2.0]))  # type: ignore[arg-type]


def test_dim_arithmetic_of_two_weak_scalars_on_meta_is_a_meta_tensor_on_both_routes() -> None:
    """A ``dim_*`` whose operands are both weak reads no tensor, so only the run's device says
    whether its result is a host int: on meta it is a rank-0 int64 meta tensor, which a slice
    start then cannot read (as for any index on meta), where on the CPU it is read."""
    x = Var("x", f32[8])
    fn = Function("f", (x,), Tuple((ops.dim_add(2, 3), ops.slice(x, (ops.dim_add(1, 0),), sizes=(2,)))))
    meta = torch.ones(8, device="meta")
    for run in (lambda: evaluate(fn, meta), lambda: lower(fn).run(meta, check="off")):
        with pytest.raises(EvalError, match="slice start 0 is on device meta"):
            run()
    only = Function("g", (x,), Tuple((x, ops.dim_add(2, 3))))
    for out in (evaluate(only, meta), lower(only).run(meta, check="off")):
        assert isinstance(out, tuple)
        assert out[1].device.type == "meta" and out[1].dtype == torch.int64 and out[1].dim() == 0  # type: ignore[union-attr]
    for out in (evaluate(fn, torch.arange(8.0)), lower(fn).run(torch.arange(8.0))):
        assert isinstance(out, tuple) and int(out[0]) == 5 and torch.equal(out[1], torch.tensor([1.0, 2.0]))  # type: ignore[arg-type, call-overload]


def test_a_rule_is_told_which_operands_may_be_index_values() -> None:
    from tfexec.semantics.dispatch import plan_call

    x, k = Var("x", f32[8]), Var("k", i64[()])
    call = ops.slice(x, (ops.dim_mul(k, 2),), sizes=(2,))
    tfexec.infer_types(Function("f", (x, k), call))
    plan = plan_call(call, call.target, [None, None])  # type: ignore[arg-type]
    operand, starts = plan.args
    assert not operand.index and starts.fields is None  # a tensor; a tuple without weak fields
    assert plan_call(call.args[1].fields[0], call.args[1].fields[0].target, [None, None]).args[0].index  # type: ignore[attr-defined]
