"""docs/tutorial.md runs as written: its programs are written to files, its console blocks
are run (each ``$ tfexec ...`` line through the command's ``main``) and their output must
contain the lines the tutorial shows, in order (``...`` stands for any text), and its
Python blocks run in order in one namespace. Everything runs in a scratch folder holding
the checkout's ``examples/``."""

import contextlib
import io
import os
import re
import shlex
from pathlib import Path

import pytest

from tfexec.cli import main
from tfexec.compare import text_mismatch

from explain_programs import ROOT

pytestmark = pytest.mark.values  # the tutorial shows the values its commands print

TUTORIAL = ROOT / "docs" / "tutorial.md"
_FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)


def _blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _FENCE.finditer(TUTORIAL.read_text(encoding="utf-8"))]


def _run(command: str) -> tuple[int, str]:
    argv = shlex.split(command)
    assert argv[0] == "tfexec", command
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv[1:])
    return code, out.getvalue() + err.getvalue()


def _expect(shown: list[str], output: str, command: str) -> None:
    """Each shown line is an output line, in order: its words equal, its numbers within f32's
    tolerance (the tutorial's digits are one machine's kernels'), ``...`` any text."""
    got = output.splitlines()
    at = 0
    for line in shown:
        while at < len(got) and text_mismatch(line.rstrip(), got[at].rstrip(), wildcard="...") is not None:
            at += 1
        assert at < len(got), f"{command}: the tutorial shows\n  {line}\nwhich is not in the output:\n{output}"
        at += 1


def test_every_snippet_of_the_tutorial_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "tutorial"}
    counts = {"file": 0, "console": 0, "python": 0}
    for kind, text in _blocks():
        first = text.split("\n", 1)[0]
        if kind == "python" and re.fullmatch(r"# [\w.]+\.tf\.py", first):
            (tmp_path / first[2:]).write_text(text.split("\n", 1)[1], encoding="utf-8")
            counts["file"] += 1
        elif kind == "python":
            exec(compile(text, str(TUTORIAL), "exec"), namespace)  # noqa: S102 - the tutorial's own code
            counts["python"] += 1
        elif kind == "console":
            code = 0
            lines = text.splitlines()
            starts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
            for n, i in enumerate(starts):
                command = lines[i][2:]
                shown = lines[i + 1 : starts[n + 1] if n + 1 < len(starts) else len(lines)]
                if command == "echo $?":
                    assert shown == [str(code)], f"exit status {code}, the tutorial shows {shown}"
                    continue
                code, output = _run(command)
                if not any(line.strip() == "$ echo $?" for line in lines[i + 1 :]):
                    assert code == 0, f"{command} exited {code}:\n{output}"
                _expect(shown, output, command)
            counts["console"] += 1
    assert counts == {"file": 4, "console": 10, "python": 4}, counts
    for page in ("scale", "shared", "calls", "tiled", "flash", "plain", "overrun", "llama_block"):
        assert (tmp_path / f"{page}.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
