"""Validation's other rules can fail too: an extra step, a failing node the program does not
have, a wrong declared type, a read of a missing field, a plan made before its rule was
re-registered — each refused at the right node, without running anything."""

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import pytest
import torch

from tfexec import (
    EvalError, EvaluateContext, Function, TensorValue, Value, Var, evaluate, f32, f64, lower, ops, register_eval,
    validate,
)
from tfexec.forward.kinds import Fail
from tfexec.forward.node import ForwardNode, Read

from shared_helpers import SameTypeOp
from validate.surgery import found, moved, named, node_index, reading, refused, replace_node, span, with_body

F4 = f32[4]


def _sub_program() -> Function:
    x, y = Var("x", F4), Var("y", F4)
    d = named(ops.sub(x, y), 1, "d")
    return Function("f", (x, y), named(ops.mul(d, 2.0), 2, "out"))


def test_an_extra_step_is_refused_where_it_runs() -> None:
    """A dead copy of ``d`` (unkeyed, unread): no value changes, but the run computes, and may
    fail at, one more node than the program."""
    graph = lower(_sub_program())
    body = graph.body
    d = node_index(body, "f/d")
    copy = dataclasses.replace(body.nodes[d], key=None)
    slot = body.data.n_inputs + d + 1

    def move(s: int) -> int:
        return s + 1 if s >= slot else s

    nodes = [*body.nodes[: d + 1], copy, *(reading(n, move) for n in body.nodes[d + 1 :])]
    report = validate(with_body(graph, moved(body, nodes, move)))
    first = refused(report, "steps", "f step 1")
    assert first.description == "corrupt.tf.py:2:1 out = mul(d, 2.0)"
    assert "the program runs mul(sub(x, y), 2.0) (its errors naming corrupt.tf.py:2:1 out = mul(d, 2.0)), " in first.reason
    assert "the graph runs sub(x, y) (its errors naming corrupt.tf.py:1:1 d = sub(x, y))" in first.reason


def test_a_failing_node_the_program_does_not_have_is_refused() -> None:
    graph = lower(_sub_program())
    body = graph.body
    failing = ForwardNode(Fail(EvalError("boom")), (), None, None, body.nodes[0].source)

    def move(s: int) -> int:
        return s + 1 if s >= body.data.n_inputs else s

    nodes = [failing, *(reading(n, move) for n in body.nodes)]
    report = validate(with_body(graph, moved(body, nodes, move)))
    assert ("steps", "f step 0") in found(report)
    assert "the graph runs error(boom)" in str(report)


def test_a_wrong_declared_type_is_refused() -> None:
    graph = lower(_sub_program())
    report = validate(replace_node(graph, "f/d", lambda n: dataclasses.replace(n, type=f64[4])))
    first = refused(report, "types", "f/d")
    assert first.reason == "declared type f64[4], but inference gave its source f32[4]"


def test_a_read_of_a_field_the_value_lacks_is_refused() -> None:
    graph = lower(_sub_program())
    report = validate(replace_node(graph, "f/d", lambda n: dataclasses.replace(n, reads=(Read(0, (0,)), n.reads[1]))))
    assert refused(report, "values", "f/d").reason == "the program computes sub(x, y), the graph computes sub(malformed(%0[0]), y)"
    assert ("reads", "f/d") in found(report)
    assert "reads %0[0], a field slot 0's value does not have" in str(report)


@dataclass(frozen=True, slots=True)
class _Twice(SameTypeOp):
    name: ClassVar[str] = "validate_twice_test_op"


@register_eval(_Twice)
def _twice(ctx: EvaluateContext) -> Value:
    (x,) = ctx.args
    assert isinstance(x, TensorValue)
    return TensorValue(x.data * 2, x.type)


def test_a_plan_made_before_its_rule_was_re_registered_is_refused() -> None:
    x = Var("x", F4)
    fn = Function("f", (x,), ops.apply(_Twice(), x, span=span(1, "t")))
    graph = lower(fn)
    assert validate(graph).ok
    register_eval(_Twice, override=True)(_twice)  # the same function, but a new registry entry
    first = refused(validate(graph), "registry", "f/t")
    assert "no longer the registry's" in first.reason
    assert validate(lower(fn)).ok  # lowered again, the plan is current
    assert torch.equal(evaluate(fn, torch.ones(4)), torch.full((4,), 2.0))


def test_a_run_step_that_does_not_follow_its_node_is_refused() -> None:
    """The run loop follows ``Body.steps``, derived from the nodes; one pointing elsewhere (here,
    at another node's function) is refused, naming the node."""
    graph = lower(_sub_program())
    body = dataclasses.replace(graph.body)
    steps = list(body.steps)
    steps[0] = (steps[1][0], *steps[0][1:])
    object.__setattr__(body, "steps", tuple(steps))
    first = refused(validate(with_body(graph, body)), "reads", "f/d")
    assert first.reason == "the run loop's step for this node is not its kind's function in its dim scope"


# -- the run loop's data movers are run, symbolically, not trusted (issue #28) ------------------


def _nested_program() -> Function:
    from tfexec import Call, TupleGetItem, TupleType

    nested = TupleType((TupleType((f32[2], f32[2])), f32[2]))
    q = Var("q", nested)
    g = Function("g", (q,), ops.sub(TupleGetItem(TupleGetItem(q, 0), 1), TupleGetItem(q, 1)))
    p = Var("p", nested)
    return Function("f", (p,), ops.add(Call(g, (p,)), TupleGetItem(TupleGetItem(p, 0), 0)))


def test_a_projection_of_the_run_loop_that_stops_short_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from tfexec.forward import run

    graph = lower(_nested_program())
    assert validate(graph).ok

    def short(value: object, path: tuple[int, ...]) -> object:
        for i in path[:1]:
            assert isinstance(value, tuple)
            value = value[i]
        return value

    monkeypatch.setattr(run, "project", short)
    report = validate(lower(_nested_program()))
    assert not report.ok and "the run loop's getter for it gives" in str(report), str(report)


def test_a_rebuild_that_reorders_fields_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from tfexec.forward import kinds

    real = kinds.rebuild

    def reordered(shape: object, flat: "list[object]") -> object:
        out = real(shape, flat)  # type: ignore[arg-type]
        return tuple(reversed(out)) if isinstance(out, tuple) else out

    monkeypatch.setattr(kinds, "rebuild", reordered)
    report = validate(lower(_nested_program()))
    assert not report.ok and "rebuilding its values from its reads gives" in str(report), str(report)


def test_a_run_step_whose_getter_swaps_the_reads_is_refused() -> None:
    from tfexec.forward.run import DIRECT, getter

    x, y = Var("x", f32[2]), Var("y", f32[2])
    graph = lower(Function("f", (x, y), ops.sub(x, ops.mul(y, 2.0))))
    body = graph.body
    steps = list(body.steps)
    f, kind, a, b, _, scope, frees = steps[-1]
    swapped = getter([Read(1), Read(0)] if a == 0 else [Read(b), Read(a)])
    steps[-1] = (f, DIRECT, 0, 0, swapped, scope, frees)
    object.__setattr__(body, "steps", tuple(steps))
    report = validate(graph)
    assert not report.ok and "the run loop's getter for it gives" in str(report), str(report)


def test_a_node_not_converting_a_host_int_index_it_reads_is_refused() -> None:
    """``testing_pass`` of a ``dim_*`` result and a callee given one: both must make the host
    int a tensor first (their ``conv``); with it dropped, validation refuses the node."""
    import tfexec.testing  # noqa: F401  (registers testing_pass)
    from tfexec import Call, i64
    from tfexec.forward.kinds import EnterCall, HandlerCall
    from tfexec.testing.handlers import PassThrough

    p, a = Var("p", i64[()]), Var("a", i64[()])
    g = Function("g", (a,), ops.mul(a, 2))
    index = ops.dim_add(p, 1)
    fn = Function("f", (p,), ops.add(ops.apply(PassThrough(), index), Call(g, (index,))))
    graph = lower(fn)
    assert validate(graph).ok
    for kind in (HandlerCall, EnterCall):
        nodes = list(graph.body.nodes)
        i = next(i for i, n in enumerate(nodes) if isinstance(n.what, kind))
        assert nodes[i].what.conv == (0,)  # type: ignore[union-attr]
        nodes[i] = dataclasses.replace(nodes[i], what=dataclasses.replace(nodes[i].what, conv=()))  # type: ignore[type-var]
        from validate.surgery import rebuilt

        report = validate(with_body(graph, rebuilt(graph.body, nodes)))
        assert not report.ok and "may hold an index value as a host int, which it does not make a tensor" in str(report)


def test_a_record_writing_a_loop_before_its_iterations_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from tfexec import GridRegionExpr, i64
    from tfexec.forward import run

    x, i, h = Var("x", f32[2]), Var("i", i64[()]), Var("h", f32[2])
    step = ops.add(h, 1.0)
    fn = Function("f", (x,), ops.mul(GridRegionExpr(2, i, (x,), (h,), step, (step,)), 2.0))
    assert validate(lower(fn)).ok

    def loop_first(keyed: object, values: object, prefix: str, nested: dict[str, object], out: dict[str, object],
                   device: object) -> None:
        for key, ref in keyed:  # type: ignore[attr-defined]
            full = prefix + key
            out[full] = run.observed(run.read(ref, values), device)  # type: ignore[arg-type]
            for k in [k for k in nested if k.startswith(full + "[")]:
                out[k] = nested.pop(k)
        out.update(nested)

    monkeypatch.setattr(run, "record", loop_first)
    report = validate(lower(fn))
    assert not report.ok and "record, writing this node list's table, gives" in str(report), str(report)


def test_a_boundary_returning_its_raw_reads_instead_of_its_arguments_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """``EnterCall.compute`` runs on symbols (``validate/runtime.SymbolicRun``): one that hands
    the callee its flat reads instead of the arguments rebuilt from them is a mismatch."""
    from tfexec.forward.kinds import EnterCall, tensors_at

    assert validate(lower(_nested_program())).ok

    def flat(self: EnterCall, run: object, scope: int, xs: "list[object]") -> object:
        xs = tensors_at(xs, self.conv, run.device)  # type: ignore[attr-defined]
        run.enter(self, tuple(xs))  # type: ignore[attr-defined]
        return tuple(xs)

    monkeypatch.setattr(EnterCall, "compute", flat)
    report = validate(lower(_nested_program()))
    assert not report.ok and "its boundary, run on its reads, gives" in str(report), str(report)
