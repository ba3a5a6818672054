"""Spec clauses whose every part no earlier test checked (found by docs/spec-coverage.md).

§4: "Slice consumes its evaluated starts tuple and resolves sizes/strides through
dim_bindings" — the other tests resolve symbolic *sizes*; none had a symbolic *stride*.
"""

import pytest
import torch
from spec_helpers import tensor

from tfexec import DimVar, EvalError, Function, Var, evaluate, f32, ops

N, S = DimVar("N"), DimVar("S")


@pytest.mark.spec("s4.slice-starts-sizes-strides")
def test_s4_slice_stride_resolves_through_dim_bindings() -> None:
    # the stride S is bound from the second input's length, per run
    x, s = Var("x", f32[10]), Var("s", f32[S])
    fn = Function("f", (x, s), ops.slice(x, (1,), sizes=(3,), strides=(S,)))
    data = torch.arange(10.0)
    assert tensor(evaluate(fn, data, torch.ones(3))).tolist() == [1.0, 4.0, 7.0]
    assert tensor(evaluate(fn, data, torch.ones(4))).tolist() == [1.0, 5.0, 9.0]


@pytest.mark.spec("s4.slice-starts-sizes-strides", "s4.slice-window-past-axis")
def test_s4_slice_window_past_axis_under_a_bound_stride_raises() -> None:
    # the same program fits for S=4 on 10 elements and runs past a 9-element axis
    x, s = Var("x", f32[N]), Var("s", f32[S])
    fn = Function("f", (x, s), ops.slice(x, (1,), sizes=(3,), strides=(S,)))
    assert tensor(evaluate(fn, torch.arange(10.0), torch.ones(4))).tolist() == [1.0, 5.0, 9.0]
    with pytest.raises(EvalError, match=r"window \[1, 10\) with stride 4 runs past axis 0 of length 9"):
        evaluate(fn, torch.arange(9.0), torch.ones(4))
