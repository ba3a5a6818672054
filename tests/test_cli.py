"""The tfexec command: each subcommand, exit codes (0 ok, 1 failure, 2 usage), one-line errors."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tfexec.cli import main
from tfexec.loading import write_tensors

ROOT = Path(__file__).resolve().parent.parent
MLP = str(ROOT / "examples" / "mlp.tf.py")
TILED = str(ROOT / "examples" / "tiled_matmul.tf.py")


def test_run_prints_outputs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", MLP, "--dim", "B=2"]) == 0
    assert "output: f32[2, 64]" in capsys.readouterr().out


def test_run_with_inputs_file_and_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.safetensors"
    x, w1, w2 = torch.randn(3, 64), torch.randn(64, 256), torch.randn(256, 64)
    write_tensors({"x": x, "w1": w1, "w2": w2}, inputs)
    out = tmp_path / "out.safetensors"
    assert main(["run", MLP, "--inputs", str(inputs), "--out", str(out)]) == 0
    from safetensors import safe_open

    with safe_open(str(out), framework="pt") as f:
        got = f.get_tensor("output")
    assert torch.allclose(got, torch.nn.functional.silu(x @ w1) @ w2, rtol=1e-5, atol=1e-5)


def test_check_prints_the_table_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", TILED, "--dim", "K=64", "--loops", "expand"]) == 0
    out = capsys.readouterr().out
    assert "tiled_matmul/acc[1]/pa" in out and "OK:" in out


def test_print_is_the_canonical_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["print", TILED]) == 0
    assert "for k, acc in grid(K // 32, acc0):" in capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["mermaid", "dot"])
def test_graph_draws_loop_bodies_as_subgraphs(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", TILED, "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert ("subgraph" in out) and ("flowchart TD" in out if fmt == "mermaid" else "digraph" in out)


def test_dump_and_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b, c = (str(tmp_path / f"{n}.safetensors") for n in "abc")
    assert main(["dump", MLP, "--dim", "B=2", "--out", a]) == 0
    assert main(["dump", MLP, "--dim", "B=2", "--out", b]) == 0
    assert main(["dump", MLP, "--dim", "B=2", "--seed", "1", "--out", c]) == 0
    assert main(["diff", a, b]) == 0
    capsys.readouterr()
    assert main(["diff", a, c]) == 1
    assert "first divergence at mlp/h" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["run", "no/such/file.tf.py"], 2, "no such file or directory"),
        (["run", MLP, "--function", "nope"], 2, "no function 'nope'"),
        (["run", MLP, "--dim", "B"], 2, "--dim expects NAME=SIZE"),
        (["print", "missing.tf.py"], 2, "no such file"),
        (["diff", "missing-a.safetensors", "missing-b.safetensors"], 2, "cannot read dump"),
    ],
)
def test_bad_usage_is_one_line_on_stderr(args: list[str], code: int, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_wrong_input_names_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.safetensors"
    write_tensors({"x": torch.randn(2, 64), "weights": torch.randn(64, 256)}, inputs)
    assert main(["run", MLP, "--inputs", str(inputs)]) == 2
    err = capsys.readouterr().err
    assert "missing: w1, w2; unexpected: weights" in err


def test_malformed_module_directory_fails_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_text("{not json")
    assert main(["run", str(tmp_path / "broken")]) == 1
    err = capsys.readouterr().err
    assert "ModuleLoadError" in err and "Traceback" not in err


def test_evaluation_failure_exits_1_and_debug_shows_the_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.tf.py"
    bad.write_text("def f(x: f32[4]) -> f32[4]:\n    return slice(x, (3,), sizes=(2,))\n")
    assert main(["run", str(bad)]) == 1
    assert "runs past axis 0 of length 4" in capsys.readouterr().err
    assert main(["--debug", "run", str(bad)]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_parse_error_exits_1_with_location(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.tf.py"
    bad.write_text("import os\n")
    assert main(["print", str(bad)]) == 1
    assert "bad.tf.py:1:1" in capsys.readouterr().err


def test_module_entry_point_and_help() -> None:
    done = subprocess.run([sys.executable, "-W", "ignore", "-m", "tfexec", "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "run" in done.stdout and "check" in done.stdout
    usage = subprocess.run([sys.executable, "-W", "ignore", "-m", "tfexec", "frobnicate"], capture_output=True, text=True, timeout=120)
    assert usage.returncode == 2
