"""The README's tour and command-line block run as written, and .ci/run runs the README's test command."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.values
def test_tour_python_blocks_run(tmp_path: Path) -> None:
    tour = README[README.index("## A five-minute tour") : README.index("**From the command line.**")]
    blocks = re.findall(r"```python\n(.*?)```", tour, re.DOTALL)
    assert len(blocks) >= 2
    script = tmp_path / "tour.py"
    script.write_text("\n".join(blocks), encoding="utf-8")
    done = subprocess.run([sys.executable, "-W", "ignore", str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "0 mismatch(es)" in done.stdout


def test_ci_runs_the_readme_test_command() -> None:
    marker = README.index("<!-- test-command -->")
    command = README[marker:].split("```bash\n", 1)[1].split("\n", 1)[0]
    assert "pip install torch==2.13.0" in command and "pytest" in command
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "<!-- test-command -->" in ci and "mypy --strict" in ci
    # the second pass: the value tests again on torch's portable kernels (issue #26)
    assert "ATEN_CPU_CAPABILITY=default .venv/bin/python -m pytest -m 'values and not slow'" in ci
    assert '"values: prints or stores float values' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_both_readme_commands_pin_the_torch_on_disk() -> None:
    commands = [line for line in README.splitlines() if line.startswith("python3 -m venv")]
    assert len(commands) == 2 and all("torch==2.13.0" in c for c in commands)


def _cli_section() -> str:
    return README[README.index("**From the command line.**") : README.index("## The public API at a glance")]


@pytest.mark.values
def test_cli_commands_run_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command of the README's command-line block, run in a fresh directory (the inputs
    file written first by the block above it), exits as its comment says (0 unless `exit N`)."""
    from tfexec.cli import main

    section = _cli_section()
    (snippet,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    (commands,) = re.findall(r"```bash\n(.*?)```", section, re.DOTALL)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "write_inputs.py").write_text(snippet, encoding="utf-8")
    done = subprocess.run([sys.executable, "-W", "ignore", "write_inputs.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    monkeypatch.chdir(tmp_path)
    lines = [line for line in commands.splitlines() if line.strip()]
    assert len(lines) >= 8
    for line in lines:
        command, _, comment = line.partition("#")
        argv = shlex.split(command)
        assert argv[0] == "tfexec", line
        wanted = re.search(r"exit (\d)", comment)
        code = main(argv[1:])
        captured = capsys.readouterr()
        assert code == (int(wanted.group(1)) if wanted else 0), f"{line}\n{captured.err}"
        if "dims: B=3" in comment:
            assert captured.out.startswith("dims: B=3\n"), captured.out


def test_readme_links_the_text_form_reference() -> None:
    assert README.count("(docs/text-form.md)") >= 2
    assert (ROOT / "docs" / "text-form.md").is_file()


def test_the_tour_takes_the_entry_in_one_step() -> None:
    tour = README[README.index("## A five-minute tour") : README.index("**From the command line.**")]
    assert "layer = module.entry_function" in tour
