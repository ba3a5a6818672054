"""``tfexec.validate``: a lowering that computes its program validates, for all inputs, with
nothing run; the report says what each rule checked and prints as a table; a refusal on
both routes and a program that fails at run time validate too (the routes fail alike);
``check_equivalence`` validates and says which of the two it did; deep chains validate."""

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

import tfexec
import tfexec.equivalence
import tfexec.forward.kinds
from tfexec import (
    ArgumentTypeError, Call, ConstTensor, Constant, DimVar, Function, GridRegionExpr, IRModule, LoadedModule, Span,
    Tuple, TupleGetItem, TupleType, ValidationReport, Var, check_equivalence, f32, i64, lower, ops, validate,
)
from tfexec.forward.run import Body
from tfexec.validate.report import RULES

from shared_helpers import SameTypeOp, add_chain

ROOT = Path(__file__).resolve().parents[2]
B, N = DimVar("B"), DimVar("N")


def _span(line: int, binding: str) -> Span:
    return Span("api.tf.py", line, 1, binding=binding)


def everything() -> Function:
    """A tuple parameter, dims, weak and strong and tensor constants, a weight, tuples and
    projections, a callee with its own dim called at three sites (one inside a loop), a
    multi-carry loop with a symbolic extent and a nested no-carry loop reading the outer index,
    and a hoisted invariant."""
    y = Var("y", f32[N])
    scale = Function("scale", (y,), ops.mul(y, ops.cast(ops.arange(extent=N), dtype=f32)))
    x = Var("x", f32[B])
    pair = Var("pair", TupleType((f32[B], f32[()])))
    k, j = Var("k", i64[()]), Var("j", i64[()])
    acc, cnt = Var("acc", f32[B]), Var("cnt", f32[()])
    w = ConstTensor("w", f32[()])
    invariant = ops.mul(ops.exp(TupleGetItem(pair, 0)), w)
    inner = GridRegionExpr(2, j, (), (), ops.cast(ops.add(k, j), dtype=f32), ())
    step = ops.add(acc, ops.call(scale, ops.add(invariant, inner)))
    count = ops.add(cnt, Constant(torch.tensor(1.0), f32[()]))
    loop = GridRegionExpr(B, k, (x, TupleGetItem(pair, 1)), (acc, cnt), Tuple((step, count)), (step, count))
    body = Tuple((TupleGetItem(loop, 0), ops.mul(TupleGetItem(loop, 1), 2), ops.call(scale, x), ops.call(scale, ops.neg(x))))
    return Function("everything", (x, pair), body)


def _loaded(fn: Function) -> LoadedModule:
    module = IRModule({fn.name: fn}, {"w": f32[()]}, entry=fn.name)
    return LoadedModule.from_reading(module, {"w": torch.tensor(0.5)})


def test_a_program_using_every_construct_validates() -> None:
    loaded = _loaded(everything())
    report = validate(lower(loaded))
    assert report.ok, str(report)
    assert report.problems == () and report.first_problem is None
    assert report.checked == 23  # every key, a loop body's once for all its iterations
    counts = dict(report.counts)
    assert list(counts) == list(RULES)
    assert counts["hoisting"] == 2 and counts["values"] == report.checked + 1
    inputs = (torch.randn(3), (torch.randn(3), torch.tensor(0.5)))
    equivalence = check_equivalence(loaded, *inputs, loops="expand")
    assert equivalence.ok and equivalence.validation is not None and equivalence.validation.ok


def test_the_report_prints_one_row_per_rule_and_a_verdict() -> None:
    text = str(validate(lower(_loaded(everything()))))
    lines = text.splitlines()
    assert lines[0].split() == ["rule", "checks", "checked", "problems"]
    assert [line.split()[0] for line in lines[2:-1]] == list(RULES)
    assert lines[-1].startswith("VALIDATED: the lowering of everything denotes the program at all 23 key(s) and its output, for all inputs")


@pytest.mark.parametrize("path", sorted(p.name for p in (ROOT / "examples").glob("*.tf.py")))
def test_every_example_validates(path: str) -> None:
    module = tfexec.parse((ROOT / "examples" / path).read_text(encoding="utf-8"), filename=path)
    for fn in module.functions.values():
        assert validate(lower(fn)).ok, fn.name


def test_the_saved_llama_block_validates() -> None:
    report = validate(lower(tfexec.load_module(ROOT / "examples" / "llama_block")))
    assert report.ok and report.checked == 62


def test_a_call_both_routes_refuse_validates() -> None:
    """A missing handler is refused alike on both routes (a ``Fail`` node where the visitor
    raises): the lowering is right, so it validates."""
    @dataclass(frozen=True, slots=True)
    class Unregistered(SameTypeOp):
        pass

    x = Var("x", f32[4])
    fn = Function("f", (x,), ops.neg(ops.apply(Unregistered(), x)))
    graph = lower(fn)
    assert validate(graph).ok
    with pytest.raises(tfexec.EvalError, match="no evaluator handler"):
        graph.run(torch.ones(4))


def test_a_program_failing_at_run_time_validates_and_fails_alike() -> None:
    """``slice`` past the end fails on every input of this size: validation says nothing about
    whether a program fails, only that both routes compute (and fail at) the same steps."""
    x = Var("x", f32[B])
    fn = Function("f", (x,), ops.slice(x, (2,), sizes=(4,)))
    assert validate(lower(fn)).ok
    report = check_equivalence(fn, torch.ones(3))
    assert report.ok and report.error is not None and report.validation is not None and report.validation.ok


def test_a_callee_called_with_different_dims_gets_a_scope_per_call() -> None:
    n = Var("n", f32[N])
    g = Function("g", (n,), ops.add(n, ops.cast(ops.arange(extent=N), dtype=f32), span=_span(1, "r")))
    x, y = Var("x", f32[2]), Var("y", f32[3])
    fn = Function("f", (x, y), Tuple((Call(g, (x,)), Call(g, (y,)))))
    report = validate(lower(fn))
    assert report.ok and report.checked == 8  # arange, cast, add and the call, per call


def test_validate_takes_a_lowered_graph() -> None:
    fn = Function("f", (Var("x", f32[4]),), Constant(1.0, f32[()]))
    with pytest.raises(ArgumentTypeError, match=r"validate\(\): argument graph must be ForwardGraph, got Function"):
        validate(fn)  # type: ignore[arg-type]
    assert isinstance(tfexec.validate(lower(fn)), ValidationReport) and "validate" in tfexec.__all__


def test_validation_runs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Body, *args: object, **kwargs: object) -> list[object]:
        raise AssertionError("validation ran a node list")

    graph = lower(_loaded(everything()))
    monkeypatch.setattr(Body, "execute", refuse)
    assert validate(graph).ok


# -- check_equivalence says which it did -------------------------------------------------------------


def test_check_equivalence_says_it_compared_on_these_inputs_and_validated_for_all() -> None:
    x = Var("x", f32[4])
    fn = Function("f", (x,), ops.neg(x, span=_span(1, "n")))
    report = check_equivalence(fn, torch.ones(4))
    lines = str(report).splitlines()
    assert lines[-2] == "compared on these inputs; validated for all inputs: the lowering denotes the program at all 1 key(s)"
    assert lines[-1] == "OK: 1 node(s) compared, 0 mismatch(es)"


def test_check_equivalence_is_not_ok_when_only_validation_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """``add(y, x)`` for ``add(x, y)`` gives the same bits on these inputs, but it is not the
    program: the comparison agrees, the validation does not, and the report says so."""
    x, y = Var("x", f32[4]), Var("y", f32[4])
    fn = Function("f", (x, y), ops.add(x, y, span=_span(1, "s")))
    graph = lower(fn)
    node = graph.nodes[0]
    swapped = dataclasses.replace(node, reads=tuple(reversed(node.reads)))
    data = tfexec.ForwardData.nil(2).snoc(swapped)
    corrupted = dataclasses.replace(graph, body=dataclasses.replace(graph.body, data=data))
    monkeypatch.setattr(tfexec.equivalence, "lower", lambda target, *a, **k: corrupted)
    report = check_equivalence(fn, torch.ones(4), torch.arange(4.0))
    assert not report.ok and report.compared_ok and report.mismatches == ()
    text = str(report)
    assert "NOT validated for all inputs: 3 problem(s), first [values] f/s (api.tf.py:1:1 s = add(x, y))" in text
    assert text.splitlines()[-1] == "NOT VALIDATED: 1 node(s) compared, 0 mismatch(es)"
    with pytest.raises(tfexec.EquivalenceError, match="NOT validated"):
        tfexec.assert_equivalent(fn, torch.ones(4), torch.arange(4.0))


# -- deep graphs ---------------------------------------------------------------------------------------


def _chain(n: int) -> None:
    x = Var("x", f32[4])
    graph = lower(Function("chain", (x,), add_chain(x, n)))
    report = validate(graph)
    assert report.ok and report.checked == n and report.nodes == n + 1  # the shared constant, then the adds


def test_a_chain_of_3e4_nodes_validates() -> None:
    _chain(30_000)


@pytest.mark.slow
def test_a_chain_of_1e5_nodes_validates() -> None:
    _chain(100_000)


@pytest.mark.slow
def test_a_chain_of_1e6_nodes_validates() -> None:
    _chain(1_000_000)


@pytest.mark.slow
def test_a_loop_body_of_1e5_nodes_validates() -> None:
    x = Var("x", f32[4])
    i, acc = Var("i", i64[()]), Var("acc", f32[4])
    body = add_chain(ops.add(acc, ops.cast(i, dtype=f32)), 100_000)
    report = validate(lower(Function("looped", (x,), GridRegionExpr(2, i, (x,), (acc,), body, (body,)))))
    assert report.ok and report.checked == 100_003


def test_a_mismatch_deep_in_a_chain_is_rendered_a_few_operands_deep() -> None:
    """``mul(h, 3.0)`` corrupted to ``mul(h, h)`` at the top of a 200-add chain: the texts
    stop three operands down."""
    x = Var("x", f32[4])
    graph = lower(Function("chain", (x,), ops.mul(add_chain(x, 200), 3.0, span=_span(9, "top"))))
    top = graph.nodes[-1]
    assert isinstance(top.what, tfexec.forward.kinds.OpApply) and len(top.reads) == 1  # 3.0 is a weak scalar: no read
    squared = dataclasses.replace(top, what=tfexec.forward.kinds.OpApply(top.what.plan, (None, None)), reads=top.reads * 2)
    data = tfexec.ForwardData.nil(1)
    for node in [*graph.nodes[:-1], squared]:
        data = data.snoc(node)
    report = validate(dataclasses.replace(graph, body=dataclasses.replace(graph.body, data=data)))
    first = report.first_problem
    assert first is not None and first.key == "chain/top"
    deep = "add(add(…, constant(1.0, f32[()])), constant(1.0, f32[()]))"
    assert first.reason == f"the program computes mul({deep}, 3.0), the graph computes mul({deep}, {deep})"
