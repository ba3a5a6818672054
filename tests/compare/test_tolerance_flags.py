"""One parser for the tolerance flags of every command (issue #29 B): a negative, NaN or
infinite tolerance is a command-line mistake — exit 2, one line, the same rule's words —
for ``check`` (the routes), ``check --against torch`` and ``diff``."""

from pathlib import Path

import pytest

from tfexec.cli import main
from tfexec.compare import DEFAULT_TOLERANCES, EXACT, Tolerance
from tfexec.compare.tolerance_flags import RULE, ToleranceFlagError, parse_tolerances
from tfexec.ir.dtypes import DType
from tfexec.loading import write_tensors

ROOT = Path(__file__).resolve().parents[2]
MLP = str(ROOT / "examples" / "mlp.tf.py")
MODEL = str(ROOT / "tests" / "frontends" / "models.py") + ":tiny_mlp"
BAD = [("--rtol", "-1"), ("--atol", "-1"), ("--rtol", "nan"), ("--atol", "inf"), ("--rtol", "=-inf")]
"""Each flag and its value ("=-inf": written --rtol=-inf, as argparse takes a value that starts with '-')."""


def _flag(flag: str, value: str) -> list[str]:
    return [flag + value] if value.startswith("=") else [flag, value]


def _one_line_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 2, argv
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1, captured.err
    assert "internal error" not in captured.err and "Traceback" not in captured.err
    return captured.err


@pytest.mark.parametrize(("flag", "value"), BAD)
def test_check_refuses_a_tolerance_that_is_not_a_finite_number_at_least_0(
    flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _one_line_usage_error(["check", MLP, "--dim", "B=2", *_flag(flag, value)], capsys)
    assert err.startswith(f"tfexec check: {flag} ") and RULE in err, err


@pytest.mark.parametrize(("flag", "value"), [*BAD, ("--tol", "f32=nan,0"), ("--tol", "f32=1e-3,-1"), ("--tol", "bf16=inf,0")])
def test_check_against_torch_refuses_the_same_tolerances_with_the_same_words(
    flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _one_line_usage_error(["check", MODEL, "--against", "torch", "--example-shape", "3,8", *_flag(flag, value)], capsys)
    assert f"{flag} " in err and RULE in err, err


@pytest.mark.parametrize(("flag", "value"), [*BAD, ("--tol", "f32=nan,0")])
def test_diff_refuses_the_same_tolerances_with_the_same_words(
    flag: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = tmp_path / "a.safetensors"
    write_tensors({"x": __import__("torch").zeros(2)}, a)
    err = _one_line_usage_error(["diff", str(a), str(a), *_flag(flag, value)], capsys)
    assert err.startswith("tfexec diff: ") and f"{flag} " in err and RULE in err, err


def test_good_tolerances_still_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", MLP, "--dim", "B=2", "--rtol", "0", "--atol", "1e-6"]) == 0
    assert "0 mismatch(es)" in capsys.readouterr().out


def test_the_parser_combines_the_flags() -> None:
    f32 = DEFAULT_TOLERANCES[DType.float32]
    assert parse_tolerances([], rtol=1e-3)[DType.float32] == Tolerance(1e-3, f32.atol)
    assert parse_tolerances(["bf16=2e-2,1e-3"])[DType.bfloat16] == Tolerance(2e-2, 1e-3)
    assert set(parse_tolerances([], exact=True).values()) == {EXACT}
    for items in (["f32=1"], ["f33=1,1"], ["f32=a,1"]):
        with pytest.raises(ToleranceFlagError, match="--tol expects DTYPE=RTOL,ATOL"):
            parse_tolerances(items)


@pytest.mark.parametrize("value", [-1.0, float("nan"), float("inf")])
def test_the_api_s_tolerance_refuses_them_too(value: float) -> None:
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        Tolerance(value, 0.0)
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        Tolerance(0.0, value)
