"""The spec traceability matrix: evaluator-spec clauses → the tests that check them, and
proofs_notes lemmas → the tests their ``Checked by:`` lines name.

Nothing here imports or runs a test: test files are read with ``ast``. A test checks a
clause when it carries ``@pytest.mark.spec("<clause id>", ...)`` (or its module sets
``pytestmark`` to such a marker). A clause none of whose tests can pass (every one an
expected failure or skipped) is a gap, as is a clause with no test at all.
"""

import ast
import re
import textwrap
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

CLAUSES_FILE = Path("docs/spec_clauses.toml")
SPEC_TESTS = Path("tests/spec")
NOTES = Path("proofs_notes")
_CLAUSE_ID = re.compile(r"^s\d+\.[a-z0-9]+(?:-[a-z0-9]+)*$")
_NAMED_SPEC_TEST = re.compile(r"^test_s(\d+)_")
_NODE_ID = re.compile(r"`(tests/[^`:]+\.py(?:::[A-Za-z_][A-Za-z0-9_]*)+(?:\[[^`\]]*\])?)`")


@dataclass(frozen=True, slots=True)
class Clause:
    """One requirement of the spec: ``id`` (``s2.dimvar-agree``), its section key, the spec's words."""

    id: str
    section: str
    quote: str


@dataclass(frozen=True, slots=True)
class ClauseList:
    """The clause file: the spec's title, where the spec may be found, the sections and clauses."""

    title: str
    spec: str | None
    sections: dict[str, str]
    clauses: tuple[Clause, ...]


@dataclass(frozen=True, slots=True)
class SpecTest:
    """A test function and the clauses its markers name."""

    node_id: str
    clauses: tuple[str, ...]
    slow: bool = False
    disabled: str | None = None
    """``xfail`` or ``skip`` when the test cannot count as checking anything."""


@dataclass(frozen=True, slots=True)
class Lemma:
    """A lemma of proofs_notes: its heading, page, cited tests, and the cited tests that do not exist."""

    title: str
    page: str
    tests: tuple[str, ...]
    missing: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Coverage:
    """The matrix, and every problem that makes the check fail (``problems``)."""

    clauses: ClauseList
    tests: tuple[SpecTest, ...]
    lemmas: tuple[Lemma, ...]
    problems: tuple[str, ...] = field(default=())

    def tests_of(self, clause_id: str) -> tuple[SpecTest, ...]:
        """The tests that carry a marker for ``clause_id``, in file order."""
        return tuple(t for t in self.tests if clause_id in t.clauses)

    def gaps(self) -> tuple[Clause, ...]:
        """Clauses no enabled test checks."""
        return tuple(c for c in self.clauses.clauses if not any(t.disabled is None for t in self.tests_of(c.id)))

    def lemma_gaps(self) -> tuple[Lemma, ...]:
        """Lemmas without an existing ``Checked by:`` test."""
        return tuple(lemma for lemma in self.lemmas if not lemma.tests or lemma.missing)

    def unmarked(self) -> tuple[SpecTest, ...]:
        """Tests of tests/spec/ tied to no clause."""
        return tuple(t for t in self.tests if not t.clauses)


class CoverageError(Exception):
    """The clause file cannot be read (missing, not TOML, or malformed)."""


# -- the clause file ---------------------------------------------------------------------------


def load_clauses(path: Path) -> ClauseList:
    """Read and validate the clause file (ids unique and well-formed, sections known)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise CoverageError(f"{path}: cannot read the clause list: {exc}") from None
    sections = data.get("sections")
    raw = data.get("clause")
    if not isinstance(sections, dict) or not all(isinstance(v, str) for v in sections.values()):
        raise CoverageError(f"{path}: expected a [sections] table of key = \"title\"")
    if not isinstance(raw, list) or not raw:
        raise CoverageError(f"{path}: expected [[clause]] entries")
    problems: list[str] = []
    clauses: list[Clause] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        cid, section, quote = entry.get("id"), entry.get("section"), entry.get("quote")
        where = f"{path}: clause {i + 1} ({cid!r})"
        if not (isinstance(cid, str) and isinstance(section, str) and isinstance(quote, str) and quote.strip()):
            problems.append(f"{where}: needs string id, section and quote")
            continue
        if not _CLAUSE_ID.match(cid):
            problems.append(f"{where}: an id looks like s2.dimvar-agree (section, dot, lower-case-words)")
        if section not in sections:
            problems.append(f"{where}: section {section!r} is not in [sections]")
        elif not cid.startswith(section + "."):
            problems.append(f"{where}: the id must start with its section, {section}.")
        if cid in seen:
            problems.append(f"{where}: the id is used twice")
        seen.add(cid)
        clauses.append(Clause(cid, section, " ".join(quote.split())))
    if problems:
        raise CoverageError("\n".join(problems))
    title = data.get("title")
    spec = data.get("spec")
    return ClauseList(
        title=title if isinstance(title, str) else "the spec",
        spec=spec if isinstance(spec, str) else None,
        sections={k: v for k, v in sections.items() if isinstance(v, str)},
        clauses=tuple(clauses),
    )


def check_quotes(clauses: ClauseList, spec_text: str) -> list[str]:
    """Problems between the clause list and the spec's text: a quote the spec does not
    contain, and a MUST of the spec that no clause quotes (each ``;``-part of a sentence
    that says MUST must lie inside some quote)."""
    spec = " ".join(spec_text.split())
    problems = [f"clause {c.id}: its quote is not in the spec: {c.quote!r}" for c in clauses.clauses if c.quote not in spec]
    for sentence in re.split(r"(?<=[.:])\s+", spec):
        for part in sentence.split("; "):
            part = part.strip().rstrip(".")
            if "MUST" in part and not any(part in c.quote for c in clauses.clauses):
                problems.append(f"the spec's {part!r} is quoted by no clause")
    return problems


# -- tests and their markers ---------------------------------------------------------------------


def _mark_name(node: ast.expr) -> str | None:
    """``spec`` for ``pytest.mark.spec`` / ``mark.spec`` (called or not), else None."""
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute) and target.value.attr == "mark":
        return target.attr
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "mark":
        return target.attr
    return None


def _marks(nodes: list[ast.expr], where: str, problems: list[str]) -> tuple[list[str], set[str]]:
    """The clause ids of the ``spec`` marks among ``nodes``, and the names of all marks."""
    clauses: list[str] = []
    names: set[str] = set()
    for node in nodes:
        name = _mark_name(node)
        if name is None:
            continue
        names.add(name)
        if name != "spec":
            continue
        args = node.args if isinstance(node, ast.Call) else []
        if not args or not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args):
            problems.append(f"{where}: @pytest.mark.spec takes clause ids as string literals")
            continue
        clauses += [a.value for a in args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return clauses, names


def _module_marks(tree: ast.Module) -> list[ast.expr]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            value = node.value
            return list(value.elts) if isinstance(value, (ast.List, ast.Tuple)) else [value]
    return []


def find_test_functions(path: Path) -> dict[str, list[ast.expr]]:
    """``name`` (``Class::name`` for methods) → decorators, for every test function of a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            out[node.name] = list(node.decorator_list)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    out[f"{node.name}::{item.name}"] = list(node.decorator_list) + list(item.decorator_list)
    return out


def scan_tests(directory: Path, root: Path, problems: list[str]) -> tuple[SpecTest, ...]:
    """Every test function under ``directory`` (``test_*.py``, sorted) with its spec markers."""
    found: list[SpecTest] = []
    for path in sorted(directory.rglob("test_*.py")):
        rel = path.relative_to(root).as_posix()
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError as exc:
            problems.append(f"{rel}: cannot parse: {exc}")
            continue
        module_clauses, module_names = _marks(_module_marks(tree), rel, problems)
        for name, decorators in find_test_functions(path).items():
            node_id = f"{rel}::{name}"
            clauses, names = _marks(decorators, node_id, problems)
            names |= module_names
            disabled = "xfail" if "xfail" in names else ("skip" if "skip" in names else None)
            found.append(SpecTest(node_id, tuple(dict.fromkeys(module_clauses + clauses)), "slow" in names, disabled))
    return tuple(found)


# -- proofs_notes lemmas --------------------------------------------------------------------------


def _sections(text: str, heading: re.Pattern[str]) -> list[tuple[str, list[str]]]:
    """``(heading, body lines)`` of each Markdown section whose heading matches (fences skipped)."""
    lines = text.splitlines()
    fenced = False
    is_heading: list[bool] = []
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        is_heading.append(not fenced and line.startswith("#"))
    out = []
    for i, line in enumerate(lines):
        if is_heading[i] and heading.match(line):
            end = next((j for j in range(i + 1, len(lines)) if is_heading[j]), len(lines))
            out.append((line.lstrip("#").strip(), lines[i + 1 : end]))
    return out


def _cited(body: list[str]) -> list[str]:
    ids: list[str] = []
    for i, line in enumerate(body):
        if line.startswith("Checked by:"):
            paragraph = [line]
            for more in body[i + 1 :]:
                if not more.strip():
                    break
                paragraph.append(more)
            ids += _NODE_ID.findall("\n".join(paragraph))
    return ids


def cited_test_exists(root: Path, node_id: str) -> bool:
    """Whether ``tests/…py::name`` names a test function that exists (parameters ignored)."""
    file_part, _, name = node_id.partition("::")
    name = re.sub(r"\[.*\]$", "", name)
    path = root / file_part
    return path.is_file() and name in find_test_functions(path)


def scan_lemmas(notes: Path, root: Path) -> tuple[Lemma, ...]:
    """Every ``Lemma`` section of the notes' pages, with the tests its ``Checked by:`` lines cite."""
    lemmas = []
    for page in sorted(notes.glob("*.md")):
        for title, body in _sections(page.read_text(encoding="utf-8"), re.compile(r"^#{2,4} Lemma\b")):
            tests = tuple(dict.fromkeys(_cited(body)))
            missing = tuple(t for t in tests if not cited_test_exists(root, t))
            lemmas.append(Lemma(title, page.relative_to(root).as_posix(), tests, missing))
    return tuple(lemmas)


# -- the matrix ---------------------------------------------------------------------------------


def coverage(root: Path, tests_dir: Path | None = None, clauses_file: Path | None = None) -> Coverage:
    """The matrix of the checkout at ``root`` (or of other tests/clause files, for testing)."""
    clauses = load_clauses(clauses_file or root / CLAUSES_FILE)
    problems: list[str] = []
    tests = scan_tests(tests_dir or root / SPEC_TESTS, root, problems)
    known = {c.id for c in clauses.clauses}
    for t in tests:
        for cid in t.clauses:
            if cid not in known:
                problems.append(f"{t.node_id}: marks clause {cid!r}, which {CLAUSES_FILE} does not list")
        name = t.node_id.rsplit("::", 1)[-1]
        if not t.clauses and _NAMED_SPEC_TEST.match(name):
            problems.append(f"{t.node_id}: named as a spec test but carries no @pytest.mark.spec(...) marker")
    notes = root / NOTES
    lemmas = scan_lemmas(notes, root) if notes.is_dir() else ()
    result = Coverage(clauses, tests, lemmas)
    problems += [f"gap: clause {c.id} ({clauses.sections[c.section]}) has no test: {c.quote!r}" for c in result.gaps()]
    for lemma in result.lemma_gaps():
        why = "cites tests that do not exist: " + ", ".join(lemma.missing) if lemma.missing else "cites no test"
        problems.append(f"gap: {lemma.page}: {lemma.title} {why}")
    return Coverage(clauses, tests, lemmas, tuple(problems))


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _test_cell(t: SpecTest, tests_prefix: str) -> str:
    shown = t.node_id.removeprefix(tests_prefix)
    notes = [n for n in ("slow" if t.slow else None, t.disabled) if n]
    return f"`{shown}`" + (f" ({', '.join(notes)})" if notes else "")


def render_coverage(cov: Coverage) -> str:
    """The matrix as Markdown (``docs/spec-coverage.md``)."""
    clauses = cov.clauses
    gaps = cov.gaps()
    prefix = SPEC_TESTS.as_posix() + "/"
    marked = [t for t in cov.tests if t.clauses]
    lines = [
        "# Evaluator spec coverage",
        "",
        "<!-- Generated by `tfexec docs coverage` (python -m tfexec.docs coverage). Do not edit: edit",
        "docs/spec_clauses.toml or the tests' markers and run `python -m tfexec.docs --write`. -->",
        "",
        *textwrap.wrap(
            f"*{clauses.title}*: every requirement — each MUST, each listed constraint, and the behaviour the "
            "spec fixes in prose — is a clause of `docs/spec_clauses.toml`, shown with the tests in `tests/spec/` "
            'that check it: a test names its clauses with `@pytest.mark.spec("<clause id>", ...)`. A clause '
            "without a test is a **gap**, and `python -m tfexec.docs --check` (run by CI) fails on a gap, on a "
            "marker that names no clause, and on a `test_s<N>_…` test without a marker.",
            width=90,
            break_on_hyphens=False,
        ),
        "",
        f"**{len(clauses.clauses)} clauses**, {len(clauses.clauses) - len(gaps)} with tests, "
        f"**{len(gaps)} gap{'s' if len(gaps) != 1 else ''}**; {len(marked)} of the {len(cov.tests)} test functions "
        f"in `tests/spec/` carry markers; {len(cov.lemmas)} lemmas in `proofs_notes/`, "
        f"{len(cov.lemma_gaps())} without a test.",
        "",
    ]
    for key, title in clauses.sections.items():
        members = [c for c in clauses.clauses if c.section == key]
        if not members:
            continue
        lines += [f"## {title}", "", "| clause | the spec says | checked by |", "| --- | --- | --- |"]
        for c in members:
            tests = cov.tests_of(c.id)
            cell = "<br>".join(_test_cell(t, prefix) for t in tests) if tests else ""
            if c in gaps:
                cell = ("**gap**" + ("<br>" + cell if cell else ""))
            lines.append(f"| `{c.id}` | {_cell(c.quote)} | {cell} |")
        lines.append("")
    lines += ["## Gaps", ""]
    lines += [f"- `{c.id}`: {c.quote}" for c in gaps] or ["None."]
    lines += ["", "## Tests in `tests/spec/` tied to no clause", ""]
    unmarked = cov.unmarked()
    if unmarked:
        lines += [
            "They check requirements from outside the evaluator spec (architecture.md). A test named",
            "`test_s<N>_…` cannot be here: the check requires its marker.",
            "",
        ]
        lines += [f"- {_test_cell(t, prefix)}" for t in unmarked]
    else:
        lines.append("None.")
    lines += [
        "",
        "## proofs_notes lemmas",
        "",
        "Each lemma of `proofs_notes/` with the tests its `Checked by:` line names.",
        "",
        "| lemma | page | checked by |",
        "| --- | --- | --- |",
    ]
    for lemma in cov.lemmas:
        cells = [f"`{t}`" + (" (**missing**)" if t in lemma.missing else "") for t in lemma.tests]
        cell = "<br>".join(cells) if cells else "**gap**"
        lines.append(f"| {_cell(lemma.title)} | `{lemma.page}` | {cell} |")
    return "\n".join(lines).rstrip("\n") + "\n"
