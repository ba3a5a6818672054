"""Layouts reach the value rules on both routes: ``local`` (which refuses a split layout and
is the identity otherwise), ``reshard`` (which changes the layout a value carries), and a
value rule whose result depends on the layout it is told. Each is checked against an
expected value or error, not only route against route, so losing the layouts on both
routes at once fails too."""

from dataclasses import dataclass
from typing import ClassVar

import pytest
import torch

import tfexec
from tfexec import (
    Arg,
    DType,
    EvalError,
    EvaluateContext,
    Function,
    Kernel,
    Layout,
    Mesh,
    Replicate,
    ShardLayout,
    Split,
    TensorType,
    TensorValue,
    Tuple,
    TupleGetItem,
    Value,
    Var,
    check_equivalence,
    evaluate,
    lower,
    ops,
    register_eval,
    value_rule,
)

from shared_helpers import SameTypeOp

MESH = Mesh((2,), ("tp",))
SPLIT = ShardLayout(MESH, (Split(0),))
REPLICATED = ShardLayout(MESH, (Replicate(),))


def _t(layout: object = None) -> TensorType:
    return TensorType((4,), DType.float32, layout)  # type: ignore[arg-type]


def _routes(fn: Function, *inputs: object) -> list[object]:
    """Every way to run ``fn``: the direct route and three readings of the lowered graph."""
    graph = lower(fn)
    table = graph.denote_all(*inputs)
    return [evaluate(fn, *inputs), graph.run(*inputs), graph.run(*inputs, check="full"), table[next(reversed(table))]]


@pytest.mark.parametrize("where", ["parameter", "reshard", "tuple field", "callee parameter", "loop carry"])
def test_local_of_a_split_value_is_refused_on_every_route(where: str) -> None:
    x = Var("x", _t(SPLIT) if where in ("parameter", "tuple field") else _t())
    if where == "reshard":
        value: tfexec.Expr = ops.reshard(x, layout=SPLIT)
    elif where == "tuple field":
        value = TupleGetItem(Tuple((ops.exp(x), x)), 1)
    else:
        value = x
    if where == "callee parameter":
        y = Var("y", _t(SPLIT))
        g = Function("g", (y,), ops.local(y))
        fn = Function("f", (x,), ops.call(g, ops.reshard(x, layout=SPLIT)))
    elif where == "loop carry":
        k, c = Var("k", tfexec.i64[()]), Var("c", _t(SPLIT))
        loop = tfexec.GridRegionExpr(2, k, (ops.reshard(x, layout=SPLIT),), (c,), c, (c,))
        fn = Function("f", (x,), ops.local(loop))
    else:
        fn = Function("f", (x,), ops.local(value))
    messages = []
    with pytest.raises(EvalError, match="local of a value split over the mesh") as direct:
        evaluate(fn, torch.arange(4.0))
    messages.append(str(direct.value))
    graph = lower(fn)
    for reading in (lambda: graph.run(torch.arange(4.0)), lambda: graph.denote_all(torch.arange(4.0))):
        with pytest.raises(EvalError, match="local of a value split over the mesh") as lowered:
            reading()
        messages.append(str(lowered.value))
    assert len(set(messages)) == 1


def test_local_of_a_replicated_value_is_the_value_on_every_route() -> None:
    x = Var("x", _t(REPLICATED))
    fn = Function("f", (x,), ops.local(ops.mul(ops.reshard(x, layout=REPLICATED), 2.0)))
    for out in _routes(fn, torch.arange(4.0)):
        assert torch.equal(out, torch.arange(4.0) * 2)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class LayoutRank(SameTypeOp):
    """Test op: adds to its operand the rank of the layout its value rule is told (0 without one)."""

    name: ClassVar[str] = "layout_rank_test_op"


@value_rule(LayoutRank)
def _layout_rank(op: LayoutRank, args: tuple[Arg, ...]) -> Kernel:
    layout = args[0].layout
    rank = len(layout.shape) if isinstance(layout, Layout) else (-1 if layout is not None else 0)
    return Kernel(lambda x: x + rank)


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda x: ops.apply(LayoutRank(), x), 2),  # the parameter's declared layout
        (lambda x: ops.apply(LayoutRank(), ops.reshard(x, layout=Layout((1, 2, 2)))), 3),  # reshard's target
        (lambda x: ops.apply(LayoutRank(), ops.exp(x)), 0),  # an op's result carries none
        (lambda x: ops.apply(LayoutRank(), TupleGetItem(Tuple((x, x)), 0)), 2),  # through a tuple
    ],
    ids=["parameter", "reshard", "op-result", "tuple-field"],
)
def test_a_layout_sensitive_rule_is_told_the_same_layout_on_every_route(make: object, expected: int) -> None:
    x = Var("x", _t(Layout((2, 2))))
    fn = Function("f", (x,), make(x))  # type: ignore[operator]
    inp = torch.zeros(4)
    base = torch.exp(inp) if expected == 0 else inp
    for out in _routes(fn, inp):
        assert torch.equal(out, base + expected)  # type: ignore[arg-type]
    assert check_equivalence(fn, inp).ok


def test_a_callee_parameter_takes_its_declared_layout_on_every_route() -> None:
    y = Var("y", _t(None))
    g = Function("g", (y,), ops.apply(LayoutRank(), y))  # declared without a layout: the rule sees none
    x = Var("x", _t(Layout((2, 2))))
    fn = Function("f", (x,), Tuple((ops.call(g, x), ops.apply(LayoutRank(), x))))
    for out in _routes(fn, torch.zeros(4))[:3]:
        assert isinstance(out, tuple)
        assert torch.equal(out[0], torch.zeros(4)) and torch.equal(out[1], torch.full((4,), 2.0))


@dataclass(frozen=True, slots=True)
class LayoutSeen(SameTypeOp):
    """A plain handler that records the layout of its operand as it sees it."""

    name: ClassVar[str] = "layout_seen_test_op"


SEEN: list[object] = []


@register_eval(LayoutSeen)
def _seen(ctx: EvaluateContext) -> Value:
    (v,) = ctx.args
    assert isinstance(v, TensorValue)
    SEEN.append(v.type.layout)
    return TensorValue(v.data.clone(), v.type)


def test_a_plain_handler_sees_the_operand_layout_on_every_route() -> None:
    x = Var("x", _t(Layout((2, 2))))
    fn = Function("f", (x,), ops.apply(LayoutSeen(), ops.reshard(x, layout=Layout((4, 1)))))
    SEEN.clear()
    _routes(fn, torch.zeros(4))
    assert SEEN == [Layout((4, 1))] * 4
