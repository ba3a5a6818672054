"""``tfexec dump`` writes the dump format; ``tfexec diff`` reads any runtime's dump."""

import json
from pathlib import Path

import pytest

from tfexec.cli import main
from tfexec.compare import index_path, read_dump
from tfexec.loading import write_tensors

ROOT = Path(__file__).resolve().parents[2]
MLP = str(ROOT / "examples" / "mlp.tf.py")
LLAMA = str(ROOT / "examples" / "llama_block")

pytestmark = pytest.mark.values  # dump and diff store and compare values


def test_dump_writes_the_tensors_and_their_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "a.safetensors"
    assert main(["dump", LLAMA, "--dim", "S=4", "--out", str(out)]) == 0
    assert f"and its index {index_path(out)}" in capsys.readouterr().out
    dump = read_dump(out)
    probs = dump.entries["block/probs"]
    assert (probs.op, probs.shape, probs.dtype, probs.node) == ("softmax", (4, 4, 4), "f32", "block/probs")
    assert probs.location.endswith("module.tf.py:35:13")
    keys = list(dump.tensors)
    assert keys.index("block/masked") < keys.index("block/probs") < keys.index("block/h")


def _dumps(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
    assert main(["dump", MLP, "--dim", "B=2", "--out", str(a)]) == 0
    tensors = read_dump(a).tensors
    theirs = {k: v + 1e-4 if k == "mlp/a" else v for k, v in tensors.items()}
    write_tensors(theirs, b)  # another runtime: tensors alone, no index
    return a, b


def test_diff_names_the_first_divergence_and_states_tolerances(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _dumps(tmp_path)
    capsys.readouterr()
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "first divergence at mlp/a (silu, " in out and "tolerances: f32 rtol=1.3e-06 atol=1e-05" in out
    assert main(["diff", str(a), str(b), "--atol", "1e-3"]) == 0
    assert main(["diff", str(a), str(b), "--tol", "f32=0,1e-3"]) == 0
    assert main(["diff", str(a), str(a), "--exact"]) == 0
    capsys.readouterr()
    assert main(["diff", str(a), str(b), "--exact", "--atol", "1"]) == 1


def test_diff_of_a_partial_dump_needs_allow_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = _dumps(tmp_path)
    partial = tmp_path / "partial.safetensors"
    write_tensors({"mlp/h": read_dump(a).tensors["mlp/h"]}, partial)
    assert main(["diff", str(a), str(partial)]) == 1
    assert main(["diff", str(a), str(partial), "--allow-missing"]) == 0
    assert "2 only in expected, 0 only in actual (not compared)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--tol", "f32=1e-3"], "--tol expects DTYPE=RTOL,ATOL"), (["--tol", "f33=1,1"], "--tol expects"),
     (["--atol", "-1"], "--atol -1: a tolerance must be a finite number >= 0")],
)
def test_bad_tolerances_are_usage_errors(tmp_path: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _dumps(tmp_path)
    capsys.readouterr()
    assert main(["diff", str(a), str(b), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_bad_index_is_a_one_line_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _dumps(tmp_path)
    document = json.loads(index_path(a).read_text())
    document["version"] = 7
    index_path(a).write_text(json.dumps(document))
    capsys.readouterr()
    assert main(["diff", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert "dump format version 7 is newer" in err and "Traceback" not in err


def test_dump_of_a_loop_expands_iterations(tmp_path: Path) -> None:
    out = tmp_path / "t.safetensors"
    tiled = str(ROOT / "examples" / "tiled_matmul.tf.py")
    assert main(["dump", tiled, "--dim", "K=64", "--loops", "expand", "--out", str(out)]) == 0
    entry = read_dump(out).entries["tiled_matmul/acc[1]/pa"]
    assert entry.op == "slice" and entry.shape == (128, 32)
