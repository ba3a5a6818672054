"""The equivalence check must be able to fail.

Real programs are lowered, then the lowering is deliberately corrupted the way a buggy
lowering would be — (a) two operand slots of a non-commutative op swapped, (b) a loop
iteration dropped, (c) a stale carry fed to every iteration — and the node-by-node
comparison must flag the corrupted node's key. Each corruption is checked twice: with a
small comparison written here (same keys, dtype, shape, bits), independent of
``tfexec.equivalence``, and with ``check_equivalence`` itself, its ``lower`` replaced by
one returning the corrupted graph. Every test first shows the uncorrupted graph passes.

Also here: ``ForwardData`` refuses a node that reads a slot that does not exist yet, and
refuses to extend a stale view.
"""

import dataclasses
from collections.abc import Callable, Iterator

import pytest
import torch

import tfexec.equivalence
import tfexec.forward.lower
from tfexec import EquivalenceError, LoweringError, assert_equivalent, check_equivalence, lower, ops
import tfexec.forward.kinds
from tfexec import EvalError
from tfexec.semantics import loops as loop_rules
from tfexec.semantics.values import TensorValue, TupleValue, Value
from tfexec.evaluator.visitor import evaluate_value
from tfexec.forward.data import ForwardData
from tfexec.forward.graph import ForwardGraph
from tfexec.forward.kinds import Fail
from tfexec.forward.node import ForwardNode, Read
from tfexec.forward.run import Body, Run
from tfexec.ir.dims import DimVar
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType

F32_4 = TensorType((4,), DType.float32)


def _named(call: Call, binding: str) -> Call:
    """``call`` with a binding name, so its node key reads ``f/<binding>``."""
    return Call(call.target, call.args, span=Span("corrupt.tf.py", 1, 1, binding=binding))


# -- an independent comparison of the two tables ---------------------------------------


def _leaves(value: object) -> list[torch.Tensor]:
    if isinstance(value, TensorValue):
        return [value.data]
    if isinstance(value, TupleValue):
        return [leaf for v in value.elements for leaf in _leaves(v)]
    if isinstance(value, torch.Tensor):
        return [value]
    assert isinstance(value, tuple)
    return [leaf for v in value for leaf in _leaves(v)]


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if (a.dtype, a.shape) != (b.dtype, b.shape):
        return False
    if a.dtype.is_floating_point:
        view = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        a, b = a.contiguous().view(view), b.contiguous().view(view)
    return torch.equal(a, b)


def diverging_keys(visitor: dict[str, Value], lowered: dict[str, object]) -> list[str]:
    """Keys whose values differ (dtype, shape or bits) or that only one table has, in the
    visitor's order, then the lowering's extra keys."""
    out = []
    for key in [*visitor, *(k for k in lowered if k not in visitor)]:
        if key not in visitor or key not in lowered:
            out.append(key)
            continue
        a, b = _leaves(visitor[key]), _leaves(lowered[key])
        if len(a) != len(b) or not all(_same(x, y) for x, y in zip(a, b)):
            out.append(key)
    return out


def _tensor(x: object) -> torch.Tensor:
    assert isinstance(x, torch.Tensor), f"expected a tensor, got {type(x).__name__}"
    return x


def visitor_table(fn: Function, inputs: tuple[object, ...], loops: str = "collapse") -> dict[str, Value]:
    table: dict[str, Value] = {}
    evaluate_value(fn, inputs, table=table, loops=loops)  # type: ignore[arg-type]
    return table


def replace_node(graph: ForwardGraph, key: str, wrap: Callable[[ForwardNode], ForwardNode]) -> ForwardGraph:
    """``graph`` with the top-level node keyed ``key`` replaced by ``wrap(node)``, rebuilt
    through ``ForwardData.nil``/``snoc`` as the lowering builds it."""
    data = ForwardData.nil(graph.n_inputs)
    found = False
    for node in graph.nodes:
        if node.key == key:
            node, found = wrap(node), True
        data = data.snoc(node)
    assert found, f"no node keyed {key} in {[n.key for n in graph.nodes]}"
    return dataclasses.replace(graph, body=dataclasses.replace(graph.body, data=data))


@pytest.fixture
def use_lowering(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[ForwardGraph], None]]:
    """Make ``check_equivalence`` use a given (corrupted) graph as its lowering route."""

    def use(graph: ForwardGraph) -> None:
        monkeypatch.setattr(tfexec.equivalence, "lower", lambda target, *args, **kwargs: graph)

    yield use


# -- (a) swapped operand slots of a non-commutative op ------------------------------------


def _sub_program() -> tuple[Function, tuple[torch.Tensor, ...]]:
    x, y = Var("x", F32_4), Var("y", F32_4)
    d = _named(ops.sub(x, y), "d")
    out = _named(ops.mul(d, 2.0), "out")
    return Function("f", (x, y), out), (torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([0.5, -1.0, 2.0, 8.0]))


def _swap_operands(node: ForwardNode) -> ForwardNode:
    first, second = node.reads
    return dataclasses.replace(node, reads=(second, first))


def test_swapped_operands_are_caught_at_the_op(use_lowering: Callable[[ForwardGraph], None]) -> None:
    fn, inputs = _sub_program()
    graph = lower(fn)
    table = visitor_table(fn, inputs)
    assert diverging_keys(table, graph.denote_all(*inputs)) == []
    assert check_equivalence(fn, *inputs).ok

    corrupted = replace_node(graph, "f/d", _swap_operands)
    assert diverging_keys(table, corrupted.denote_all(*inputs)) == ["f/d", "f/out"]
    use_lowering(corrupted)
    report = check_equivalence(fn, *inputs)
    assert not report.ok
    assert [m.key for m in report.mismatches] == ["f/d", "f/out"]
    assert "values differ bitwise" in report.mismatches[0].reason
    with pytest.raises(EquivalenceError, match=r"first divergence at f/d \(corrupt\.tf\.py:1:1 d = sub\(x, y\)\)"):
        assert_equivalent(fn, *inputs)


def test_swapping_a_commutative_op_is_invisible() -> None:
    """The control: the same corruption of ``add`` changes nothing, so the check stays ok —
    it is the values that are compared, not the plumbing."""
    x, y = Var("x", F32_4), Var("y", F32_4)
    fn = Function("f", (x, y), _named(ops.add(x, y), "s"))
    inputs = (torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([0.5, -1.0, 2.0, 8.0]))
    corrupted = replace_node(lower(fn), "f/s", _swap_operands)
    assert diverging_keys(visitor_table(fn, inputs), corrupted.denote_all(*inputs)) == []


# -- loops: a tiled accumulation ------------------------------------------------------------

K = DimVar("K")


def _tiled_sum() -> tuple[Function, tuple[torch.Tensor, ...]]:
    """``acc = 0; for k in range(K // 2): acc = acc + a[2k : 2k + 2]; out = acc * 1``."""
    a = Var("a", TensorType((K,), DType.float32))
    k = Var("k", TensorType((), DType.int64))
    acc = Var("acc", TensorType((2,), DType.float32))
    start = _named(ops.dim_mul(k, 2), "t")
    tile = _named(ops.slice(a, (start,), sizes=(2,)), "tile")
    step = _named(ops.add(acc, tile), "step")
    init = _named(ops.full(shape=(2,), value=0.0, dtype=DType.float32), "zero")
    loop = GridRegionExpr(K // 2, k, (init,), (acc,), step, (step,), span=Span("corrupt.tf.py", 2, 1, binding="acc"))
    out = _named(ops.mul(loop, 1.0), "out")
    return Function("f", (a,), out), (torch.arange(8, dtype=torch.float32),)


# -- (b) a dropped loop iteration -------------------------------------------------------


def test_a_dropped_iteration_is_caught_at_the_loop(
    monkeypatch: pytest.MonkeyPatch, use_lowering: Callable[[ForwardGraph], None]
) -> None:
    fn, inputs = _tiled_sum()
    table = visitor_table(fn, inputs)
    graph = lower(fn)
    assert diverging_keys(table, graph.denote_all(*inputs)) == []

    real = loop_rules.trip_count  # what the lowered loop calls, as tfexec.forward.kinds.trip_count
    monkeypatch.setattr(tfexec.forward.kinds, "trip_count", lambda region, ctx: real(region, ctx) - 1)
    assert diverging_keys(table, graph.denote_all(*inputs)) == ["f/acc", "f/out"]
    assert torch.equal(_tensor(graph.run(*inputs)), torch.tensor([6.0, 9.0]))  # 0+2+4, 1+3+5: one tile short
    use_lowering(graph)
    report = check_equivalence(fn, *inputs)
    assert [m.key for m in report.mismatches] == ["f/acc", "f/out"]


def test_a_dropped_iteration_is_caught_per_iteration(monkeypatch: pytest.MonkeyPatch) -> None:
    """Expanded, the missing iteration's keys are reported missing from the lowering."""
    fn, inputs = _tiled_sum()
    table = visitor_table(fn, inputs, loops="expand")
    assert "f/acc[3]/step" in table
    real = loop_rules.trip_count  # what the lowered loop calls, as tfexec.forward.kinds.trip_count
    monkeypatch.setattr(tfexec.forward.kinds, "trip_count", lambda region, ctx: real(region, ctx) - 1)
    lowered = lower(fn).denote_all(*inputs, loops="expand")
    assert diverging_keys(table, lowered) == ["f/acc[3]/t", "f/acc[3]/tile", "f/acc[3]/step", "f/acc", "f/out"]
    report = check_equivalence(fn, *inputs, loops="expand")
    missing = [m for m in report.mismatches if m.reason == "key missing from the lowering table"]
    assert [m.key for m in missing] == ["f/acc[3]/t", "f/acc[3]/tile", "f/acc[3]/step"]


# -- (c) a stale carry ----------------------------------------------------------------------


def _stale_carries(monkeypatch: pytest.MonkeyPatch, graph: ForwardGraph, carries: int, stale: tuple[int, ...]) -> None:
    """Make the loop bodies of ``graph`` receive the *initial* value of each carry in
    ``stale`` on every iteration (a lowering that forgot to thread that carry's previous
    yield through). A loop body's inputs end with the index and its ``carries`` carry slots."""
    inits: dict[int, list[object]] = {}
    real = Body.execute

    def frozen(self: Body, run: Run, values: list[object], **kw: bool) -> list[object]:
        if self is not graph.body:
            split = self.data.n_inputs - carries
            if int(values[split - 1]) == 0:  # type: ignore[call-overload]  # iteration 0: the carries are the inits
                inits[id(self)] = values[split:]
            first = inits[id(self)]
            values[split:] = [first[i] if i in stale else v for i, v in enumerate(values[split:])]  # in place: the loop reads this list
        return real(self, run, values, **kw)

    monkeypatch.setattr(Body, "execute", frozen)


def test_a_stale_carry_is_caught_at_the_loop(
    monkeypatch: pytest.MonkeyPatch, use_lowering: Callable[[ForwardGraph], None]
) -> None:
    fn, inputs = _tiled_sum()
    table = visitor_table(fn, inputs)
    graph = lower(fn)
    _stale_carries(monkeypatch, graph, carries=1, stale=(0,))
    assert torch.equal(_tensor(graph.run(*inputs)), torch.tensor([6.0, 7.0]))  # only the last tile, added to 0
    assert diverging_keys(table, graph.denote_all(*inputs)) == ["f/acc", "f/out"]
    use_lowering(graph)
    assert [m.key for m in check_equivalence(fn, *inputs).mismatches] == ["f/acc", "f/out"]


def test_a_stale_carry_is_caught_at_the_second_iteration(
    monkeypatch: pytest.MonkeyPatch, use_lowering: Callable[[ForwardGraph], None]
) -> None:
    """Expanded, the first diverging key is the second iteration's update: iteration 0
    really does start from the init value."""
    fn, inputs = _tiled_sum()
    table = visitor_table(fn, inputs, loops="expand")
    graph = lower(fn)
    _stale_carries(monkeypatch, graph, carries=1, stale=(0,))
    keys = diverging_keys(table, graph.denote_all(*inputs, loops="expand"))
    assert keys == ["f/acc[1]/step", "f/acc[2]/step", "f/acc[3]/step", "f/acc", "f/out"]
    use_lowering(graph)
    report = check_equivalence(fn, *inputs, loops="expand")
    assert report.first_divergence is not None and report.first_divergence.key == "f/acc[1]/step"


def test_one_stale_carry_among_several_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two carries, only the second stale: the loop's tuple value differs, and so does
    what reads it; the first carry alone would still agree."""
    x = Var("x", F32_4)
    k = Var("k", TensorType((), DType.int64))
    c0, c1 = Var("c0", F32_4), Var("c1", F32_4)
    y0, y1 = ops.add(c0, 1.0), ops.mul(c1, 2.0)
    loop = GridRegionExpr(3, k, (x, x), (c0, c1), Tuple((y0, y1)), (y0, y1), span=Span("corrupt.tf.py", 3, 1, binding="loop"))
    first = _named(ops.mul(TupleGetItem(loop, 0), 1.0), "first")
    out = _named(ops.sub(first, TupleGetItem(loop, 1)), "out")
    fn = Function("f", (x,), out)
    inputs = (torch.tensor([1.0, 2.0, 3.0, 4.0]),)
    table = visitor_table(fn, inputs)
    graph = lower(fn)
    assert diverging_keys(table, graph.denote_all(*inputs)) == []
    _stale_carries(monkeypatch, graph, carries=2, stale=(1,))
    assert diverging_keys(table, graph.denote_all(*inputs)) == ["f/loop", "f/out"]
    assert torch.equal(_tensor(graph.run(*inputs)), (inputs[0] + 3) - inputs[0] * 2)


# -- ForwardData refuses what the Lean ``Idx`` makes impossible --------------------------------


def _node(label: str, *reads: int) -> ForwardNode:
    return ForwardNode(Fail(EvalError(label)), tuple(Read(i) for i in reads), None, label, Var("x", F32_4))


def test_snoc_refuses_a_read_of_a_later_slot() -> None:
    data = ForwardData.nil(2).snoc(_node("first", 0, 1))
    with pytest.raises(LoweringError, match=r"node second reads slot 3, but only slots 0\.\.2 exist before it"):
        data.snoc(_node("second", 3))
    with pytest.raises(LoweringError, match=r"node third reads slot -1"):
        data.snoc(_node("third", -1))
    assert len(data.snoc(_node("fine", 2))) == 2


def test_snoc_refuses_a_stale_view() -> None:
    base = ForwardData.nil(1)
    newer = base.snoc(_node("a", 0))
    with pytest.raises(LoweringError, match="snoc on a stale view: only the newest view can be extended"):
        base.snoc(_node("b", 0))
    assert [n.label for n in newer.snoc(_node("c", 1)).nodes] == ["a", "c"]

