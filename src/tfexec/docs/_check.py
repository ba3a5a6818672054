"""Regenerating the committed docs, and checking that they are current and complete."""

import difflib
from collections.abc import Callable
from pathlib import Path

from tfexec.compare import text_mismatch
from tfexec.docs._coverage import CLAUSES_FILE, CoverageError, check_quotes, coverage, load_clauses, render_coverage
from tfexec.docs._opref import DocsError, render_ops
from tfexec.docs._textform import PAGE as TEXT_FORM_PAGE, TextFormError, refresh as refresh_text_form

DOCS: dict[str, Path] = {
    "ops": Path("docs/ops.md"), "coverage": Path("docs/spec-coverage.md"), "text-form": TEXT_FORM_PAGE,
}
"""The generated or checked pages, relative to the repository root. ``text-form`` is written by
hand; generation recomputes the output of its examples."""
MAX_DIFF_LINES = 120


class NoCheckout(Exception):
    """No tfexec checkout to generate the docs of (a usage error: pass ``--root``)."""


def find_root(explicit: Path | None = None) -> Path:
    """The checkout whose docs to generate: ``explicit``, else the nearest directory above the
    working directory holding ``docs/spec_clauses.toml``, else the one this package lives in."""
    if explicit is not None:
        if not (explicit / CLAUSES_FILE).is_file():
            raise NoCheckout(f"{explicit}: not a tfexec checkout (no {CLAUSES_FILE})")
        return explicit
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents, Path(__file__).resolve().parents[3]):
        if (candidate / CLAUSES_FILE).is_file():
            return candidate
    raise NoCheckout(f"no tfexec checkout (a directory with {CLAUSES_FILE}) here or above; pass --root")


def generate(root: Path) -> dict[str, str]:
    """Every page, freshly generated, keyed as ``DOCS`` is (a ``TextFormError`` when the
    text-form reference is missing or one of its examples fails)."""

    def text_form() -> str:
        path = root / TEXT_FORM_PAGE
        if not path.is_file():
            raise TextFormError(f"{TEXT_FORM_PAGE} is missing (it is written by hand; restore it from git)")
        return refresh_text_form(path.read_text(encoding="utf-8"))

    makers: dict[str, Callable[[], str]] = {
        "ops": render_ops,
        "coverage": lambda: render_coverage(coverage(root)),
        "text-form": text_form,
    }
    return {name: make() for name, make in makers.items()}


def _diff(path: Path, committed: str, fresh: str) -> str:
    lines = list(difflib.unified_diff(
        committed.splitlines(), fresh.splitlines(), f"{path} (committed)", f"{path} (generated now)", lineterm=""
    ))
    if len(lines) > MAX_DIFF_LINES:
        lines = lines[:MAX_DIFF_LINES] + [f"... ({len(lines) - MAX_DIFF_LINES} more diff lines)"]
    return "\n".join(lines)


def check(root: Path) -> list[str]:
    """Every reason the docs of ``root`` are not in order: a stale or missing page (with a
    diff), a coverage gap or bad marker, a clause quote the spec (when present) lacks. A page
    is current when its words are the generated ones and its example values agree within
    f32's tolerance (``text_mismatch``): the digits are the kernels of the machine that wrote it."""
    problems: list[str] = []
    try:
        pages = generate(root)
    except (DocsError, CoverageError, TextFormError) as exc:
        return [str(exc)]
    for name, text in pages.items():
        path = root / DOCS[name]
        if not path.is_file():
            problems.append(f"{DOCS[name]} is missing: run `python -m tfexec.docs --write`")
            continue
        committed = path.read_text(encoding="utf-8")
        if committed != text and text_mismatch(committed, text) is not None:
            problems.append(
                f"{DOCS[name]} is stale: run `python -m tfexec.docs --write` and commit it\n"
                + _diff(DOCS[name], committed, text)
            )
    problems += list(coverage(root).problems)
    clauses = load_clauses(root / CLAUSES_FILE)
    if clauses.spec is not None and (root / clauses.spec).is_file():
        problems += check_quotes(clauses, (root / clauses.spec).read_text(encoding="utf-8"))
    return problems


def write(root: Path) -> list[Path]:
    """Regenerate every page under ``root``; returns the paths written."""
    pages = generate(root)
    written = []
    for name, text in pages.items():
        path = root / DOCS[name]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
