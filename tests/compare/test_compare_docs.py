"""docs/dump-format.md: its Python examples run as written, and it states what the code does."""

import re
import subprocess
import sys
from pathlib import Path

from tfexec.compare import DEFAULT_TOLERANCES, FORMAT, VERSION

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "dump-format.md").read_text(encoding="utf-8")


def test_the_python_examples_run(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)
    assert len(blocks) >= 2
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    script = tmp_path / "doc.py"
    script.write_text("\n".join(blocks), encoding="utf-8")
    done = subprocess.run([sys.executable, "-W", "ignore", str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "first divergence at mlp/a (silu, examples/mlp.tf.py:6:9)" in done.stdout


def test_the_stated_version_format_and_tolerances_are_the_code_s() -> None:
    assert f"# The dump format (version {VERSION})" in DOC and f'`"{FORMAT}"`' in DOC
    stated = {m[0]: (float(m[1]), float(m[2])) for m in re.findall(r"\| `(\w+)` \| ([\d.e-]+) \| ([\d.e-]+) \|", DOC)}
    assert stated == {d.short: (t.rtol, t.atol) for d, t in DEFAULT_TOLERANCES.items()}
    assert "| integers and `b1` | exact | exact |" in DOC
