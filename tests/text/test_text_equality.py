"""``structural_difference`` — the oracle of the round-trip tests — sees every difference
that matters (structure, sharing, attributes, constants, types, loops, modules) and none
that does not (names, spans)."""

import torch

from tfexec import Constant, ConstTensor, Function, GridRegionExpr, IRModule, Span, Tuple, TupleGetItem, Var, f32, i64, ops
from tfexec.text import parse, structural_difference


def _fn(body_of: "object") -> Function:
    x, y = Var("x", f32[4]), Var("y", f32[4])
    return Function("f", (x, y), body_of(x, y))  # type: ignore[operator]


def test_equal_up_to_names_and_spans() -> None:
    a = _fn(lambda x, y: ops.add(ops.exp(x, span=Span("a.py", 1, 1, "h")), y))
    x, y = Var("p", f32[4]), Var("q", f32[4])
    b = Function("g", (x, y), ops.add(ops.exp(x), y))
    assert structural_difference(a, b) is None


def test_sharing_is_part_of_the_structure() -> None:
    x = Var("x", f32[4])
    e = ops.exp(x)
    shared = Function("f", (x,), ops.add(e, e))
    x2 = Var("x", f32[4])
    unshared = Function("f", (x2,), ops.add(ops.exp(x2), ops.exp(x2)))
    assert "sharing differs" in (structural_difference(shared, unshared) or "")
    assert "sharing differs" in (structural_difference(unshared, shared) or "")


def test_operands_attributes_and_variables() -> None:
    assert "ops differ" in (structural_difference(_fn(lambda x, y: ops.add(x, y)), _fn(lambda x, y: ops.sub(x, y))) or "")
    r1 = _fn(lambda x, y: ops.reduce(x, kind="sum", axes=(0,)))
    r2 = _fn(lambda x, y: ops.reduce(x, kind="sum", axes=(-1,)))
    assert "ops differ" in (structural_difference(r1, r2) or "")
    swapped = structural_difference(_fn(lambda x, y: ops.add(x, y)), _fn(lambda x, y: ops.add(y, x)))
    assert "does not correspond" in (swapped or "")
    assert "1 vs 2 arguments" in (structural_difference(_fn(lambda x, y: ops.concat(x)), _fn(lambda x, y: ops.concat(x, y))) or "")


def test_constants_compare_by_value_type_and_weakness() -> None:
    def with_const(c: Constant) -> Function:
        return _fn(lambda x, y: ops.add(x, c))

    nan = float("nan")
    assert structural_difference(with_const(Constant(nan, f32[()], weak=True)), with_const(Constant(nan, f32[()], weak=True))) is None
    assert structural_difference(with_const(Constant(1.0, f32[()])), with_const(Constant(2.0, f32[()]))) is not None
    assert structural_difference(with_const(Constant(1.0, f32[()])), with_const(Constant(1.0, f32[()], weak=True))) is not None
    assert structural_difference(with_const(Constant(1, i64[()])), with_const(Constant(1, f32[()]))) is not None
    assert structural_difference(with_const(Constant(torch.tensor(1.0), f32[()])), with_const(Constant(1.0, f32[()], weak=True))) is not None
    t = torch.tensor([1.0, nan])
    assert structural_difference(with_const(Constant(t, f32[2])), with_const(Constant(t.clone(), f32[2]))) is None
    assert structural_difference(with_const(Constant(t, f32[2])), with_const(Constant(torch.tensor([1.0, 2.0]), f32[2]))) is not None
    c1, c2 = ConstTensor("w", f32[4]), ConstTensor("v", f32[4])
    assert structural_difference(_fn(lambda x, y: ops.add(x, c1)), _fn(lambda x, y: ops.add(x, c2))) is not None


def test_tuples_projections_and_loops() -> None:
    assert structural_difference(_fn(lambda x, y: TupleGetItem(Tuple((x, y)), 0)), _fn(lambda x, y: TupleGetItem(Tuple((x, y)), 1))) is not None

    def loop(extent: int, yield_op: str) -> Function:
        x = Var("x", f32[4])
        k, acc = Var("k", i64[()]), Var("acc", f32[4])
        y = getattr(ops, yield_op)(acc, x)
        return Function("l", (x,), GridRegionExpr(extent, k, (x,), (acc,), y, (y,)))

    assert structural_difference(loop(3, "add"), loop(3, "add")) is None
    assert "loop extent 3 vs 4" in (structural_difference(loop(3, "add"), loop(4, "add")) or "")
    assert "ops differ" in (structural_difference(loop(3, "add"), loop(3, "mul")) or "")


def test_modules_compare_functions_constants_entry_and_children() -> None:
    base = "w: f32[4] = const()\n@entry\ndef f(x: f32[4]) -> f32[4]:\n    return add(x, w)\n"
    assert structural_difference(parse(base), parse(base)) is None
    assert "constants" in (structural_difference(parse(base), parse(base.replace("f32[4] = const", "f32[5] = const"))) or "")
    assert "entry" in (structural_difference(parse(base), parse(base.replace("@entry\n", ""))) or "")
    child = base + "class c:\n    v: f32[4] = const()\n"
    assert "children" in (structural_difference(parse(base), parse(child)) or "")
    assert "cannot compare" in (structural_difference(IRModule({}), _fn(lambda x, y: x)) or "")
