"""Defects an audit of proofs_notes against the code found, each fixed and checked on both
routes (the direct route ``evaluate`` and the lowered graph's ``run``/``denote_all``)."""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import ClassVar

import pytest
import torch

import tfexec
from tfexec import (
    Constant,
    ConstTensor,
    DimVar,
    EvalError,
    EvaluateContext,
    Function,
    IRConstructionError,
    IRModule,
    Layout,
    LoadedModule,
    TensorType,
    TensorValue,
    Tuple,
    Value,
    Var,
    check_equivalence,
    evaluate,
    f32,
    f64,
    i32,
    lower,
    ops,
    register_eval,
)

from shared_helpers import SameTypeOp

B, H, N = DimVar("B"), DimVar("H"), DimVar("N")


def _both(fn: Function | LoadedModule, *inputs: object) -> tuple[object, object]:
    """The result of each route; the per-node tables must agree as well."""
    report = check_equivalence(fn, *inputs)
    assert report.ok and report.compared > 0, str(report)
    return evaluate(fn, *inputs), lower(fn).run(*inputs)


def _signbits(x: object) -> list[bool]:
    assert isinstance(x, torch.Tensor)
    return torch.signbit(x).flatten().tolist()


# -- kernels are specialised per call site, not cached by op equality (0.0 == -0.0) ---------------


def test_full_of_zero_and_of_negative_zero_stay_distinct_on_both_routes() -> None:
    x = Var("x", f32[1])
    pos, neg = ops.full(shape=(2,), value=0.0, dtype=f32), ops.full(shape=(2,), value=-0.0, dtype=f32)
    fn = Function("f", (x,), Tuple((pos, neg)))
    for out in _both(fn, torch.ones(1)):
        assert isinstance(out, tuple)
        assert _signbits(out[0]) == [False, False] and _signbits(out[1]) == [True, True]


def test_an_earlier_full_of_zero_does_not_serve_a_later_negative_zero() -> None:
    x = Var("x", f32[2])
    earlier = Function("g", (x,), ops.add(x, ops.full(shape=(2,), value=0.0, dtype=f32)))
    _both(earlier, torch.ones(2))
    fresh = Function("f", (x,), ops.div(ops.add(x, 1.0), ops.full(shape=(2,), value=-0.0, dtype=f32)))
    for out in _both(fresh, torch.ones(2)):
        assert torch.equal(out, torch.full((2,), -float("inf")))  # type: ignore[arg-type]


# -- a runtime check never refuses what the direct route accepts (D3 in three forms) -------------


def test_a_parameter_with_dims_inside_one_parameter_lowers_and_runs() -> None:
    x = Var("x", f32[B * 2, B])
    fn = Function("f", (x,), ops.exp(x))
    inp = torch.ones(6, 3)
    for mode in ("off", "boundary", "full"):
        assert torch.equal(lower(fn).run(inp, check=mode), evaluate(fn, inp))  # type: ignore[arg-type]


def test_the_output_check_binds_a_dim_only_the_module_declares() -> None:
    x = Var("x", f32[H])
    fn = Function("f", (x,), ops.add(ConstTensor("w", f32[H]), x))
    loaded = LoadedModule.from_reading(IRModule({"f": fn}, {"w": f32[H]}, entry="f"), {"w": torch.ones(4)})
    for mode in ("boundary", "full"):
        assert torch.equal(lower(loaded).run(torch.ones(4), check=mode), torch.full((4,), 2.0))  # type: ignore[arg-type]


def test_full_checking_accepts_a_callee_argument_with_a_dim_expression() -> None:
    y = Var("y", f32[N * 2, N])
    g = Function("g", (y,), ops.neg(y))
    x = Var("x", f32[B * 2, B])
    fn = Function("f", (x,), ops.call(g, x))
    assert torch.equal(lower(fn, check="full").run(torch.ones(4, 2)), -torch.ones(4, 2))  # type: ignore[arg-type]


# -- a reading that raises something unexpected ------------------------------------------------------


class _Broken(Mapping[str, torch.Tensor]):
    def __init__(self) -> None:
        self.lookups = 0

    def __getitem__(self, key: str) -> torch.Tensor:
        self.lookups += 1
        raise LookupError(f"no such weight here: {key}")

    def __iter__(self) -> Iterator[str]:
        return iter(["w"])

    def __len__(self) -> int:
        return 1


def test_a_reading_raising_lookup_error_is_one_evalerror_consulted_once() -> None:
    x = Var("x", f32[2])
    fn = Function("f", (x,), ops.add(x, ConstTensor("w", f32[2])))
    reading = _Broken()
    loaded = LoadedModule.from_reading(IRModule({"f": fn}, {"w": f32[2]}, entry="f"), reading)
    with pytest.raises(EvalError, match="constant w: the reading failed to produce it: LookupError: no such weight") as direct:
        evaluate(loaded, torch.ones(2))
    with pytest.raises(EvalError) as lowered:
        lower(loaded).run(torch.ones(2))
    assert str(direct.value) == str(lowered.value)
    report = check_equivalence(loaded, torch.ones(2))
    assert report.ok and report.compared == 0 and report.error == f"EvalError: {direct.value}"
    assert reading.lookups == 1  # a failed read is not retried


# -- weak constants are of their Python value's kind -----------------------------------------------


@pytest.mark.parametrize(
    "value, t, why",
    [
        (2.5, i32[()], "a Python float\\) cannot have type i32"),
        (True, f32[()], "a Python bool\\) cannot have type f32"),
        (2, f32[()], "a Python int\\) cannot have type f32"),
        (300, tfexec.u8[()], "a Python int\\) cannot have type u8"),
        (torch.tensor(1.0), f32[()], "a tensor constant is never weak"),
        (1.0, f32[2], "must have a rank-0 type"),
    ],
)
def test_a_weak_constant_that_does_not_fit_its_dtype_is_refused_where_it_is_built(value: object, t: TensorType, why: str) -> None:
    with pytest.raises(IRConstructionError, match=why):
        Constant(value, t, weak=True)  # type: ignore[arg-type]


def test_weak_constants_of_the_value_kind_are_built() -> None:
    for value, t in ((2.5, f64[()]), (3, i32[()]), (True, tfexec.b1[()]), (200, tfexec.u8[()])):
        assert Constant(value, t, weak=True).weak


# -- a plain handler that returns its operand ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuditPassThrough(SameTypeOp):
    """A plain handler returning its operand as it received it (weak scalar, layout and all)."""

    name: ClassVar[str] = "audit_pass_through"


@register_eval(AuditPassThrough)
def _pass_through(ctx: EvaluateContext) -> Value:
    return ctx.args[0]


def test_a_handler_returning_a_weak_operand_gives_an_ordinary_value_on_both_routes() -> None:
    x = Var("x", f64[2])
    fn = Function("f", (x,), ops.add(x, ops.apply(AuditPassThrough(), 0.1)))
    inp = torch.zeros(2, dtype=torch.float64)
    want = inp + torch.tensor(0.1, dtype=torch.float32).to(torch.float64)  # the f32 0.1, as the type rule says
    for out in _both(fn, inp):
        assert torch.equal(out, want)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class AuditLayoutSeen(SameTypeOp):
    """Records the layout of its operand as its handler sees it, and returns the operand."""

    name: ClassVar[str] = "audit_layout_seen"


SEEN: list[object] = []


@register_eval(AuditLayoutSeen)
def _layout_seen(ctx: EvaluateContext) -> Value:
    (v,) = ctx.args
    assert isinstance(v, TensorValue)
    SEEN.append(v.type.layout)
    return v


def test_a_laid_out_operand_through_a_handler_keeps_the_same_layout_on_both_routes() -> None:
    lay = Layout((2, 2))
    x = Var("x", TensorType((4,), tfexec.DType.float32, lay))
    through = ops.apply(AuditPassThrough(), x)  # the handler's result carries value_layout: none
    fn = Function("f", (x,), ops.apply(AuditLayoutSeen(), through))
    SEEN.clear()
    _both(fn, torch.arange(4.0))
    assert SEEN and all(s is None for s in SEEN)
    SEEN.clear()
    direct = Function("g", (x,), ops.apply(AuditLayoutSeen(), x))
    _both(direct, torch.arange(4.0))
    assert SEEN and all(s == lay for s in SEEN)


# -- dims only the body uses are given with dims= ---------------------------------------------------


def test_a_body_only_dim_is_given_with_dims_on_every_route() -> None:
    x = Var("x", f32[2])
    fn = Function("f", (x,), ops.concat(x, ops.full(shape=(N,), value=1.0, dtype=f32)))
    with pytest.raises(EvalError, match="N"):
        evaluate(fn, torch.zeros(2))
    want = torch.tensor([0.0, 0.0, 1.0, 1.0, 1.0])
    assert torch.equal(evaluate(fn, torch.zeros(2), dims={"N": 3}), want)  # type: ignore[arg-type]
    graph = lower(fn)
    assert torch.equal(graph.run(torch.zeros(2), dims={"N": 3}), want)  # type: ignore[arg-type]
    assert list(graph.denote_all(torch.zeros(2), dims={"N": 3})) == ["f/%1", "f/%2"]
    assert check_equivalence(fn, torch.zeros(2), dims={"N": 3}).ok


def test_given_dims_must_agree_with_input_axes_alike() -> None:
    x = Var("x", f32[N])
    fn = Function("f", (x,), ops.exp(x))
    with pytest.raises(EvalError, match=r"dim N is 4 \(bound by dims=\) but axis 0 has size 3") as direct:
        evaluate(fn, torch.zeros(3), dims={"N": 4})
    with pytest.raises(EvalError) as lowered:
        lower(fn).run(torch.zeros(3), dims={"N": 4})
    assert str(direct.value) == str(lowered.value)
    with pytest.raises(EvalError, match="dims= maps dim names to sizes"):
        evaluate(fn, torch.zeros(3), dims={"N": -1})
