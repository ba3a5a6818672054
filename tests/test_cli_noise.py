"""What a newcomer reads when something is wrong (issue #29 D): one line that says what is wrong
where, not a library's text: a data-dependent branch at the model's line, a directory said to be
a directory, the look-alike character of a homoglyph name, what a non-safetensors file is not,
and "an int"."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tfexec.cli import main
from tfexec.wording import a, article, did_you_mean

ROOT = Path(__file__).resolve().parent.parent
MLP = str(ROOT / "examples" / "mlp.tf.py")

BRANCHING_MODEL = '''import torch


class Gate(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        if y.sum() > 0:
            return y + 1
        return y - 1


def make():
    return Gate()
'''


def _tfexec(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"}
    env["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run([sys.executable, "-m", "tfexec", *argv], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env=env)


@pytest.mark.parametrize("command", [
    ["check", "gate.py:make", "--against", "torch", "--example-shape", "3,4"],
    ["import", "gate.py:make", "--example-shape", "3,4", "--out", "gate_module"],
])
def test_a_data_dependent_branch_is_one_line_at_the_models_if(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "gate.py").write_text(BRANCHING_MODEL)
    done = _tfexec(*command, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr  # no FX graph, no torch traceback
    assert "gate.py:7: `if y.sum() > 0:` branches on a tensor's value" in done.stderr
    assert "def forward" not in done.stderr and "GuardOnDataDependentSymNode" not in done.stderr
    assert not (tmp_path / "gate_module").exists()


def test_debug_still_shows_torchs_text(tmp_path: Path) -> None:
    (tmp_path / "gate.py").write_text(BRANCHING_MODEL)
    done = _tfexec("--debug", "check", "gate.py:make", "--against", "torch", "--example-shape", "3,4", cwd=tmp_path)
    assert done.returncode == 1 and "GuardOnDataDependentSymNode" in done.stderr and "Traceback" in done.stderr


def test_diff_of_a_directory_says_it_is_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(tmp_path), str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}: is a directory" in err and "no such file" not in err


def test_a_homoglyph_op_name_names_the_character(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prog = tmp_path / "h.tf.py"
    prog.write_text("@entry\ndef f(x: f32[4]) -> f32[4]:\n    return softm\u0430x(x, axis=0)\n", encoding="utf-8")
    assert main(["run", str(prog)]) == 2
    err = capsys.readouterr().err
    assert "did you mean softmax?" in err
    assert "'\u0430' (U+0430 CYRILLIC SMALL LETTER A) in 'softm\u0430x' is not ASCII" in err
    assert main(["ops", "softm\u0430x"]) == 2
    assert "U+0430 CYRILLIC SMALL LETTER A" in capsys.readouterr().err


def test_did_you_mean_is_plain_for_ascii_names() -> None:
    assert did_you_mean("sofmax", ["softmax", "sort"]) == "; did you mean softmax?"
    assert did_you_mean("zzz", ["softmax"]) == ""
    assert did_you_mean("\u00e9t\u00e9", ["softmax"]) == " ('\u00e9' (U+00E9 LATIN SMALL LETTER E WITH ACUTE) in '\u00e9t\u00e9' is not ASCII)"


@pytest.mark.parametrize(("content", "says"), [
    (b"some notes, not tensors\n", "notes.txt is not a safetensors file (its first 8 bytes give a header of"),
    (b"", "notes.txt is not a safetensors file (it is empty)"),
    (b"abc", "notes.txt is not a safetensors file (it has only 3 byte(s)"),
    (b"\x04\x00\x00\x00\x00\x00\x00\x00[1] ", "notes.txt is not a safetensors file (its header is a JSON list, not an object)"),
])
def test_an_inputs_file_that_is_not_safetensors(
    tmp_path: Path, content: bytes, says: str, capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    assert main(["run", MLP, "--inputs", str(path)]) == 2
    err = capsys.readouterr().err
    assert says.replace("notes.txt", str(path)) in err, err
    assert "header too large" not in err and "os error" not in err
    assert main(["diff", str(path), str(path)]) == 2
    assert says.replace("notes.txt", str(path)) in capsys.readouterr().err


def test_a_device_given_as_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", MLP, "--inputs", os.devnull]) == 2
    err = capsys.readouterr().err
    assert f"{os.devnull} is not a safetensors file (it is not a regular file" in err and "os error" not in err


@pytest.mark.parametrize(("word", "said"), [
    ("int", "an int"), ("str", "a str"), ("tuple", "a tuple"), ("8-tuple", "an 8-tuple"), ("2-tuple", "a 2-tuple"),
    ("11-tuple", "an 11-tuple"), ("f32", "an f32"), ("i64[2]", "an i64[2]"), ("u8", "a u8"), ("bf16", "a bf16"),
    ("uint8", "a uint8"), ("object", "an object"), ("NoneType", "a NoneType"), ("", "a "),
])
def test_the_article_of_a_generated_word(word: str, said: str) -> None:
    assert a(word) == said
    assert article(word) == said.split(" ")[0]
