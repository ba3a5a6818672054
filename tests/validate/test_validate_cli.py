"""``tfexec validate FILE [--function NAME]``: exit 0 validated, 1 a problem or no lowering,
2 usage; one-line errors; and ``tfexec check`` says it validated for all inputs."""

from pathlib import Path

import pytest

from tfexec.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def test_validate_prints_the_rule_table_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(EXAMPLES / "tiled_matmul.tf.py")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["rule", "checks", "checked", "problems"]
    assert out[-1].startswith("VALIDATED: the lowering of tiled_matmul denotes the program at all 7 key(s)")


def test_validate_picks_a_function_and_reads_saved_modules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(EXAMPLES / "llama_block.tf.py"), "--function", "rope"]) == 0
    assert "the lowering of rope" in capsys.readouterr().out
    assert main(["validate", str(EXAMPLES / "llama_block")]) == 0
    assert "the lowering of block denotes the program at all 62 key(s)" in capsys.readouterr().out


def test_validate_needs_no_inputs() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["validate", str(EXAMPLES / "mlp.tf.py"), "--dim", "B=2"])
    assert exc.value.code == 2


def test_validate_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path / "nope.tf.py")]) == 2
    assert "nope.tf.py: no such file or directory" in capsys.readouterr().err
    assert main(["validate", str(EXAMPLES / "llama_block.tf.py"), "--function", "nope"]) == 2
    assert "no function 'nope'" in capsys.readouterr().err


def test_a_program_that_does_not_lower_exits_1_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.tf.py"
    bad.write_text("def f(x: f32[4], y: f32[3]) -> f32[4]:\n    return add(x, y)\n", encoding="utf-8")
    assert main(["validate", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tfexec validate: TypeInferenceError: ") and "bad.tf.py:2" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_check_says_it_validated_for_all_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(EXAMPLES / "mlp.tf.py"), "--dim", "B=2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == "compared on these inputs; validated for all inputs: the lowering denotes the program at all 3 key(s)"
    assert out[-1].startswith("OK: 3 node(s) compared")
