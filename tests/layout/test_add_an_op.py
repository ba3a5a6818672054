"""The README's "Add an op", walked through for a catalogue op: on a copy of the checkout,
``softshrink`` is added by editing the two files the checklist names (its class, builder and
reference in ir/ops/activation.py; its value rule in semantics/rules/activation.py); the docs
check then asks for the regenerated page, and the tests that cover every op of the catalogue
(no list of ops among them) run for it and pass. The user-op half of the walk-through is the
README's ``Clip``, run by tests/test_user_ops.py."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

OP_CLASS = '''

@dataclass(frozen=True, slots=True)
class Softshrink(ActivationOp):
    """Elementwise soft shrinkage: ``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    Example: def example(x: f32[2, 3]): return softshrink(x, lambd=0.75)
    """

    name: ClassVar[str] = "softshrink"
    reference: ClassVar[Reference] = F.softshrink
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    lambd: float = 0.5

    def __post_init__(self) -> None:
        _finite("softshrink", "lambd", self.lambd)
        if self.lambd < 0:
            raise TypeError(f"softshrink lambd must not be negative, got {self.lambd!r}")


ACTIVATION_OPS = (*ACTIVATION_OPS, Softshrink)  # (by hand: add it to the tuple above)


def softshrink(x: ExprLike, *, lambd: float = 0.5, span: Span | None = None) -> Call:
    """``F.softshrink(x, lambd)``; floating input only."""
    return apply(Softshrink(lambd), x, span=span)
'''

VALUE_RULE = '''

@value_rule(act.Softshrink)
def _softshrink(op: act.Softshrink, args: tuple[Arg, ...]) -> Kernel:
    lambd = float(op.lambd)
    return _kernel(op, lambda x: F.softshrink(x, lambd=lambd))
'''

CATALOGUE_TESTS = [
    "tests/ir/test_builders.py",  # the builder, named as the op, beside its class
    "tests/ir/test_ops_rounding_math_activation_integer.py",  # the type rule against the reference, every dtype
    "tests/evaluator/test_value_rules_reference.py",  # the value rule against the reference, both routes
    "tests/text/test_text_roundtrip.py",  # the examples through the text form, both routes
]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(cwd / "src"), "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run([sys.executable, "-W", "ignore", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_a_catalogue_op_is_two_files_and_a_regenerated_page(tmp_path: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache")
    for part in ("src", "tests", "docs"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")

    # the checklist: two files
    _append(tmp_path / "src/tfexec/ir/ops/activation.py", OP_CLASS)
    _append(tmp_path / "src/tfexec/semantics/rules/activation.py", VALUE_RULE)

    stale = _run(["-m", "tfexec.docs", "--check"], tmp_path)
    assert stale.returncode == 1 and "softshrink" in stale.stdout + stale.stderr
    written = _run(["-m", "tfexec.docs", "--write"], tmp_path)
    assert written.returncode == 0, written.stderr
    assert "### `softshrink`" in (tmp_path / "docs/ops.md").read_text(encoding="utf-8")

    tests = _run(["-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider", "-k", "softshrink", *CATALOGUE_TESTS],
                 tmp_path)
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
    summary = tests.stdout.strip().splitlines()[-1]  # "9 passed, 2215 deselected in 20.1s"
    assert int(summary.split(" passed")[0]) >= 6, summary  # builder (2), type rule (3 shapes), value rule, round trip
