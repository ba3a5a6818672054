"""The README's tour runs as written, and .ci/run runs the README's test command."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_tour_python_blocks_run(tmp_path: Path) -> None:
    tour = README[README.index("## A five-minute tour") : README.index("**From the command line**")]
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


def test_both_readme_commands_pin_the_torch_on_disk() -> None:
    commands = [line for line in README.splitlines() if line.startswith("python3 -m venv")]
    assert len(commands) == 2 and all("torch==2.13.0" in c for c in commands)
