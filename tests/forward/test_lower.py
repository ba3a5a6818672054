"""The lowering route: structure of the lowered graph, its three readings, checking modes,
and error parity with the visitor."""

import gc
import weakref
from dataclasses import dataclass
from typing import ClassVar

import pytest
import torch

import tfexec
from tfexec import DimVar, EvalError, Function, GridRegionExpr, LoweringError, Tuple, TupleGetItem, Var, f32, i64, ops
from tfexec.semantics.registry import Kernel, value_rule
from tfexec.evaluator.visitor import evaluate_value
from tfexec.forward.data import ForwardData
from tfexec.forward.kinds import Fail
from tfexec.forward.node import ForwardNode, Read

from shared_helpers import LyingOp, SameTypeOp

B, K = DimVar("B"), DimVar("K")


def mlp() -> Function:
    x, w1, w2 = Var("x", f32[B, 8]), Var("w1", f32[8, 16]), Var("w2", f32[16, 8])
    return Function("mlp", (x, w1, w2), ops.matmul(ops.silu(ops.matmul(x, w1)), w2))


def tiled(tile: int = 4) -> Function:
    a, b = Var("a", f32[8, K]), Var("b", f32[K, 8])
    k, acc = Var("k", i64[()]), Var("acc", f32[8, 8])
    t = ops.dim_mul(k, tile)
    step = ops.add(acc, ops.matmul(ops.slice(a, (0, t), sizes=(8, tile)), ops.slice(b, (t, 0), sizes=(tile, 8))))
    loop = GridRegionExpr(K // tile, k, (ops.full(shape=(8, 8), value=0.0, dtype=f32),), (acc,), step, (step,))
    return Function("tiled", (a, b), loop)


def mlp_inputs() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(3, 8, generator=g), torch.randn(8, 16, generator=g), torch.randn(16, 8, generator=g)


def test_run_equals_evaluate_bitwise() -> None:
    fn, inputs = mlp(), mlp_inputs()
    assert torch.equal(tfexec.lower(fn).run(*inputs), tfexec.evaluate(fn, *inputs))  # type: ignore[arg-type]


def test_eval_returns_inputs_then_every_node_in_order() -> None:
    fn, inputs = mlp(), mlp_inputs()
    graph = tfexec.lower(fn)
    context = graph.eval(*inputs)
    assert len(context) == graph.n_inputs + len(graph.nodes)
    for given, bound in zip(inputs, context[: graph.n_inputs]):
        assert bound is given  # inputs already of the right dtype are bound as they are
    assert torch.equal(context[-1], tfexec.evaluate(fn, *inputs))  # type: ignore[arg-type]


def test_nodes_read_only_earlier_slots() -> None:
    graph = tfexec.lower(tiled())
    for index, node in enumerate(graph.nodes):
        assert all(r.slot < graph.n_inputs + index for r in node.reads)


def test_snoc_refuses_a_node_reading_a_later_slot() -> None:
    data = ForwardData.nil(1)
    x = Var("x", f32[1])
    node = ForwardNode(Fail(EvalError("unused")), (Read(1),), None, None, x)
    with pytest.raises(LoweringError, match="reads slot 1, but only slots 0..0 exist"):
        data.snoc(node)


def test_snoc_refuses_a_stale_view() -> None:
    data = ForwardData.nil(1)
    node = ForwardNode(Fail(EvalError("unused")), (Read(0),), None, None, Var("x", f32[1]))
    data.snoc(node)
    with pytest.raises(LoweringError, match="stale view"):
        data.snoc(node)


def test_denote_all_has_the_visitor_keys() -> None:
    fn, inputs = tiled(), (torch.randn(8, 16), torch.randn(16, 8))
    for loops in ("collapse", "expand"):
        table: dict[str, object] = {}
        evaluate_value(fn, inputs, table=table, loops=loops)  # type: ignore[arg-type]
        assert list(tfexec.lower(fn).denote_all(*inputs, loops=loops)) == list(table)


def test_loop_invariant_body_node_is_hoisted_into_the_outer_list() -> None:
    x, k, acc = Var("x", f32[4]), Var("k", i64[()]), Var("acc", f32[4])
    invariant = ops.exp(x)
    step = ops.add(acc, invariant)
    fn = Function("f", (x,), GridRegionExpr(3, k, (x,), (acc,), step, (step,)))
    graph = tfexec.lower(fn)
    assert graph.nodes[0].source is invariant  # computed once, in the outer list, before the loop
    out = graph.run(torch.zeros(4))
    assert torch.equal(out, torch.full((4,), 3.0))  # type: ignore[arg-type]


def test_function_calls_are_inlined_once_per_call_site() -> None:
    y = Var("y", f32[B])
    double = Function("double", (y,), ops.mul(y, 2.0))
    p = Var("p", f32[B])
    fn = Function("quad", (p,), ops.call(double, ops.call(double, p)))
    graph = tfexec.lower(fn)
    assert [n.key for n in graph.nodes if n.key] == ["quad/double/%2", "quad/double#1/%2"]
    assert torch.equal(graph.run(torch.arange(3.0)), torch.arange(3.0) * 4)  # type: ignore[arg-type]


def test_multi_carry_loop_and_tuples() -> None:
    x, k = Var("x", f32[2]), Var("k", i64[()])
    s, p = Var("s", f32[2]), Var("p", f32[2])
    loop = GridRegionExpr(3, k, (x, x), (s, p), Tuple((ops.add(s, x), ops.mul(p, x))), (ops.add(s, x), ops.mul(p, x)))
    fn = Function("f", (x,), Tuple((TupleGetItem(loop, 1), TupleGetItem(loop, 0))))
    out = tfexec.lower(fn).run(torch.tensor([2.0, 3.0]))
    assert isinstance(out, tuple)
    assert torch.equal(out[0], torch.tensor([16.0, 81.0])) and torch.equal(out[1], torch.tensor([8.0, 12.0]))
    assert tfexec.check_equivalence(fn, torch.tensor([2.0, 3.0])).ok


@pytest.mark.parametrize(
    "inputs",
    [
        (torch.ones(3, 8),),
        (torch.ones(3, 8), torch.ones(8, 16), torch.ones(15, 8)),
        (torch.ones(3, 8), torch.ones(8, 16), "weights"),
        (torch.ones(3, 8), torch.ones(8, 16), torch.ones(16, 8, device="meta")),
        (torch.ones(3), torch.ones(8, 16), torch.ones(16, 8)),
        ([[1.0, 2.0], [3.0]], torch.ones(8, 16), torch.ones(16, 8)),
    ],
    ids=["count", "static-dim", "string", "two-devices", "rank", "ragged"],
)
def test_bad_inputs_raise_the_same_error_on_both_routes(inputs: tuple[object, ...]) -> None:
    fn = mlp()
    with pytest.raises(EvalError) as visitor:
        tfexec.evaluate(fn, *inputs)
    with pytest.raises(EvalError) as lowered:
        tfexec.lower(fn).run(*inputs)
    assert str(visitor.value) == str(lowered.value)


def test_op_failure_message_is_the_visitors() -> None:
    x = Var("x", f32[B])
    fn = Function("f", (x,), ops.slice(x, (2,), sizes=(3,)))
    with pytest.raises(EvalError) as visitor:
        tfexec.evaluate(fn, torch.ones(4))
    with pytest.raises(EvalError) as lowered:
        tfexec.lower(fn).run(torch.ones(4))
    assert str(visitor.value) == str(lowered.value)
    assert "runs past axis 0 of length 4" in str(lowered.value)


def test_full_checking_catches_a_value_that_breaks_its_declared_type() -> None:
    x = Var("x", f32[B])
    y = ops.apply(LyingOp(), x)
    fn = Function("f", (x,), ops.add(y, 1.0))
    graph = tfexec.lower(fn)
    with pytest.raises(EvalError, match="runtime type check failed for this node's value: declared f32\\[B\\]"):
        graph.run(torch.ones(3), check="full")
    with pytest.raises(EvalError, match="runtime type check failed for the output of f"):
        graph.run(torch.ones(3), check="boundary")
    assert graph.run(torch.ones(3), check="off").shape == (4,)  # type: ignore[union-attr]


def test_full_checking_binds_dims_consistently_across_the_run() -> None:
    fn, inputs = mlp(), mlp_inputs()
    assert torch.equal(tfexec.lower(fn, check="full").run(*inputs), tfexec.evaluate(fn, *inputs))  # type: ignore[arg-type]


_SEEN: list["weakref.ref[torch.Tensor]"] = []
_ALIVE_AT_CHECK: list[bool] = []


@dataclass(frozen=True, slots=True)
class Remember(SameTypeOp):
    """Test op: remembers a weak reference to its operand and returns a copy."""

    name: ClassVar[str] = "remember_test_op"


@dataclass(frozen=True, slots=True)
class Probe(Remember):
    """Test op: records whether the remembered operand is still alive, returns its operand."""

    name: ClassVar[str] = "probe_test_op"


def _remember(x: torch.Tensor) -> torch.Tensor:
    _SEEN.append(weakref.ref(x))
    return x.clone()


def _probe(x: torch.Tensor) -> torch.Tensor:
    gc.collect()
    _ALIVE_AT_CHECK.append(_SEEN[-1]() is not None)
    return x


value_rule(Remember)(lambda op, args: Kernel(_remember))
value_rule(Probe)(lambda op, args: Kernel(_probe))


def test_run_releases_each_slot_after_its_last_reader() -> None:
    x = Var("x", f32[1024])
    h1 = ops.exp(x)  # last read by `remember`: run frees it right after
    fn = Function("f", (x,), ops.apply(Probe(), ops.apply(Remember(), h1)))
    _ALIVE_AT_CHECK.clear()
    tfexec.lower(fn).run(torch.ones(1024))
    assert _ALIVE_AT_CHECK == [False]
    tfexec.lower(fn).eval(torch.ones(1024))  # eval keeps the whole context
    assert _ALIVE_AT_CHECK == [False, True]
    tfexec.lower(fn).run(torch.ones(1024), check="full")  # full checking frees too
    assert _ALIVE_AT_CHECK == [False, True, False]


def test_no_reference_cycle_keeps_values_alive_after_run() -> None:
    fn = mlp()
    graph = tfexec.lower(fn)
    out = graph.run(*mlp_inputs())
    ref = weakref.ref(out)  # type: ignore[arg-type]
    del out
    assert ref() is None


def test_lowering_a_long_chain_is_iterative() -> None:
    x = Var("x", f32[2])
    node = x
    for _ in range(20_000):
        node = ops.add(node, 1.0)
    fn = Function("chain", (x,), node)
    out = tfexec.lower(fn).run(torch.zeros(2))
    assert torch.equal(out, torch.full((2,), 20_000.0))  # type: ignore[arg-type]


def test_ill_typed_function_does_not_lower() -> None:
    x = Var("x", f32[4])
    fn = Function("f", (x,), ops.reduce(x, kind="sum", axes=(3,)))
    with pytest.raises(tfexec.TypeInferenceError, match="axis 3 is out of range"):
        tfexec.lower(fn)
