"""The mesh evaluator on a 2-participant mesh against the single-participant one, on a real
gloo process group: every program runs in one batch (one launch), made once for the module.
The last job fails on purpose, in one participant only (a batch stops at its first failure).

Tolerance policy (tfexec.mesh docstring, ``mesh_cases.assert_same``): ``exact`` programs
must be bitwise equal to ``tfexec.evaluate``; the others (a split axis reduced or
contracted, matmuls) must agree within ``torch.testing.assert_close``'s defaults.
"""

from collections.abc import Callable

import pytest
import torch
from mesh_cases import Case, Outcomes, assert_same, data, ok, run_batch
from mesh_ops import FailOnRank

import tfexec
from tfexec import (
    Call,
    ConstTensor,
    DimVar,
    Function,
    GridRegionExpr,
    IRModule,
    LoadedModule,
    Mesh,
    Replicate,
    ShardLayout,
    Split,
    TupleType,
    Var,
    describe_expr,
    f32,
    i64,
    ops,
)

TP = Mesh((2,), ("tp",))
S0 = ShardLayout(TP, (Split(0),))
S1 = ShardLayout(TP, (Split(1),))
REP = ShardLayout(TP, (Replicate(),))


# -- the 2-participant programs ------------------------------------------------------------------------


def elementwise() -> Case:
    x, y = Var("x", f32[4, 6] @ S0), Var("y", f32[4, 6] @ S1)
    a = ops.add(ops.mul(x, 2.0), y)
    b = ops.where(ops.gt(a, 1.0), ops.exp(ops.neg(ops.abs(a))), ops.maximum(a, 0.5))
    flags = ops.cast(ops.logical_and(ops.gt(a, 0.0), ops.lt(b, 0.9)), dtype=i64.dtype)
    return Case(Function("elementwise", (x, y), tfexec.Tuple((b, flags))), (data(4, 6), data(4, 6, seed=1)))


def column_matmul() -> Case:
    x, w = Var("x", f32[8, 16]), Var("w", f32[16, 12] @ S1)
    return Case(Function("column_matmul", (x, w), ops.gelu(ops.matmul(x, w))), (data(8, 16), data(16, 12)), exact=False)


def mlp() -> Case:
    x, w1, w2 = Var("x", f32[8, 16]), Var("w1", f32[16, 32] @ S1), Var("w2", f32[32, 16] @ S0)
    body = ops.matmul(ops.silu(ops.matmul(x, w1)), w2)  # row-parallel second matmul: a Partial sum
    return Case(Function("mlp", (x, w1, w2), body), (data(8, 16), data(16, 32), data(32, 16)), exact=False)


def linear() -> Case:
    """``linear`` column-parallel (weight and bias split on the out axis) feeding a row-parallel
    one (weight split on the in axis: a Partial sum)."""
    x, w1, b1 = Var("x", f32[2, 8, 16]), Var("w1", f32[32, 16] @ S0), Var("b1", f32[32] @ S0)
    w2 = Var("w2", f32[16, 32] @ S1)
    body = ops.linear(ops.silu(ops.linear(x, w1, b1)), w2)
    return Case(Function("linear", (x, w1, b1, w2), body), (data(2, 8, 16), data(32, 16), data(32), data(16, 32)), exact=False)


def reductions() -> Case:
    x = Var("x", f32[4, 6] @ S0)
    body = tfexec.Tuple((
        ops.reduce(x, kind="sum", axes=(0,)),
        ops.reduce(x, kind="max", axes=(0,), keepdims=True),
        ops.reduce(x, kind="mean", axes=(1,)),
        ops.argmax(x, axis=0),
    ))
    return Case(Function("reductions", (x,), body), (data(4, 6),), exact=False)


def norms() -> Case:
    x = Var("x", f32[4, 6] @ S0)
    body = tfexec.Tuple((ops.softmax(x, axis=0), ops.layer_norm(x, axes=(-1,)), ops.rms_norm(x, axes=(-1,), eps=1e-6)))
    return Case(Function("norms", (x,), body), (data(4, 6),))


def shapes() -> Case:
    x, idx = Var("x", f32[4, 6] @ S0), Var("idx", i64[3])
    t = ops.transpose(ops.reshape(x, shape=(2, 2, 6)), perm=(2, 0, 1))
    c = ops.concat(t, t, axis=0)
    s = ops.slice(c, (1, 0, 1), sizes=(6, 2, 1))
    picked = ops.take(x, idx, axis=1)
    body = tfexec.Tuple((s, picked, ops.broadcast_to(ops.reduce(x, kind="max", axes=(1,), keepdims=True), shape=(3, 4, 6))))
    return Case(Function("shapes", (x, idx), body), (data(4, 6), torch.tensor([5, 0, 2])))


def reshards() -> Case:
    x = Var("x", f32[4, 6] @ S0)
    r1 = ops.reshard(x, layout=S1)
    r2 = ops.reshard(r1, layout=REP)
    r3 = ops.add(ops.reshard(r2, layout=None), 1.0)
    return Case(Function("reshards", (x,), tfexec.Tuple((r1, r2, r3))), (data(4, 6),), return_locals=True)


def tiled_loop() -> Case:
    a, b = Var("a", f32[8, 32] @ S0), Var("b", f32[32, 8])
    k, acc = Var("k", i64[()]), Var("acc", f32[8, 8])
    t = ops.dim_mul(k, 8)
    step = ops.add(acc, ops.matmul(ops.slice(a, (0, t), sizes=(8, 8)), ops.slice(b, (t, 0), sizes=(8, 8))))
    loop = GridRegionExpr(4, k, (ops.full(shape=(8, 8), value=0.0, dtype=f32.dtype),), (acc,), step, (step,))
    return Case(Function("tiled", (a, b), loop), (data(8, 32), data(32, 8)), exact=False)


def function_call() -> Case:
    u = Var("u", f32[4, 6] @ S0)
    square = Function("square", (u,), ops.mul(u, u))
    x = Var("x", f32[4, 6] @ S0)
    return Case(Function("caller", (x,), ops.add(Call(square, (x,)), x)), (data(4, 6),))


def loaded() -> Case:
    x = Var("x", f32[4, 6] @ S0)
    fn = Function("f", (x,), ops.matmul(x, ConstTensor("w", f32[6, 4])))
    module = IRModule({"f": fn}, {"w": f32[6, 4]}, entry="f")
    return Case(LoadedModule.from_reading(module, {"w": data(6, 4)}), (data(4, 6),), exact=False)


def local_split() -> Case:
    x = Var("x", f32[DimVar("N"), 6] @ S0)  # a symbolic size, split at run time
    return Case(Function("local_split", (x,), ops.local(x)), (data(4, 6),), return_locals=True)


def tuple_param() -> Case:
    pair = Var("pair", TupleType((f32[4, 6] @ S0, f32[6])))
    body = ops.add(tfexec.TupleGetItem(pair, 0), tfexec.TupleGetItem(pair, 1))
    return Case(Function("tuple_param", (pair,), body), ((data(4, 6), data(6)),))


LOCAL_MIX_INPUTS = (data(4, 6), data(2, 6, seed=3), data(2, 6, seed=4))


def local_mix() -> Case:
    x, bias, z = Var("x", f32[4, 6] @ S0), Var("bias", f32[2, 6]), Var("z", f32[2, 6] @ S1)
    body = ops.add(ops.add(ops.local(x), bias), z)  # per-participant + logical + distributed
    return Case(Function("local_mix", (x, bias, z), body), LOCAL_MIX_INPUTS, return_locals=True)


def local_replicated() -> Case:
    x = Var("x", f32[4, 6] @ REP)
    return Case(Function("local_replicated", (x,), ops.mul(ops.local(x), 3.0)), (data(4, 6),))


FAIL_CALL = Call(FailOnRank(rank=1), (Var("x", f32[4, 6] @ S0),))


def fails_on_rank_1() -> Case:
    x = FAIL_CALL.args[0]
    assert isinstance(x, Var)
    return Case(Function("fails", (x,), ops.add(FAIL_CALL, 1.0)), (data(4, 6),))


TWO: dict[str, Callable[[], Case]] = {
    "elementwise": elementwise, "column_matmul": column_matmul, "mlp": mlp, "linear": linear, "reductions": reductions,
    "norms": norms, "shapes": shapes, "reshards": reshards, "tiled_loop": tiled_loop,
    "function_call": function_call, "loaded": loaded, "local_split": local_split, "local_mix": local_mix,
    "local_replicated": local_replicated, "tuple_param": tuple_param, "fails_on_rank_1": fails_on_rank_1,
}


@pytest.fixture(scope="module")
def two() -> Outcomes:
    return run_batch(TWO, TP)


# -- equivalence with evaluate -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["elementwise", "column_matmul", "mlp", "linear", "reductions", "norms", "shapes", "reshards", "tiled_loop",
             "function_call", "loaded", "local_replicated", "tuple_param"],
)
def test_two_participants_compute_the_single_participant_value(two: Outcomes, name: str) -> None:
    case, result = ok(two, name)
    assert_same(result.logical, tfexec.evaluate(case.fn, *case.inputs), case.exact)


# -- locals --------------------------------------------------------------------------------------------------


def test_reshard_really_redistributes(two: Outcomes) -> None:
    case, result = ok(two, "reshards")
    (x,) = case.inputs
    assert isinstance(x, torch.Tensor) and result.locals is not None
    for rank, coord in enumerate([(0,), (1,)]):
        r1, r2, r3 = result.local(*coord)
        assert torch.equal(r1, x[:, 3 * rank : 3 * rank + 3])  # Split(1): a column half each
        assert torch.equal(r2, x) and torch.equal(r3, x + 1.0)  # Replicate: the whole value each


def test_local_of_a_split_value_is_each_participants_slice(two: Outcomes) -> None:
    case, result = ok(two, "local_split")
    (x,) = case.inputs
    assert isinstance(x, torch.Tensor) and result.locals is not None
    assert result.logical is None  # per-participant: no single logical value
    assert torch.equal(result.locals[0], x[:2]) and torch.equal(result.locals[1], x[2:])


def test_ops_on_a_local_value_run_per_participant_on_logical_operands(two: Outcomes) -> None:
    _, result = ok(two, "local_mix")
    x, bias, z = LOCAL_MIX_INPUTS
    assert result.locals is not None and result.logical is None
    for rank in range(2):
        assert torch.equal(result.locals[rank], x[2 * rank : 2 * rank + 2] + bias + z)


# -- failures inside a participant ------------------------------------------------------------------------


def test_an_error_in_one_participant_names_it_and_the_node(two: Outcomes) -> None:
    _, outcome = two["fails_on_rank_1"]
    assert outcome.result is None and outcome.error is not None
    message = str(outcome.error)
    assert message.startswith(describe_expr(FAIL_CALL) + ": on mesh participant rank 1 at coordinate (1,)")
    assert "ValueError: boom on rank 1" in message
