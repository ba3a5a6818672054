"""Provenance: every parsed node carries the Span it was authored at (1-based line and
column, binding, op text), errors after parsing start with it, and @script keeps the real
file and line numbers (hir.md §text)."""

import inspect

import pytest
import torch

from tfexec import (
    Call, ConstTensor, DimVar, EvalError, Function, GridRegionExpr, ParseError, Span, TypeInferenceError, Var,
    describe_expr, evaluate, f32, infer_types, script,
)
from tfexec.text import parse, parse_function

B = DimVar("B")

MLP = """def mlp(x: f32[B, 64], w1: f32[64, 256]) -> f32[B, 256]:
    h = matmul(x, w1)
    a = add(silu(h), 1.5)
    return a
"""


def test_spans_of_calls_constants_and_parameters() -> None:
    fn = parse_function(MLP, "model.tf.py")
    a = fn.body
    assert isinstance(a, Call)
    silu, scalar = a.args
    h = silu.args[0] if isinstance(silu, Call) else None
    assert isinstance(h, Call)
    assert h.span == Span("model.tf.py", 2, 9, "h", "matmul(x, w1)")
    assert a.span == Span("model.tf.py", 3, 9, "a", "add(silu(h), 1.5)")
    assert silu.span == Span("model.tf.py", 3, 13, None, "silu(h)")
    assert scalar.span == Span("model.tf.py", 3, 22, None, "1.5")
    x, w1 = fn.params
    assert x.span == Span("model.tf.py", 1, 9, None, "x: f32[B, 64]")
    assert w1.span == Span("model.tf.py", 1, 24, None, "w1: f32[64, 256]")
    assert fn.span == Span("model.tf.py", 1, 1, None, "def mlp")
    assert describe_expr(h) == "model.tf.py:2:9 h = matmul(x, w1)"
    assert describe_expr(x) == "model.tf.py:1:9 x: f32[B, 64]"


def test_columns_count_characters_not_bytes() -> None:
    fn = parse_function("def f(x: f32[4]) -> f32[4]:\n    hé = add(x, neg(x))\n    return hé\n")
    assert isinstance(fn.body, Call)
    assert fn.body.span is not None and fn.body.span.binding == "hé"
    neg = fn.body.args[1]
    assert neg.span is not None and (neg.span.line, neg.span.column) == (2, 17)


def test_spans_of_loops_and_their_variables() -> None:
    text = "def loop(a: f32[4]) -> f32[4]:\n    for k, acc in grid(3, a):\n        carry(add(acc, a))\n    return acc\n"
    fn = parse_function(text, "loop.tf.py")
    region = fn.body
    assert isinstance(region, GridRegionExpr)
    assert region.span == Span("loop.tf.py", 2, 19, "acc", "grid(3, a)")
    assert region.induction_var.span == Span("loop.tf.py", 2, 9, None, "k in grid(3, a)")
    assert region.carried_args[0].span == Span("loop.tf.py", 2, 12, None, "acc in grid(3, a)")
    assert region.yield_values[0].span == Span("loop.tf.py", 3, 15, None, "add(acc, a)")


def test_module_constants_carry_their_declaration() -> None:
    text = "wq: f32[4] = const()\n\ndef f(x: f32[4]) -> f32[4]:\n    return add(mul(x, wq), wq)\n"
    fn = parse(text, "w.tf.py").functions["f"]
    assert isinstance(fn.body, Call)
    w = fn.body.args[1]
    assert isinstance(w, ConstTensor) and w is fn.body.args[0].args[1]  # type: ignore[union-attr]
    assert w.span == Span("w.tf.py", 1, 1, "wq", "const()")


def test_type_errors_start_with_the_authored_location() -> None:
    text = "def bad(x: f32[4, 3]) -> f32[4, 3]:\n    y = neg(x)\n    h = matmul(y, x)\n    return h\n"
    fn = parse_function(text, "bad.tf.py")
    with pytest.raises(TypeInferenceError, match=r"^bad\.tf\.py:3:9 h = matmul\(y, x\): matmul \(C1\)"):
        infer_types(fn)


def test_evaluation_errors_start_with_the_authored_location() -> None:
    text = "def g(x: f32[4], i: i64[2]) -> f32[2]:\n    t = take(x, i)\n    return t\n"
    fn = parse_function(text, "g.tf.py")
    with pytest.raises(EvalError, match=r"^g\.tf\.py:2:9 t = take\(x, i\)"):
        evaluate(fn, torch.zeros(4), torch.tensor([0, 9]))


@script
def scripted(x: f32[B, 4], w: f32[4, 4]) -> f32[B, 4]:
    h = matmul(x, w)  # noqa: F821 - never executed: parsed as HIR
    return silu(h)  # noqa: F821


@script
def calls_scripted(x: f32[B, 4], w: f32[4, 4]) -> f32[B, 4]:
    return add(scripted(x, w), 1.0)  # noqa: F821


def _line_of(marker: str) -> int:
    lines = inspect.getsource(inspect.getmodule(test_script_keeps_real_file_and_lines)).splitlines()  # type: ignore[arg-type]
    return next(i for i, line in enumerate(lines, 1) if line.startswith(marker))


def test_script_keeps_real_file_and_lines() -> None:
    assert isinstance(scripted, Function)
    assert scripted.span is not None and scripted.span.file == __file__
    line = _line_of("def scripted(")
    assert (scripted.span.line, scripted.span.column) == (line, 1)
    h = scripted.body.args[0]  # type: ignore[union-attr]
    assert h.span == Span(__file__, line + 1, 9, "h", "matmul(x, w)")
    x, w = torch.randn(3, 4), torch.randn(4, 4)
    assert torch.allclose(evaluate(scripted, x, w), torch.nn.functional.silu(x @ w))  # type: ignore[arg-type]


def test_script_calls_other_script_functions() -> None:
    call = calls_scripted.body.args[0]  # type: ignore[union-attr]
    assert isinstance(call, Call) and call.target is scripted
    x, w = torch.randn(2, 4), torch.randn(4, 4)
    assert torch.allclose(evaluate(calls_scripted, x, w), evaluate(scripted, x, w) + 1.0)  # type: ignore[operator]


def test_script_of_an_indented_def_reports_real_columns() -> None:
    @script
    def inner(x: f32[4]) -> f32[4]:
        return neg(x)  # noqa: F821

    line = inspect.currentframe().f_lineno - 3  # type: ignore[union-attr]
    assert inner.span is not None and (inner.span.line, inner.span.column) == (line, 5)
    assert inner.body.span == Span(__file__, line + 1, 16, None, "neg(x)")


def test_script_errors_point_into_the_real_file_and_nothing_runs() -> None:
    line = inspect.currentframe().f_lineno  # type: ignore[union-attr]
    with pytest.raises(ParseError, match=rf"^{__file__}:{line + 5}:13: import statements are not part of the HIR"):

        @script
        def bad(x: f32[4]) -> f32[4]:
            import os  # noqa: F401 - never executed

            return x


def test_script_never_runs_the_body() -> None:
    with pytest.raises(ParseError, match=r"unknown op `undefined_helper`"):

        @script
        def bad(x: f32[4]) -> f32[4]:
            return undefined_helper(x)  # noqa: F821


def test_script_needs_a_def_with_source() -> None:
    with pytest.raises(ParseError, match="cannot read the source"):
        script(len)
    with pytest.raises(ParseError, match="@script decorates one plain def"):
        script(lambda x: x)


def test_a_var_built_by_hand_has_no_span() -> None:
    assert Var("x", f32[4]).span is None
