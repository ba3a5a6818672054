"""``import tfexec`` loads no distributed, frontend or explorer machinery until it is used
(issue #32: every command-line call pays the import). Each check runs in a fresh process,
since this test process has long imported everything."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MLP = str(ROOT / "examples" / "mlp.tf.py")

HEAVY = ("torch.distributed.tensor", "sympy", "tfexec.mesh", "tfexec.frontends", "tfexec.explain",
         "tfexec.reduce", "tfexec.compare")
"""Modules ``import tfexec`` must not load (sympy: unless torch itself does)."""


def _loaded_after(code: str) -> dict[str, bool]:
    """Which of ``HEAVY`` a fresh Python has loaded after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r}}}))"
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", probe], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    loaded: dict[str, bool] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_import_tfexec_loads_no_distributed_frontend_or_explorer_machinery() -> None:
    torch_alone = _loaded_after("import torch")
    loaded = _loaded_after("import tfexec")
    expected = {m: torch_alone[m] for m in HEAVY}  # what torch loads by itself is not ours to avoid
    assert loaded == expected


def test_the_run_command_loads_only_its_own_machinery() -> None:
    torch_alone = _loaded_after("import torch")
    code = ("import contextlib, io\nfrom tfexec.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main(['run', {MLP!r}, '--dim', 'B=2']) == 0")
    assert _loaded_after(code) == {m: torch_alone[m] for m in HEAVY}


@pytest.mark.parametrize(("code", "module"), [
    ("tfexec.evaluate_mesh", "tfexec.mesh"),
    ("tfexec.explain", "tfexec.explain"),
    ("tfexec.reduce_failing", "tfexec.reduce"),
    ("tfexec.Reduced", "tfexec.reduce"),
    ("tfexec.compare_tables", "tfexec.compare"),
])
def test_a_lazy_name_imports_its_module_on_first_use(code: str, module: str) -> None:
    assert _loaded_after(f"import tfexec\n{code}")[module] is True


def test_lazy_names_are_the_real_objects_and_survive_a_submodule_import() -> None:
    import tfexec
    import tfexec.explain.page
    from tfexec.compare import compare_tables
    from tfexec.explain.page import explain
    from tfexec.mesh import evaluate_mesh
    from tfexec.reduce import Reduced, reduce_failing

    # importing the package tfexec.explain does not replace the function tfexec.explain
    assert tfexec.explain is explain and callable(tfexec.explain)
    assert (tfexec.evaluate_mesh, tfexec.Reduced, tfexec.reduce_failing, tfexec.compare_tables) == (
        evaluate_mesh, Reduced, reduce_failing, compare_tables)
    assert {"explain", "evaluate_mesh", "Reduced", "reduce_failing", "compare_tables"} <= set(dir(tfexec))
    assert set(tfexec.__all__) <= set(dir(tfexec))
    with pytest.raises(AttributeError, match="has no attribute 'evaluate_mesher'"):
        getattr(tfexec, "evaluate_mesher")


def test_every_public_name_resolves() -> None:
    import tfexec

    missing = [name for name in tfexec.__all__ if getattr(tfexec, name, None) is None]
    assert missing == []
