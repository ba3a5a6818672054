"""check_equivalence / assert_equivalent: verdicts, the per-node table, tolerances, errors."""

import itertools
from dataclasses import dataclass
from typing import ClassVar

import pytest
import torch

import tfexec
from tfexec import DimVar, EquivalenceError, Function, TensorValue, Var, f32, ops, register_eval
from tfexec.equivalence import _compare, node_sources
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.values import Value
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType

from shared_helpers import SameTypeOp

B = DimVar("B")


def small() -> Function:
    x = Var("x", f32[B])
    h = ops.exp(x, span=Span("demo.tf.py", 2, 5, "h", "exp(x)"))
    return Function("f", (x,), ops.mul(h, 2.0, span=Span("demo.tf.py", 3, 5, "y", "mul(h, 2.0)")))


def test_agreeing_routes_report_ok_with_every_key_compared() -> None:
    report = tfexec.check_equivalence(small(), torch.randn(5))
    assert report.ok and report.compared == 2 and not report.mismatches
    text = str(report)
    assert "f/h" in text and "demo.tf.py:3:5" in text and text.endswith("OK: 2 node(s) compared, 0 mismatch(es)")


def test_same_error_on_both_routes_is_ok_with_nothing_compared() -> None:
    report = tfexec.check_equivalence(small(), torch.randn(5, 2))
    assert report.ok and report.compared == 0
    assert report.error is not None and "expected rank 1" in report.error
    summary = str(report).splitlines()[-1]  # the routes agree, but the verdict never says OK of a failure
    assert summary.startswith("FAILED ALIKE: the program fails the same way on both routes") and "OK" not in summary


_counter = itertools.count()


@dataclass(frozen=True, slots=True)
class Drifting(SameTypeOp):
    """A deliberately non-deterministic op: each call adds a fresh counter value."""

    name: ClassVar[str] = "drifting_test_op"


@register_eval(Drifting)
def _drifting(ctx: EvaluateContext) -> Value:
    (x,) = ctx.args
    assert isinstance(x, TensorValue)
    return TensorValue(x.data + next(_counter), x.type)


def test_a_diverging_node_is_named_first_in_topological_order() -> None:
    x = Var("x", f32[3])
    d = ops.apply(Drifting(), x, span=Span("drift.tf.py", 4, 9, "d", "drifting_test_op(x)"))
    fn = Function("g", (x,), ops.neg(d))
    report = tfexec.check_equivalence(fn, torch.zeros(3))
    assert not report.ok
    assert report.first_divergence is not None
    assert report.first_divergence.key == "g/d"
    assert report.first_divergence.description == "drift.tf.py:4:9 d = drifting_test_op(x)"
    assert "values differ bitwise" in report.first_divergence.reason
    with pytest.raises(EquivalenceError, match=r"first divergence at g/d \(drift.tf.py:4:9 d = drifting_test_op\(x\)\)"):
        tfexec.assert_equivalent(fn, torch.zeros(3))


def test_tolerance_is_opt_in() -> None:
    a = {"f/y": TensorValue(torch.tensor([1.0, 2.0]), TensorType((2,), tfexec.DType.float32))}
    b: dict[str, object] = {"f/y": torch.tensor([1.0, 2.0 + 1e-6])}
    assert not _compare(a, b, {}, None, None, None).ok  # type: ignore[arg-type]
    assert _compare(a, b, {}, 1e-5, 0.0, None).ok  # type: ignore[arg-type]


def test_nan_equals_nan_but_signed_zeros_differ_bitwise() -> None:
    t = TensorType((2,), tfexec.DType.float32)
    nan = {"k": TensorValue(torch.tensor([float("nan"), 1.0]), t)}
    assert _compare(nan, {"k": torch.tensor([float("nan"), 1.0])}, {}, None, None, None).ok  # type: ignore[arg-type]
    zero = {"k": TensorValue(torch.tensor([0.0, 1.0]), t)}
    assert not _compare(zero, {"k": torch.tensor([-0.0, 1.0])}, {}, None, None, None).ok  # type: ignore[arg-type]


def test_dtype_and_shape_differences_are_reported() -> None:
    t = TensorType((2,), tfexec.DType.float32)
    a = {"k": TensorValue(torch.zeros(2), t)}
    dtype = _compare(a, {"k": torch.zeros(2, dtype=torch.float64)}, {}, 1.0, 1.0, None)  # type: ignore[arg-type]
    assert "dtype differs" in dtype.mismatches[0].reason
    shape = _compare(a, {"k": torch.zeros(3)}, {}, None, None, None)  # type: ignore[arg-type]
    assert "shape differs" in shape.mismatches[0].reason


def test_a_key_missing_from_one_table_is_a_mismatch() -> None:
    t = TensorType((2,), tfexec.DType.float32)
    report = _compare({"k": TensorValue(torch.zeros(2), t)}, {}, {}, None, None, None)  # type: ignore[arg-type]
    assert not report.ok and "missing from the lowering table" in report.mismatches[0].reason


def test_node_sources_cover_callees_and_loop_bodies() -> None:
    y = Var("y", f32[B])
    double = Function("double", (y,), ops.mul(y, 2.0))
    p = Var("p", f32[B])
    fn = Function("quad", (p,), ops.call(double, ops.call(double, p)))
    assert set(node_sources(fn)) == {"quad/%1", "quad/%2", "quad/double/%2", "quad/double#1/%2"}
