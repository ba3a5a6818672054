"""Where the routes differ today (proofs_notes/divergences.md): each test states what the
equivalence theorem claims for one minimal program. An open divergence is a strict xfail
naming the reason; a fixed one is an ordinary test that keeps it fixed. When the code is
fixed an xfail passes, strict xfail turns that into a failure,
and the marker (and the entry in divergences.md) must go."""

from dataclasses import dataclass
from typing import ClassVar

import pytest
import torch

import tfexec
from tfexec import (
    Constant,
    DimVar,
    EvalError,
    EvaluateContext,
    Function,
    GridRegionExpr,
    TensorValue,
    Tuple,
    TupleGetItem,
    Value,
    Var,
    f32,
    f64,
    i64,
    ops,
    register_eval,
)
from tfexec.semantics.registry import Kernel, value_rule

from proofs.programs import assert_routes_agree, assert_same
from shared_helpers import LyingOp as ProofLying  # the name proofs_notes/divergences.md shows
from shared_helpers import SameTypeOp

B, N = DimVar("B"), DimVar("N")


def test_no_carry_loop_tuple_result_is_plain_on_both_routes() -> None:
    x, k = Var("x", f64[4]), Var("k", i64[()])
    loop = GridRegionExpr(2, k, (), (), Tuple((k, Constant(0.1, f32[()], weak=True))), ())
    fn = Function("f", (x,), ops.add(x, TupleGetItem(loop, 1)))
    assert_routes_agree(fn, torch.zeros(4, dtype=torch.float64))


@dataclass(frozen=True, slots=True)
class ProofScale(SameTypeOp):
    """Scales its first operand by its second (a plain ``register_eval`` handler)."""

    name: ClassVar[str] = "proof_scale"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2


@register_eval(ProofScale)
def _scale(ctx: EvaluateContext) -> Value:
    x, s = ctx.args
    assert isinstance(x, TensorValue) and isinstance(s, TensorValue)
    return TensorValue(x.data * (s.scalar if s.scalar is not None else s.data), x.type)


def test_run_keeps_a_weak_constant_a_plain_handler_still_reads() -> None:
    p = Var("p", f32[()])
    g = Function("g", (p,), ops.mul(p, 3.0))
    x = Var("x", f32[4])
    two = Constant(2.0, f32[()], weak=True)
    fn = Function("f", (x,), Tuple((ops.call(g, two), ops.apply(ProofScale(), x, two))))
    assert tfexec.check_equivalence(fn, torch.ones(4)).ok  # denote_all keeps every slot, so it agrees ...
    assert_same(tfexec.evaluate(fn, torch.ones(4)), tfexec.lower(fn).run(torch.ones(4)))  # ... run does not


def test_boundary_check_accepts_a_dim_expr_parameter_before_its_binding_parameter() -> None:
    x, y = Var("x", f32[B * 2]), Var("y", f32[B])
    fn = Function("f", (x, y), ops.add(ops.slice(x, (0,), sizes=(B,)), y))
    assert_routes_agree(fn, torch.ones(6), torch.ones(3))


def test_full_check_accepts_a_callee_whose_first_node_has_a_dim_expr_type() -> None:
    y = Var("y", f32[N])
    g = Function("g", (y,), ops.concat(y, y))
    p = Var("p", f32[4])
    fn = Function("h", (p,), ops.call(g, p))
    assert_same(tfexec.evaluate(fn, torch.ones(4)), tfexec.lower(fn).run(torch.ones(4), check="full"))


def test_full_check_reaches_loop_body_nodes() -> None:
    x, k = Var("x", f32[3]), Var("k", i64[()])
    lie = ops.reduce(ops.apply(ProofLying(), ops.add(x, ops.cast(k, dtype=f32))), kind="sum")
    fn = Function("f", (x,), GridRegionExpr(2, k, (), (), lie, ()))
    with pytest.raises(EvalError, match="runtime type check failed"):
        tfexec.lower(fn).run(torch.ones(3), check="full")


@dataclass(frozen=True, slots=True)
class ProofComplex(SameTypeOp):
    """A user op whose value rule returns a dtype the IR does not name."""

    name: ClassVar[str] = "proof_complex"


@value_rule(ProofComplex)
def _complex(op: ProofComplex, layouts: object) -> Kernel:
    return Kernel(lambda x: x.to(torch.complex64))


def test_value_rule_result_outside_the_ir_is_refused_alike() -> None:
    x = Var("x", f32[4])
    fn = Function("f", (x,), ops.abs(ops.apply(ProofComplex(), x)))
    report = tfexec.check_equivalence(fn, torch.ones(4))
    assert report.ok and report.compared == 0
    assert "proof_complex" in (report.error or "") and "torch dtype torch.complex64 has no HIR DType" in (report.error or "")


@dataclass(frozen=True, slots=True)
class ProofScaleBy(SameTypeOp):
    """A user op with an unhashable (list) attribute."""

    name: ClassVar[str] = "proof_scale_by"
    factors: list[float] | None = None


@value_rule(ProofScaleBy)
def _scale_by(op: ProofScaleBy, layouts: object) -> Kernel:
    factor = float(sum(op.factors or []))
    return Kernel(lambda x: x * factor)


def test_value_rule_of_an_op_with_an_unhashable_attribute_runs_alike() -> None:
    x = Var("x", f32[2])
    fn = Function("f", (x,), ops.apply(ProofScaleBy(factors=[1.0, 2.0]), x))
    assert tfexec.check_equivalence(fn, torch.ones(2)).ok


@dataclass(frozen=True, slots=True)
class ProofZerosOfType(SameTypeOp):
    """A user op whose kernel reads ``ctx.result_type``."""

    name: ClassVar[str] = "proof_zeros_of_type"


@value_rule(ProofZerosOfType)
def _zeros_of_type(op: ProofZerosOfType, layouts: object) -> Kernel:
    def run(ctx: EvaluateContext, x: torch.Tensor) -> torch.Tensor:
        # A value rule may read only the run's device, dims and module (Kernel's contract):
        # both routes pass the run's context, never the per-dispatch one.
        assert ctx.op is None and ctx.args == () and ctx.result_type is None, (ctx.op, ctx.args, ctx.result_type)
        return torch.zeros_like(x)

    return Kernel(run, needs_ctx=True)


def test_needs_ctx_kernel_sees_the_run_context_on_both_routes() -> None:
    x = Var("x", f32[2])
    fn = Function("f", (x,), ops.apply(ProofZerosOfType(), x))
    tfexec.infer_types(fn)
    report = tfexec.check_equivalence(fn, torch.ones(2))
    assert report.ok and report.compared == 1, str(report)
