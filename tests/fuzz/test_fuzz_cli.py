"""``tfexec fuzz`` on the command line: the check protocol (dump, decline, crash), the
corpus it writes, and one-line usage errors (exit 2)."""

import json
import shlex
import sys
from pathlib import Path

import pytest

from tfexec.cli import main

PY = shlex.quote(sys.executable)


def test_a_crashing_check_is_reduced_into_the_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    code = main(["fuzz", "--check", "false {program} {inputs} {dump}", "--count", "3", "--corpus", str(corpus),
                 "--no-progress", "--no-layouts"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "crashes: 3 program(s), 1 signature(s)" in out, out
    assert "verdict: FOUND 0 divergence signature(s), 1 crash signature(s)" in out
    (entry,) = corpus.iterdir()
    record = json.loads((entry / "finding.json").read_text())
    assert record["kind"] == "crash" and record["signature"].startswith("BackendCrash: exit #")
    assert len(record["kept"]) == 1  # every candidate crashes: one node is 1-minimal
    assert (entry / "crash.txt").exists() and (entry / "program.tf.py").exists()
    replay = (entry / "replay.txt").read_text().splitlines()
    assert replay[0].startswith("false ") and str(entry / "program.tf.py") in replay[0]


def test_a_declined_program_is_no_finding_and_nothing_compared_is_no_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = f"{PY} -c 'import sys; print(\"unsupported: everything\"); sys.exit(3)' {{program}} {{inputs}} {{dump}}"
    code = main(["fuzz", "--check", check, "--count", "2", "--corpus", str(tmp_path / "c"), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "backend declined: 2 program(s)" in out and "unsupported: everything" in out
    assert "verdict: NOTHING COMPARED" in out and "FOUND" not in out
    assert not (tmp_path / "c").exists()


def test_a_check_that_writes_no_dump_crashes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fuzz", "--check", "true {program} {inputs} {dump}", "--count", "1", "--corpus", str(tmp_path),
                 "--no-progress", "--no-reduce"])
    out = capsys.readouterr().out
    assert code == 1 and "no dump written" in out, out
    assert "reduced: not reduced (--no-reduce)" in out


@pytest.mark.slow
def test_tfexec_dump_as_the_backend_never_diverges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    check = f"{PY} -m tfexec dump {{program}} --inputs {{inputs}} --out {{dump}}"
    code = main(["fuzz", "--check", check, "--count", "4", "--corpus", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "nothing found in 4 program(s) compared" in out, out


@pytest.mark.parametrize(("argv", "message"), [
    (["--check", "mybackend {inputs} {dump}"], "never mentions {program}"),
    (["--check", "mybackend {program} {inputs}"], "never mentions {dump}"),
    (["--check", "mybackend 'unclosed {program}"], "No closing quotation"),
    (["--check", "x {program} {inputs} {dump}", "--count", "0"], "--count must be at least 1"),
    (["--check", "x {program} {inputs} {dump}", "--seconds", "-5"], "--seconds must be a positive number"),
    (["--check", "x {program} {inputs} {dump}", "--ops", "gelu,gleu"], "unknown op name(s) gleu"),
    (["--check", "x {program} {inputs} {dump}", "--ops", ","], "names no op"),
    (["--check", "x {program} {inputs} {dump}", "--dtypes", "f33"], "unknown dtype 'f33'"),
    (["--check", "x {program} {inputs} {dump}", "--tol", "f32=1e-3"], "--tol expects DTYPE=RTOL,ATOL"),
    (["--check", "no-such-backend-xyz {program} {inputs} {dump}", "--count", "1"], "not found"),
    (["--check", "x {program} {inputs} {dump}", "--max-size", "0"], "--max-size must be at least 1"),
])
def test_bad_arguments_are_one_line_usage_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["fuzz", *argv, "--corpus", str(tmp_path / "c"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("tfexec fuzz: ")


def test_a_corpus_path_that_is_a_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "f"
    file.write_text("")
    code = main(["fuzz", "--check", "x {program} {inputs} {dump}", "--corpus", str(file), "--no-progress"])
    assert code == 2 and "exists and is not a directory" in capsys.readouterr().err
