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
