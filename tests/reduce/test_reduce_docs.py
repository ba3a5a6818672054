"""docs/reduce.md: its Python example runs as written."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "reduce.md").read_text(encoding="utf-8")


def test_the_python_example_runs(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)
    assert len(blocks) == 1
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    script = tmp_path / "doc.py"
    script.write_text(blocks[0], encoding="utf-8")
    done = subprocess.run([sys.executable, "-W", "ignore", str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "kept 1 of 57 node(s)" in done.stdout and "probs = softmax(masked)" in done.stdout
    assert (tmp_path / "repro" / "program.tf.py").is_file()
