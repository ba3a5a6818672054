"""The finite-input search: float inputs redrawn away from zero, and a NaN/Inf tfexec
itself computes for every input tried reported as the oracle's, never run on a backend."""

from pathlib import Path

import torch

import tfexec
from tfexec.fuzz import FuzzOptions
from tfexec.fuzz._inputs import RANGES, first_non_finite, redrawn
from tfexec.fuzz._run import FuzzReport, _one
from tfexec.testing import Program


def test_redrawn_inputs_change_floats_only() -> None:
    x, i, b = torch.zeros(4, 3), torch.arange(5), torch.tensor([True, False])
    for attempt in range(1, len(RANGES) + 1):
        fx, fi, (fb,) = redrawn((x, i, (b,)), attempt, seed=0)
        lo, hi = RANGES[attempt - 1]
        assert isinstance(fx, torch.Tensor) and fx.dtype == torch.float32 and fx.shape == x.shape
        assert bool((fx.abs() >= lo - 1e-6).all() and (fx.abs() <= hi + 1e-6).all())
        assert fi is i and fb is b
    assert torch.equal(redrawn((x,), 1, seed=3)[0], redrawn((x,), 1, seed=3)[0])  # type: ignore[arg-type]


def test_first_non_finite_names_the_first_key() -> None:
    table = {"f/a": torch.ones(2), "f/b": torch.tensor([1.0, float("inf")]), "f/c": torch.tensor([float("nan")])}
    bad = first_non_finite(table)
    assert bad is not None and bad.key == "f/b" and bad.what == "an infinity"
    assert first_non_finite({"f/a": torch.ones(2), "f/i": torch.arange(3)}) is None


def _never_called(function: tfexec.Function, inputs: tuple[torch.Tensor, ...]) -> dict[str, torch.Tensor]:
    raise AssertionError("a backend ran on a program tfexec computes NaN on")


def test_a_nan_the_oracle_always_computes_is_the_oracle_s(tmp_path: Path) -> None:
    fn = tfexec.parse_function("def f(x: f32[3]):\n    return div(x, sub(x, x))\n")
    report = FuzzReport(FuzzOptions())
    _one(Program(fn, (torch.ones(3),)), 0, _never_called, report.options, report, set(), tmp_path)
    assert report.oracle_non_finite == {"div": 1} and not report.found and report.ran == 0
    assert "oracle non-finite" in report.summary() and "1 x first at div" in report.summary()
    assert not report.ok  # nothing compared: not a pass


def test_inputs_are_redrawn_when_the_first_ones_overflow(tmp_path: Path) -> None:
    fn = tfexec.parse_function("def f(x: f32[3]):\n    return div(1.0, x)\n")  # 1/0 on the generator's zeros
    seen: list[torch.Tensor] = []

    def backend(function: tfexec.Function, inputs: tuple[torch.Tensor, ...]) -> dict[str, torch.Tensor]:
        seen.append(inputs[0])
        from tfexec.compare import tfexec_table

        return tfexec_table(function, inputs)

    report = FuzzReport(FuzzOptions())
    _one(Program(fn, (torch.tensor([0.0, 1.0, 2.0]),)), 0, backend, report.options, report, set(), tmp_path)
    assert report.retried_inputs == 1 and report.compared == 1 and report.ok
    assert bool((seen[0].abs() >= 0.5).all())
