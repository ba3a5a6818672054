"""Output paths never destroy the user's files (issue #29 A): a command refuses, with exit 2 and
one line, an output that is one of its inputs or a file of a saved module, and (unless
--force) an existing file it did not write; outputs are written whole (a temporary file
renamed over the old one), so a failed write leaves the old file as it was."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tfexec.cli import main
from tfexec.loading import load_module, write_tensors
from tfexec.loading.atomic import replacing

ROOT = Path(__file__).resolve().parent.parent
MLP = ROOT / "examples" / "mlp.tf.py"
LLAMA = ROOT / "examples" / "llama_block"


@pytest.fixture
def prog(tmp_path: Path) -> Path:
    path = tmp_path / "P.tf.py"
    shutil.copy(MLP, path)
    return path


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], *, says: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert says in err, err


@pytest.mark.parametrize("argv", [
    ["explain", "{P}", "-o", "{P}"],
    ["run", "{P}", "--out", "{P}"],
    ["dump", "{P}", "--out", "{P}"],
    ["run", "{P}", "--dim", "B=2", "--out", "{P}", "--force"],  # --force never overwrites an input
    ["reduce", "{P}", "--dim", "B=2", "--check", "false {program}", "--out", "{D}"],
    ["mesh", "{P}", "--mesh", "2", "--out", "{P}"],
])
def test_an_output_that_is_the_program_is_refused_and_the_program_kept(
    argv: list[str], prog: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    before = prog.read_bytes()
    if "{D}" in argv:  # reduce writes DIR/program.tf.py: the program's own name in its own folder
        prog = prog.rename(prog.parent / "program.tf.py")
        before = prog.read_bytes()
    filled = [a.replace("{P}", str(prog)).replace("{D}", str(prog.parent)) for a in argv]
    _refused(filled, capsys, says=f"is the input {prog}")
    assert prog.read_bytes() == before


def test_an_output_inside_the_saved_module_is_refused_and_the_module_still_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    module = tmp_path / "MODULE"
    shutil.copytree(LLAMA, module)
    weights = (module / "weights.safetensors").read_bytes()
    _refused(["run", str(module), "--out", str(module / "weights.safetensors")], capsys,
             says="a saved module this command reads")
    _refused(["explain", str(module), "-o", str(module / "page.html")], capsys, says="is inside")
    _refused(["dump", str(module), "--out", str(module)], capsys, says="is the input")
    assert (module / "weights.safetensors").read_bytes() == weights
    assert not (module / "page.html").exists()
    load_module(module)  # still opens: nothing of it was touched


def test_the_inputs_file_is_an_input_too(tmp_path: Path, prog: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.safetensors"
    write_tensors({"x": torch.randn(2, 64), "w1": torch.randn(64, 256), "w2": torch.randn(256, 64)}, inputs)
    before = inputs.read_bytes()
    _refused(["run", str(prog), "--inputs", str(inputs), "--out", str(inputs), "--force"], capsys, says="is the input")
    link = tmp_path / "link.safetensors"
    link.symlink_to(inputs)
    _refused(["run", str(prog), "--inputs", str(inputs), "--out", str(link)], capsys, says="is the input")
    assert inputs.read_bytes() == before


def test_run_overwrites_its_own_output_but_not_a_foreign_file_without_force(
    tmp_path: Path, prog: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out.safetensors"
    assert main(["run", str(prog), "--dim", "B=2", "--out", str(out)]) == 0
    assert main(["run", str(prog), "--dim", "B=3", "--out", str(out)]) == 0  # a previous output: replaced
    capsys.readouterr()
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    _refused(["run", str(prog), "--dim", "B=2", "--out", str(notes)], capsys, says="pass --force")
    other = tmp_path / "weights.safetensors"
    write_tensors({"w": torch.ones(2)}, other)  # a safetensors file, but not one tfexec run wrote
    _refused(["run", str(prog), "--dim", "B=2", "--out", str(other)], capsys, says="not a file of outputs")
    assert notes.read_text() == "my notes\n"
    assert main(["run", str(prog), "--dim", "B=2", "--out", str(notes), "--force"]) == 0
    from safetensors.torch import load_file

    assert load_file(str(notes))["output"].shape == (2, 64)


def test_dump_explain_docs_recognise_their_own_outputs(tmp_path: Path, prog: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump, page, ops = tmp_path / "d.safetensors", tmp_path / "p.html", tmp_path / "ops.md"
    for _ in range(2):  # the second run replaces the first's files
        assert main(["dump", str(prog), "--dim", "B=2", "--out", str(dump)]) == 0
        assert main(["explain", str(prog), "--dim", "B=2", "-o", str(page)]) == 0
        assert main(["docs", "ops", "-o", str(ops)]) == 0
    capsys.readouterr()
    out = tmp_path / "out.safetensors"
    assert main(["run", str(prog), "--dim", "B=2", "--out", str(out)]) == 0
    capsys.readouterr()
    _refused(["dump", str(prog), "--dim", "B=2", "--out", str(out)], capsys, says="is not a dump written by tfexec dump")
    (tmp_path / "e.index.json").write_text("{}\n")
    _refused(["dump", str(prog), "--dim", "B=2", "--out", str(tmp_path / "e.safetensors")], capsys, says="e.index.json")
    _refused(["explain", str(prog), "--dim", "B=2", "-o", str(ops)], capsys, says="not a page written by tfexec explain")
    _refused(["docs", "ops", "-o", str(page)], capsys, says="not a page written by tfexec docs")


def test_reduce_replaces_its_own_directory_but_not_a_foreign_program(
    tmp_path: Path, prog: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "reduced"
    argv = ["reduce", str(prog), "--dim", "B=2", "--check", "false {program}", "--no-progress", "--out"]
    assert main([*argv, str(out)]) == 0
    assert main([*argv, str(out)]) == 0
    capsys.readouterr()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "program.tf.py").write_text("# my program\n")
    _refused([*argv, str(mine)], capsys, says="pass --force")
    assert (mine / "program.tf.py").read_text() == "# my program\n"


def test_reduce_says_the_check_printed_nothing(prog: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["reduce", str(prog), "--dim", "B=2", "--check", "true {program}", "--out", str(tmp_path / "r"), "--no-progress"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "it printed nothing" in err and "ends above" not in err


def test_an_interrupted_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "out.safetensors"
    path.write_bytes(b"old")

    class Interrupted(Exception):
        pass

    with pytest.raises(Interrupted), replacing(path) as tmp:
        tmp.write_bytes(b"half a fi")
        raise Interrupted
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out.safetensors"]  # no temporary file left either


def test_a_failing_tensor_write_leaves_the_previous_output(
    tmp_path: Path, prog: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out.safetensors"
    assert main(["run", str(prog), "--dim", "B=2", "--out", str(out)]) == 0
    before = out.read_bytes()
    import tfexec.loading

    def half(tensors: object, path: "str | os.PathLike[str]", metadata: object = None) -> None:
        Path(path).write_bytes(b"\x10\x00")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tfexec.loading, "write_tensors", half)
    _refused(["run", str(prog), "--dim", "B=3", "--out", str(out)], capsys, says="No space left on device")
    assert out.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["P.tf.py", "out.safetensors"]


def test_the_refusal_is_one_line_and_exit_2_from_the_shell(prog: Path) -> None:
    before = prog.read_bytes()
    done = subprocess.run([sys.executable, "-m", "tfexec", "explain", str(prog), "-o", str(prog)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and "is the input" in done.stderr
    assert prog.read_bytes() == before


def test_an_empty_output_name_is_refused(prog: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _refused(["explain", str(prog), "--dim", "B=2", "-o", ""], capsys, says="-o: an empty file name")
    _refused(["run", str(prog), "--dim", "B=2", "--out", " "], capsys, says="--out: an empty file name")


def test_import_refuses_its_model_file_and_an_existing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "model.py"
    model.write_text("import torch\n\ndef make():\n    return torch.nn.Linear(4, 4)\n")
    before = model.read_bytes()
    shape = ["--example-shape", "2,4"]
    _refused(["import", f"{model}:make", *shape, "--out", str(model)], capsys, says="is the input")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    _refused(["import", f"{model}:make", *shape, "--out", str(tmp_path / "taken")], capsys, says="exists")
    assert model.read_bytes() == before and (tmp_path / "taken" / "notes.txt").read_text() == "mine"
    assert main(["import", f"{model}:make", *shape, "--out", str(tmp_path / "new" / "module")]) == 0
    load_module(tmp_path / "new" / "module")
