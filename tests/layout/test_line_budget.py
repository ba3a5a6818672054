"""A line budget (tinygrad keeps one in CI): src/tfexec, and each of its packages, may not grow
past the numbers below by more than ``MARGIN`` unless the same commit changes the number —
so growth is always a decision someone made, in the diff where a reviewer sees it.

Counted: non-blank lines of the source files (``.py``, and the explorer page's ``.js``,
``.css``, ``.html``), docstrings and comments included — they are what a reader reads.
To update: run this file; a failure prints every package's count; copy the numbers you
decide to keep into ``BUDGET`` (one line each).
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "src" / "tfexec"
SUFFIXES = (".py", ".js", ".css", ".html")
MARGIN = 0.02
"""How far a count may pass its budget before the budget must change: 2%."""

TOP_LEVEL = "(modules directly under tfexec/)"
TOTAL = "(all of src/tfexec)"

BUDGET: dict[str, int] = {
    TOTAL: 29810,
    TOP_LEVEL: 913,
    "cli": 1396,
    "compare": 796,
    "docs": 1366,
    "evaluator": 339,
    "explain": 1983,
    "forward": 976,
    "frontends": 3686,
    "fuzz": 703,
    "ir": 4967,
    "loading": 1180,
    "mesh": 2633,
    "reduce": 1021,
    "semantics": 2416,
    "testing": 2148,
    "text": 1947,
    "validate": 1340,
}
"""Non-blank source lines per package, as of round 3's merge (issues #26-#33: the fuzzer, the
import's mutation and refusal rules, the mesh's stall check and signed records, the route
contract and the validator's runtime model); change a number in the commit that needs it."""


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def counts() -> dict[str, int]:
    """Non-blank source lines: the total, the top-level modules, and each package."""
    out = {TOTAL: 0, TOP_LEVEL: 0}
    for path in sorted(ROOT.rglob("*")):
        if path.suffix not in SUFFIXES or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(ROOT)
        key = TOP_LEVEL if len(rel.parts) == 1 else rel.parts[0]
        n = _lines(path)
        out[key] = out.get(key, 0) + n
        out[TOTAL] += n
    return out


def test_every_package_has_a_budget() -> None:
    assert set(counts()) == set(BUDGET), "a package was added or removed: give it a line in BUDGET (or drop its line)"


def test_no_package_grows_past_its_budget() -> None:
    now = counts()
    over = {k: f"{now[k]} lines, budget {b} (+{MARGIN:.0%})" for k, b in BUDGET.items() if now.get(k, 0) > b * (1 + MARGIN)}
    table = "\n".join(f"    {k!r}: {n}," for k, n in sorted(now.items()))
    assert over == {}, f"over budget: {over}\nthe counts now (copy those you decide to keep into BUDGET):\n{table}"
