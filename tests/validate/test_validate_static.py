"""Validation's other rules can fail too: an extra step, a failing node the program does not
have, a wrong declared type, a read of a missing field, a plan made before its rule was
re-registered — each refused at the right node, without running anything."""

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

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
