"""proofs_notes/ stays tied to the code: every ``Checked by:`` / ``Demonstrated by:`` entry
names a test that exists, every lemma has a ``Checked by:`` line, a ``Checked by:`` test is
not an expected failure, and the worked example's listings are what the code produces."""

import ast
import re
from functools import cache
from pathlib import Path

import pytest

import tfexec
from proofs.programs import listing, schedule_listing, tiled_matmul

ROOT = Path(__file__).resolve().parent.parent
NOTES = ROOT / "proofs_notes"
_NODE_ID = re.compile(r"`(tests/[^`:]+\.py(?:::[A-Za-z_][A-Za-z0-9_]*)+(?:\[[^`\]]*\])?)`")
_LABELS = ("Checked by:", "Demonstrated by:")


def _notes() -> list[Path]:
    return sorted(NOTES.glob("*.md"))


def _paragraph_after(lines: list[str], start: int) -> str:
    """The line at ``start`` and the lines after it up to a blank line or a heading."""
    out = [lines[start]]
    for line in lines[start + 1:]:
        if not line.strip() or line.startswith("#"):
            break
        out.append(line)
    return "\n".join(out)


def _citations(path: Path) -> list[tuple[str, int, str]]:
    """``(label, line number, node id)`` for every id cited under a label in ``path``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[tuple[str, int, str]] = []
    for i, line in enumerate(lines):
        for label in _LABELS:
            if line.startswith(label):
                ids = _NODE_ID.findall(_paragraph_after(lines, i))
                assert ids, f"{path.name}:{i + 1}: '{label}' names no test (write `tests/...py::test_name`)"
                found.extend((label, i + 1, node_id) for node_id in ids)
    return found


@cache
def _tests_in(path: Path) -> dict[str, bool]:
    """The test functions of a file (``Class::name`` for methods) → whether marked xfail."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, bool] = {}

    def xfail(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        return any("xfail" in ast.unparse(d) for d in node.decorator_list)

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = xfail(node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}::{item.name}"] = xfail(item)
    return out


def _resolve(node_id: str) -> tuple[bool, bool, str]:
    """Whether ``node_id`` names an existing test function, whether it is an xfail, and why not."""
    file_part, _, name = node_id.partition("::")
    name = re.sub(r"\[.*\]$", "", name)
    path = ROOT / file_part
    if not path.is_file():
        return False, False, f"no file {file_part}"
    tests = _tests_in(path)
    if name not in tests:
        return False, False, f"{file_part} defines no {name}"
    if not name.rsplit("::", 1)[-1].startswith("test"):
        return False, False, f"{name} is not a test function"
    return True, tests[name], ""


def test_the_notes_exist_and_the_readme_links_every_page() -> None:
    pages = {p.name for p in _notes()}
    assert {"README.md", "lemmas.md", "divergences.md", "worked_example.md"} <= pages
    readme = (NOTES / "README.md").read_text(encoding="utf-8")
    for page in pages - {"README.md"}:
        assert f"]({page})" in readme, f"README.md does not link {page}"


@pytest.mark.parametrize("page", [p.name for p in _notes()])
def test_every_cited_test_exists(page: str) -> None:
    problems = []
    for label, line, node_id in _citations(NOTES / page):
        ok, is_xfail, why = _resolve(node_id)
        if not ok:
            problems.append(f"{page}:{line}: {node_id}: {why}")
        elif label == "Checked by:" and is_xfail:
            problems.append(f"{page}:{line}: {node_id} is an expected failure; cite it under 'Demonstrated by:'")
    assert not problems, "\n".join(problems)


def _headings(lines: list[str]) -> list[bool]:
    """For each line, whether it is a Markdown heading (a ``#`` line outside a fenced block)."""
    out: list[bool] = []
    fenced = False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        out.append(not fenced and line.startswith("#"))
    return out


def _sections(text: str, heading: re.Pattern[str]) -> list[tuple[str, str]]:
    """``(title, body)`` of each section whose heading matches, up to the next heading."""
    lines = text.splitlines()
    is_heading = _headings(lines)
    out: list[tuple[str, str]] = []
    for i, line in enumerate(lines):
        if is_heading[i] and heading.match(line):
            end = next((j for j in range(i + 1, len(lines)) if is_heading[j]), len(lines))
            out.append((line, "\n".join(lines[i + 1:end])))
    return out


def test_every_lemma_has_a_checked_by_line() -> None:
    lemmas = []
    for page in _notes():
        lemmas += _sections(page.read_text(encoding="utf-8"), re.compile(r"^#{2,4} Lemma\b"))
    assert len(lemmas) >= 12
    missing = [title for title, body in lemmas if not any(line.startswith("Checked by:") for line in body.splitlines())]
    assert not missing, f"lemmas without a 'Checked by:' line: {missing}"


def test_every_divergence_is_demonstrated() -> None:
    text = (NOTES / "divergences.md").read_text(encoding="utf-8")
    divergences = _sections(text, re.compile(r"^#{2,4} D\d+\b"))
    assert divergences
    for title, body in divergences:
        assert "Demonstrated by:" in body, f"{title} names no demonstrating test"


def _block(text: str, name: str) -> str:
    match = re.search(rf"<!-- begin {re.escape(name)} -->\n```text\n(.*?)\n```\n<!-- end ", text, re.DOTALL)
    assert match is not None, f"no fenced block marked '{name}'"
    return match.group(1)


def test_worked_example_listings_are_what_the_code_produces() -> None:
    text = (NOTES / "worked_example.md").read_text(encoding="utf-8")
    fn = tiled_matmul(32)
    assert _block(text, "schedule: tiled_matmul(32)") == schedule_listing(fn)
    assert _block(text, "listing: tiled_matmul(32)") == listing(tfexec.lower(fn))


def test_the_checker_refuses_what_it_should() -> None:
    assert _resolve("tests/test_proofs_notes.py::test_every_cited_test_exists")[0]
    assert _resolve("tests/proofs/test_lemmas.py::test_runtime_errors_are_identical_on_every_reading[missing-handler]")[0]
    assert not _resolve("tests/test_proofs_notes.py::test_no_such_test")[0]
    assert not _resolve("tests/no_such_file.py::test_x")[0]
    assert _resolve("tests/test_proofs_notes.py::test_an_expected_failure_the_checker_must_see")[1]
    assert not _resolve("tests/proofs/test_divergences.py::test_value_rule_result_outside_the_ir_is_refused_alike")[1]
    lines = ["### Lemma 99 (made up)", "", "Checked by: `tests/x.py::test_y`", "", "### Lemma 100", "```", "# code", "```",
             "Checked by: `tests/x.py::test_z`", "### Lemma 101", "no line"]
    sections = _sections("\n".join(lines), re.compile(r"^#{2,4} Lemma\b"))
    assert [any(b.startswith("Checked by:") for b in body.splitlines()) for _, body in sections] == [True, True, False]


@pytest.mark.xfail(strict=True, reason="an expected failure, so the checker has one to recognise")
def test_an_expected_failure_the_checker_must_see() -> None:
    assert False
