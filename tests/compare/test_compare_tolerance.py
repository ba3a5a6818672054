"""Per-dtype tolerances: what agrees, what does not, and what the reason says."""

import math

import pytest
import torch

from tfexec import DType
from tfexec.compare import DEFAULT_TOLERANCES, EXACT, Tolerance, compare_tensors, resolve_tolerances


def test_the_defaults_are_torch_testing_s_and_every_other_dtype_is_exact() -> None:
    table = resolve_tolerances()
    assert table[DType.float32] == Tolerance(1.3e-6, 1e-5)
    assert table[DType.float16] == Tolerance(1e-3, 1e-5)
    assert table[DType.bfloat16] == Tolerance(1.6e-2, 1e-5)
    assert table[DType.float64] == Tolerance(1e-7, 1e-7)
    assert all(table[d] == EXACT for d in DType if d not in DEFAULT_TOLERANCES)


def test_an_override_replaces_one_dtype_only() -> None:
    table = resolve_tolerances({DType.float32: Tolerance(0.1, 0.0)})
    assert table[DType.float32] == Tolerance(0.1, 0.0) and table[DType.float16] == DEFAULT_TOLERANCES[DType.float16]


def test_a_float_within_atol_plus_rtol_times_expected_agrees() -> None:
    e = torch.tensor([1.0, 100.0])
    tol = Tolerance(1e-3, 1e-4)
    assert compare_tensors(e, e + torch.tensor([1e-4, 0.1]), tol).reason is None
    verdict = compare_tensors(e, e + torch.tensor([0.0, 0.2]), tol)
    assert verdict.reason is not None and "1 of 2 element(s) beyond rtol=0.001 atol=0.0001; first at [1]" in verdict.reason
    assert verdict.max_abs_diff == pytest.approx(0.2, rel=1e-3)


def test_the_same_difference_passes_in_f16_and_fails_in_f32() -> None:
    table = resolve_tolerances()
    e16, e32 = torch.ones(4, dtype=torch.float16), torch.ones(4)
    assert compare_tensors(e16, e16 + 5e-4, table[DType.float16]).reason is None
    assert compare_tensors(e32, e32 + 5e-4, table[DType.float32]).reason is not None


def test_nan_matches_nan_and_infinities_match_only_themselves() -> None:
    e = torch.tensor([math.nan, math.inf, -math.inf])
    assert compare_tensors(e, e.clone(), EXACT).reason is None
    assert compare_tensors(e, torch.tensor([math.nan, math.inf, math.inf]), Tolerance(1.0, 1.0)).reason is not None
    assert compare_tensors(torch.tensor([1.0]), torch.tensor([math.nan]), Tolerance(1.0, 1.0)).reason is not None


def test_integers_and_booleans_compare_exactly() -> None:
    a = torch.tensor([1, 2, 3])
    verdict = compare_tensors(a, torch.tensor([1, 2, 4]), Tolerance(1.0, 1.0))
    assert verdict.reason is not None and "beyond exact" in verdict.reason and verdict.max_abs_diff == 1.0
    assert compare_tensors(torch.tensor([True]), torch.tensor([False]), EXACT).reason is not None


@pytest.mark.parametrize(
    ("actual", "message"),
    [(torch.zeros(2, dtype=torch.float16), "dtype differs: expected f32, got f16"),
     (torch.zeros(3), "shape differs: expected [2], got [3]")],
)
def test_dtype_and_shape_must_match(actual: torch.Tensor, message: str) -> None:
    verdict = compare_tensors(torch.zeros(2), actual, Tolerance(1.0, 1.0))
    assert verdict.reason == message and verdict.max_abs_diff is None


def test_rank_zero_and_empty_tensors() -> None:
    assert compare_tensors(torch.tensor(1.0), torch.tensor(1.0), EXACT).reason is None
    assert "first at []" in str(compare_tensors(torch.tensor(1.0), torch.tensor(2.0), EXACT).reason)
    assert compare_tensors(torch.zeros(0, 3), torch.zeros(0, 3), EXACT).reason is None


def test_negative_tolerances_are_refused() -> None:
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        Tolerance(-1.0, 0.0)
