"""docs/fuzz.md: its Python example runs as written and finds the planted gelu bug; the
options it lists are the command's."""

import re
import runpy
from pathlib import Path

import pytest

from tfexec.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "fuzz.md").read_text(encoding="utf-8")


def test_the_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (block,) = re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)
    script = tmp_path / "example.py"
    script.write_text(block, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script))
    out = capsys.readouterr().out
    assert "DIVERGENCE gelu(" in out and "(1-minimal)" in out
    assert any(p.name.startswith("divergence-gelu-") for p in (tmp_path / "fuzz-corpus").iterdir())


def test_every_option_of_the_command_is_documented() -> None:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    fuzz = action.choices["fuzz"]  # type: ignore[index]
    flags = {s for a in fuzz._actions for s in a.option_strings if s.startswith("--")}
    flags -= {"--help", "--debug", "--no-progress"}
    undocumented = sorted(
        f for f in flags if f not in DOC and f"--[no-]{f.removeprefix('--no-').removeprefix('--')}" not in DOC)
    assert not undocumented
