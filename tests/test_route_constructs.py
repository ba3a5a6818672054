"""Constructs a mutation campaign found no test exercising (issue #28): nested tuple fields,
equal-valued weak constants of different dtypes, index values given to handlers, callees
and carries, a loop root read inside its body, a projection one past the end, a callee
parameter's declared layout, a re-registered handler. Each test runs both routes (and the
comparison and validation where the program lowers), so a lowering or visitor that gets the
construct wrong fails it; the table in the issue's report says which mutant each one kills."""

import collections
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import pytest
import torch
from hypothesis import HealthCheck, Phase, given, settings

import tfexec.testing  # noqa: F401  (registers the testing_* handlers)
from tfexec import (
    Call,
    Constant,
    EvalError,
    EvaluateContext,
    Function,
    GridRegionExpr,
    Layout,
    TensorType,
    TensorValue,
    Tuple,
    TupleGetItem,
    TupleType,
    TypeInferenceError,
    Value,
    Var,
    b1,
    check_equivalence,
    evaluate,
    f32,
    i64,
    lower,
    ops,
    register_eval,
)
from tfexec.ir.dtypes import DType
from tfexec.semantics.registry import Handler, eval_registry
from tfexec.testing import Program, programs
from tfexec.testing.handlers import PassThrough, Probe
from tfexec.validate import validate

from boundary_features import BOUNDARY_FEATURES, program_features
from shared_helpers import SameTypeOp


def agree(fn: Function, *inputs: object) -> object:
    """``fn``'s result, the same on every route; the comparison is ok and the lowering validates."""
    direct = evaluate(fn, *inputs)
    graph = lower(fn)
    for lowered in (graph.run(*inputs), graph.run(*inputs, check="full")):
        assert _same(direct, lowered), (direct, lowered)
    report = check_equivalence(fn, *inputs)
    assert report.ok and report.compared > 0, str(report)
    assert validate(graph).ok
    return direct


def _same(a: object, b: object) -> bool:
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape):
        return False
    if a.is_floating_point():  # bit for bit, NaN (0 / 0 of an index, say) included
        return torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))
    return torch.equal(a, b)


# -- nested tuple fields: parameter paths, callee parameter paths, projections ---------------


NESTED = TupleType((TupleType((f32[2], f32[2])), f32[2]))


def _nested_inputs() -> tuple[tuple[torch.Tensor, torch.Tensor], torch.Tensor]:
    return (torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0])), torch.tensor([100.0, 200.0])


def test_a_nested_tuple_parameter_is_read_field_by_field_on_both_routes() -> None:
    p = Var("p", NESTED)
    inner = TupleGetItem(p, 0)
    body = ops.sub(TupleGetItem(inner, 1), ops.mul(TupleGetItem(inner, 0), TupleGetItem(p, 1)))
    out = agree(Function("f", (p,), body), _nested_inputs())
    assert torch.equal(out, torch.tensor([10.0 - 100.0, 20.0 - 400.0]))  # type: ignore[arg-type]


def test_a_nested_tuple_callee_parameter_is_read_field_by_field_on_both_routes() -> None:
    q = Var("q", NESTED)
    g = Function("g", (q,), ops.sub(TupleGetItem(TupleGetItem(q, 0), 1), TupleGetItem(TupleGetItem(q, 0), 0)))
    p = Var("p", NESTED)
    out = agree(Function("f", (p,), Call(g, (p,))), _nested_inputs())
    assert torch.equal(out, torch.tensor([9.0, 18.0]))  # type: ignore[arg-type]


def test_a_nested_tuple_built_in_the_body_is_passed_and_returned_whole() -> None:
    x, y = Var("x", f32[2]), Var("y", f32[2])
    q = Var("q", NESTED)
    g = Function("g", (q,), Tuple((TupleGetItem(q, 1), TupleGetItem(TupleGetItem(q, 0), 1))))
    built = Tuple((Tuple((ops.exp(x), ops.neg(y))), ops.add(x, y)))
    out = agree(Function("f", (x, y), Call(g, (built,))), torch.tensor([0.0, 1.0]), torch.tensor([2.0, 3.0]))
    assert isinstance(out, tuple) and torch.equal(out[1], torch.tensor([-2.0, -3.0]))


# -- equal-valued weak constants of different dtypes -------------------------------------------


def test_equal_valued_weak_constants_of_different_dtypes_stay_distinct() -> None:
    x = Var("x", f32[2])
    one_int, one_float, true = Constant(1, i64[()], weak=True), Constant(1.0, f32[()], weak=True), Constant(True, b1[()], weak=True)
    out = agree(Function("f", (x,), Tuple((one_int, ops.add(x, one_float), one_float, true))), torch.zeros(2))
    assert isinstance(out, tuple)
    assert [t.dtype for t in out] == [torch.int64, torch.float32, torch.float32, torch.bool]


# -- index values given to handlers, callees and carries ---------------------------------------


def test_an_index_value_given_to_a_handler_is_its_tensor_on_both_routes() -> None:
    p, i = Var("p", i64[()]), Var("i", i64[()])
    shifted = ops.dim_add(p, 3)
    in_loop = GridRegionExpr(2, i, (), (), ops.apply(PassThrough(), ops.dim_mul(i, 2)), ())
    out = agree(Function("f", (p,), Tuple((ops.apply(PassThrough(), shifted), ops.apply(Probe(), shifted), in_loop))), torch.tensor(4))
    assert isinstance(out, tuple) and [int(t) for t in out] == [7, 7, 2]


def test_an_index_value_and_a_tuple_given_to_a_callee_are_passed_as_values() -> None:
    a, t = Var("a", i64[()]), Var("t", TupleType((f32[2], f32[2])))
    g = Function("g", (a, t), ops.mul(ops.sub(TupleGetItem(t, 1), TupleGetItem(t, 0)), ops.cast(a, dtype=f32)))
    p, x, y = Var("p", i64[()]), Var("x", f32[2]), Var("y", f32[2])
    fn = Function("f", (p, x, y), Call(g, (ops.dim_add(p, 1), Tuple((x, y)))))
    out = agree(fn, torch.tensor(2), torch.tensor([1.0, 2.0]), torch.tensor([5.0, 7.0]))
    assert torch.equal(out, torch.tensor([12.0, 15.0]))  # type: ignore[arg-type]


def test_index_valued_carries_are_tensors_wherever_they_are_read() -> None:
    """A carry initialised by index arithmetic, yielded by index arithmetic, read inside the
    body by a handler and a tensor kernel, and read after the loop by both."""
    p, i, c = Var("p", i64[()]), Var("i", i64[()]), Var("c", i64[()])
    s = Var("s", i64[()])
    seen = ops.apply(PassThrough(), c)
    total = ops.add(s, ops.mul(seen, 2))
    loop = GridRegionExpr(3, i, (ops.dim_add(p, 1), ops.dim_mul(p, 0)), (c, s), Tuple((c, s)), (ops.dim_add(c, i), total))
    fn = Function("f", (p,), Tuple((ops.apply(PassThrough(), TupleGetItem(loop, 0)), ops.neg(TupleGetItem(loop, 0)), TupleGetItem(loop, 1))))
    out = agree(fn, torch.tensor(1))
    assert isinstance(out, tuple) and [int(t) for t in out] == [5, -5, 2 * (2 + 2 + 3)]


# -- a loop root read inside its body ---------------------------------------------------------


def test_a_loop_root_read_by_a_later_body_node_is_kept_for_the_yield() -> None:
    x, i, h, g = Var("x", f32[2]), Var("i", i64[()]), Var("h", f32[2]), Var("g", f32[2])
    nxt = ops.add(h, 1.0)
    after = ops.mul(nxt, 2.0)  # reads the root nxt after it is computed: nxt's last reader
    loop = GridRegionExpr(2, i, (x, x), (h, g), Tuple((h, g)), (nxt, after))
    out = agree(Function("f", (x,), loop), torch.zeros(2))
    assert isinstance(out, tuple) and torch.equal(out[0], torch.full((2,), 2.0)) and torch.equal(out[1], torch.full((2,), 4.0))


def test_a_no_carry_loop_whose_root_is_read_inside_the_body() -> None:
    x, i = Var("x", f32[2]), Var("i", i64[()])
    root = ops.add(x, ops.cast(i, dtype=f32))
    loop = GridRegionExpr(3, i, (), (), Tuple((root, ops.mul(root, root))), ())
    out = agree(Function("f", (x,), loop), torch.zeros(2))
    assert isinstance(out, tuple) and torch.equal(out[1], torch.full((2,), 4.0))


# -- a projection one past the end (direct route: no inference) --------------------------------


def test_a_projection_one_past_the_end_is_the_named_error_on_the_direct_route() -> None:
    x = Var("x", f32[2])
    fn = Function("f", (x,), TupleGetItem(Tuple((x, x)), 2))
    with pytest.raises(EvalError, match=r"index 2 is out of range for a 2-tuple$"):
        evaluate(fn, torch.zeros(2))
    with pytest.raises(TypeInferenceError, match=r"index 2 is out of range"):
        lower(fn)


# -- a callee parameter takes its declared layout ----------------------------------------------


def test_a_handler_in_a_callee_sees_the_parameter_s_declared_layout_on_both_routes() -> None:
    """``g``'s parameter is declared without a layout: inside ``g`` its value carries none,
    whatever layout the caller's argument had (the handler adds ``layout_code`` of it)."""
    y = Var("y", f32[4])
    g = Function("g", (y,), ops.apply(Probe(), y))
    x = Var("x", TensorType((4,), DType.float32, Layout((2, 2))))
    out = agree(Function("f", (x,), Tuple((Call(g, (x,)), ops.apply(Probe(), x)))), torch.zeros(4))
    assert isinstance(out, tuple)
    assert torch.equal(out[0], torch.zeros(4)) and torch.equal(out[1], torch.full((4,), 12.0))  # 10 + rank 2


# -- a re-registered handler is the one called -------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reregistered(SameTypeOp):
    name: ClassVar[str] = "reregistered_test_op"


def _adds(n: float) -> Handler:
    def handler(ctx: EvaluateContext) -> Value:
        (v,) = ctx.args
        assert isinstance(v, TensorValue)
        return TensorValue(v.data + n, v.type)

    return handler


@pytest.fixture
def reregistered() -> Iterator[None]:
    register_eval(Reregistered, override=True)(_adds(1.0))
    try:
        yield
    finally:
        eval_registry.add(Reregistered, _adds(1.0), override=True)


def test_a_handler_registered_again_is_the_one_both_routes_call(reregistered: None) -> None:
    x = Var("x", f32[2])
    fn = Function("f", (x,), ops.apply(Reregistered(), x))
    assert torch.equal(evaluate(fn, torch.zeros(2)), torch.ones(2))  # type: ignore[arg-type]
    register_eval(Reregistered, override=True)(_adds(5.0))
    assert torch.equal(evaluate(fn, torch.zeros(2)), torch.full((2,), 5.0))  # type: ignore[arg-type]
    assert torch.equal(lower(fn).run(torch.zeros(2)), torch.full((2,), 5.0))  # type: ignore[arg-type]


# -- the random programs build these constructs ------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(ensure=("boundaries",), weak_values=True))
def test_routes_agree_on_random_programs_at_the_boundaries(program: Program) -> None:
    report = check_equivalence(program.target, *program.inputs)
    assert report.ok and report.compared > 0, f"{program!r}\n{report}"
    assert _same(evaluate(program.target, *program.inputs), lower(program.target).run(*program.inputs))


def test_the_boundary_programs_build_every_construct_the_mutants_needed() -> None:
    seen: collections.Counter[str] = collections.Counter()

    @settings(max_examples=80, deadline=None, derandomize=True, database=None, phases=[Phase.generate])
    @given(programs(ensure=("boundaries",), weak_values=True))
    def collect(program: Program) -> None:
        seen.update(program_features(program.function))

    collect()
    wanted = {*BOUNDARY_FEATURES, "nested tuple param", "index-valued carry", "callee last in a loop body"}
    assert not wanted - set(seen), f"not drawn in 80 programs: {sorted(wanted - set(seen))} (seen: {dict(seen)})"
