"""docs/dump-format.md and docs/reduce.md: their Python examples run as written (one
interpreter for both, to pay torch's import once), and they state what the code does."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tfexec.compare import DEFAULT_TOLERANCES, FORMAT, VERSION

ROOT = Path(__file__).resolve().parent.parent
DUMP = (ROOT / "docs" / "dump-format.md").read_text(encoding="utf-8")
REDUCE = (ROOT / "docs" / "reduce.md").read_text(encoding="utf-8")
MARK = "print('--- docs/reduce.md ---')\n"

pytestmark = pytest.mark.values  # the pages' examples print values


def test_the_python_examples_run(tmp_path: Path) -> None:
    dump = re.findall(r"```python\n(.*?)```", DUMP, re.DOTALL)
    reduce = re.findall(r"```python\n(.*?)```", REDUCE, re.DOTALL)
    assert len(dump) >= 2 and len(reduce) == 1
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    script = tmp_path / "docs.py"
    script.write_text("\n".join(dump) + "\n" + MARK + reduce[0], encoding="utf-8")
    done = subprocess.run([sys.executable, "-W", "ignore", str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.split(MARK.split("'")[1])
    assert "first divergence at mlp/a (silu, examples/mlp.tf.py:6:9)" in first
    assert "kept 1 of 57 node(s)" in second and "probs = softmax(masked)" in second
    assert (tmp_path / "repro" / "program.tf.py").is_file() and (tmp_path / "ours.index.json").is_file()


def test_the_dump_format_states_the_code_s_version_and_tolerances() -> None:
    assert f"# The dump format (version {VERSION})" in DUMP and f'`"{FORMAT}"`' in DUMP
    stated = {m[0]: (float(m[1]), float(m[2])) for m in re.findall(r"\| `(\w+)` \| ([\d.e-]+) \| ([\d.e-]+) \|", DUMP)}
    assert stated == {d.short: (t.rtol, t.atol) for d, t in DEFAULT_TOLERANCES.items()}
    assert "| integers and `b1` | exact | exact |" in DUMP
