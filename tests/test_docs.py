"""The generated docs (src/tfexec/docs/): docs/ops.md and docs/spec-coverage.md are what the
generators produce now; every op has a complete entry; every spec clause and lemma has a
test; every program of docs/text-form.md runs and its outputs are current; and the
generators notice what they exist to notice (a removed marker is a gap, a refusal that
does not cite its label fails generation, an example that fails fails the check)."""

import difflib
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
import torch

from tfexec import cli
from tfexec.compare import text_mismatch
from tfexec.docs import DOCS, DocsError, DocstringError, OpReference, all_references, coverage, generate, op_doc, op_reference
from tfexec.docs import _check, _opref
from tfexec.docs._cli import main as docs_main
from tfexec.docs._coverage import CLAUSES_FILE, Coverage, CoverageError, check_quotes, load_clauses, render_coverage
from tfexec.docs._examples import example_input, format_number
from tfexec.docs._textform import PAGE as TEXT_FORM_PAGE, STATEMENT_FORMS, TextFormError, anchor
from tfexec.docs._textform import examples as text_form_examples, refresh as refresh_text_form
from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Op, Operand
from tfexec.ir.ops.catalogue import ALL_OPS
from tfexec.ir.ops.elementwise import Add, BinaryOp, Eq, Neg, Sub
from tfexec.ir.types import TensorType, Type

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT.parent / "shared" / "seeds" / "000_bbacae95954ec110.txt"


@pytest.fixture(scope="module")
def references() -> tuple[OpReference, ...]:
    return all_references()


# -- the committed pages ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    """Every page as generated now (generating takes seconds: once for the tests that compare)."""
    return generate(ROOT)


@pytest.mark.values
def test_committed_docs_are_what_the_generators_produce(generated: dict[str, str]) -> None:
    # The words as generated; the example values within f32's tolerance (the committed digits
    # are the kernels of the machine that wrote the page).
    for name, text in generated.items():
        path = ROOT / DOCS[name]
        assert path.is_file(), f"{DOCS[name]} is missing: run `python -m tfexec.docs --write`"
        committed = path.read_text(encoding="utf-8")
        diff = "\n".join(list(difflib.unified_diff(committed.splitlines(), text.splitlines(), lineterm=""))[:40])
        mismatch = text_mismatch(committed, text)
        assert mismatch is None, f"{DOCS[name]} is stale ({mismatch}): run `python -m tfexec.docs --write`\n{diff}"


def test_the_docs_check_takes_other_last_digits_but_not_other_values(
    generated: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A checkout whose ops.md shows the digits another CPU printed is current; one whose
    # value is off, or whose words differ, is stale.
    for item in ROOT.iterdir():
        if item.name == "docs":
            shutil.copytree(item, tmp_path / "docs")
        elif not item.name.startswith("."):
            (tmp_path / item.name).symlink_to(item)
    monkeypatch.setattr(_check, "generate", lambda root: generated)  # generated once: the check compares
    monkeypatch.setattr(_check, "coverage", lambda root: Coverage(load_clauses(root / CLAUSES_FILE), (), ()))
    page = tmp_path / DOCS["ops"]
    text = page.read_text(encoding="utf-8")
    value = re.search(r"^result = f32\[[^\]]*\] \[(-?\d+\.\d{4,})", text, re.M)
    assert value is not None
    digits = value.group(1)
    nudged = digits[:-1] + str((int(digits[-1]) + 1) % 10)  # one unit in the last printed digit
    for changed, current in ((nudged, True), (f"{float(digits) + 0.01:.4f}", False)):
        page.write_text(text[: value.start(1)] + changed + text[value.end(1) :], encoding="utf-8")
        problems = [p for p in _check.check(tmp_path) if p.startswith(str(DOCS["ops"]))]
        assert (problems == []) == current, (changed, problems[:1])
    page.write_text(text.replace("Value rule.", "Value rules.", 1), encoding="utf-8")
    assert any(p.startswith(f"{DOCS['ops']} is stale") for p in _check.check(tmp_path))


def test_generation_is_deterministic(references: tuple[OpReference, ...]) -> None:
    again = {ref.name: ref for ref in all_references()}
    assert [r.name for r in references] == list(again)
    for ref in references:
        assert _opref.render_entry(ref) == _opref.render_entry(again[ref.name]), ref.name


# -- the op reference ---------------------------------------------------------------------------------


def test_every_op_has_a_complete_entry(references: tuple[OpReference, ...]) -> None:
    assert [r.cls for r in references] == list(ALL_OPS)
    for ref in references:
        doc = ref.doc
        assert doc.summary and doc.type_rule and doc.value_rule, ref.name
        assert ref.examples, f"{ref.name} has no example"
        assert all(e.result for e in ref.examples), ref.name
        assert ref.signature.startswith(f"ops.{ref.name}(") and ref.signature.endswith("-> Call")
        assert [c.label for c in doc.constraints] == [f"C{i}" for i in range(1, len(doc.constraints) + 1)]
        for c in doc.constraints:
            refusals = [r for r in ref.refusals if r.label == c.label]
            assert refusals, f"{ref.name} ({c.label}) has no refusal"
            for r in refusals:
                cited = f"{ref.name} ({c.label})" in r.error
                assert cited != ((ref.name, c.label) in _opref.UNCITED), (ref.name, c.label, r.error)


def test_every_constraint_check_of_matmul_and_slice_cites_its_label(references: tuple[OpReference, ...]) -> None:
    by_name = {r.name: r for r in references}
    errors = {r.label: r.error for r in by_name["slice"].refusals}
    assert "slice (C2): window [3, 5) with stride 1 runs past axis 0 of length 4" in errors["C2"]
    assert by_name["slice"].refusals[1].stage == "at run time"
    assert "matmul (C1): contracted sizes differ" in {r.label: r.error for r in by_name["matmul"].refusals}["C1"]
    assert len(by_name["matmul"].doc.constraints) == 5


def test_an_entry_shows_the_builder_the_attributes_and_computed_examples(references: tuple[OpReference, ...]) -> None:
    reduce = next(r for r in references if r.name == "reduce")
    text = _opref.render_entry(reduce)
    assert "`ops.reduce(x: Operand, *, kind: 'sum' | 'mean' | 'max' | 'min' | 'prod', axes: " in text
    assert "`axes: tuple[int, ...] | None = None`" in text
    assert "result = f32[2] [-3.0, 1.5]" in text  # sum over axis 1 of [[-1.5, -1, -0.5], [0, 0.5, 1]]
    reshape = next(r for r in references if r.name == "reshape")
    assert "`shape: tuple[ShapeDim, ...]` (required)" in _opref.render_entry(reshape)


def _input(shape: tuple[int, ...], dtype: DType) -> list[object]:
    value = example_input(TensorType(shape, dtype), "test")
    assert isinstance(value, torch.Tensor) and value.dtype == dtype.torch
    data: list[object] = value.tolist()
    return data


def test_example_inputs_are_fixed_and_described() -> None:
    assert _input((2, 3), DType.float32) == [[-1.5, -1.0, -0.5], [0.0, 0.5, 1.0]]
    assert _input((2, 2), DType.int32) == [[-2, -1], [0, 1]]
    assert _input((4,), DType.bool) == [True, False, True, False]
    assert _input((3,), DType.uint8) == [0, 1, 2]
    assert [format_number(v) for v in (1.0, -0.0, 0.18632, 12345.0, float("nan"), float("-inf"), 3, True)] == [
        "1.0", "-0.0", "0.1863", "1.234e+04", "nan", "-inf", "3", "True",
    ]


# -- the docstring convention, on synthetic ops ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Base(Op):
    """Base of the test ops.

    Type rule: the operand's type.
    Type rule [special]: ``f32[()]``.
    Value rule: ``torch.{op}(x)``.
    Constraints:
        (C1) the base's constraint.
    Example: def example(x: f32[2]): return {op}(x)
    Refused (C1): def example(x: b1[2]): return {op}(x)
    """

    kind: ClassVar[str] = "plain"

    def infer(self, args: tuple[Operand, ...]) -> Type:
        return args[0].type


@dataclass(frozen=True, slots=True)
class _Child(_Base):
    """A child op.

    More about it.

    Constraints:
        (C2) the child's own constraint,
        over two lines.
    Refused (C2): def example(): return 1
    """

    name: ClassVar[str] = "child"
    kind: ClassVar[str] = "special"


@dataclass(frozen=True, slots=True)
class _NoConstraints(Op):
    """No constraints section.

    Type rule: t. Value rule: v.
    Value rule: v.
    Example: def example(): return 1
    """

    name: ClassVar[str] = "nothing"


@dataclass(frozen=True, slots=True)
class _Gap(_Base):
    """Labels with a gap.

    Constraints:
        (C3) skips C2.
    """

    name: ClassVar[str] = "gap"


@dataclass(frozen=True, slots=True)
class _BadRefusal(_Base):
    """A refusal of no constraint.

    Refused (C7): def example(): return 1
    """

    name: ClassVar[str] = "bad"


@dataclass(frozen=True, slots=True)
class _NoSummary(_Base):
    """Constraints: none."""

    name: ClassVar[str] = "nosummary"


def test_docstring_sections_inherit_qualify_and_merge() -> None:
    doc = op_doc(_Child)
    assert doc.summary == "A child op." and doc.description == ("More about it.",)
    assert doc.type_rule == "``f32[()]``."  # the [special] section wins over the plain one
    assert doc.value_rule == "``torch.child(x)``."  # inherited, {op} filled in
    assert [(c.label, c.text) for c in doc.constraints] == [
        ("C1", "the base's constraint."), ("C2", "the child's own constraint, over two lines."),
    ]
    assert doc.examples == ("def example(x: f32[2]): return child(x)",)
    assert [r.label for r in doc.refusals] == ["C1", "C2"]


def test_real_ops_use_the_kind_qualified_and_inherited_sections() -> None:
    assert "dtype ``b1``" in op_doc(Eq).type_rule and "promotion" in op_doc(Add).type_rule
    assert [c.label for c in op_doc(Sub).constraints] == ["C1", "C2"]  # C1 from BinaryOp, C2 its own
    assert [c.label for c in op_doc(Neg).constraints] == ["C1"]  # UnaryOp's [no_bool] constraint
    assert op_doc(Add).examples[0] == "def example(a: f32[2, 3], b: f32[3]): return add(a, b)"
    assert op_doc(Sub).summary == "Elementwise difference ``a - b``."  # the summary is never inherited
    assert op_doc(BinaryOp).summary.startswith("Base of the broadcasting binary ops")


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (_NoConstraints, r"no 'Constraints:' section"),
        (_Gap, r"labels must run C1, C2, … without gaps, found C1, C3"),
        (_BadRefusal, r"'Refused \(C7\):' names no constraint"),
        (_NoSummary, r"has no summary"),
    ],
    ids=["no-constraints", "label-gap", "refusal-of-nothing", "no-summary"],
)
def test_malformed_docstrings_are_refused_naming_the_class(cls: type[Op], message: str) -> None:
    with pytest.raises(DocstringError, match=message) as info:
        op_doc(cls)
    assert cls.__qualname__ in str(info.value)


# -- generation checks each entry --------------------------------------------------------------------


def _with_doc(monkeypatch: pytest.MonkeyPatch, doc: str) -> None:
    monkeypatch.setattr(Add, "__doc__", doc)


def test_a_refusal_whose_error_does_not_cite_its_label_fails_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_doc(monkeypatch, """Sum.

    Constraints:
        (C2) claimed, but the program breaks C1.
    Refused (C2): def example(a: f32[2, 3], b: f32[2]): return add(a, b)
    """)
    with pytest.raises(DocsError, match=r"does not cite 'add \(C2\)': TypeInferenceError: example:2:12 add\(a, b\)"):
        op_reference(Add)


def test_a_constraint_without_a_refusal_fails_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_doc(monkeypatch, """Sum.

    Constraints:
        (C2) never demonstrated.
    """)
    with pytest.raises(DocsError, match=r"constraint \(C2\) has no 'Refused \(C2\):' program"):
        op_reference(Add)


def test_a_refusal_that_runs_fails_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_doc(monkeypatch, """Sum.

    Refused (C1): def example(a: f32[2, 3], b: f32[3]): return add(a, b)
    """)
    with pytest.raises(DocsError, match=r"refusal \(C1\)\n.*\nran without an error"):
        op_reference(Add)


def test_an_example_that_fails_fails_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_doc(monkeypatch, """Sum.

    Example: def example(a: f32[2], b: f32[3]): return add(a, b)
    """)
    with pytest.raises(DocsError, match=r"the example\n.*\nfails: TypeInferenceError: .*\[add \(C1\)\]"):
        op_reference(Add)


def test_prose_citing_an_unknown_label_fails_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_doc(monkeypatch, "Sum, as (C4) says.\n\nConstraints: none.\n")
    with pytest.raises(DocsError, match=r"mentions \(C4\), which is no constraint"):
        op_reference(Add)


def test_an_uncited_entry_that_is_now_cited_fails_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_opref.UNCITED, ("add", "C1"), "pretend")
    with pytest.raises(DocsError, match=r"'add \(C1\)' is now cited: remove it from UNCITED"):
        op_reference(Add)


# -- the coverage matrix ---------------------------------------------------------------------------------


def test_every_clause_and_lemma_has_a_test() -> None:
    cov = coverage(ROOT)
    assert not cov.problems, "\n".join(cov.problems)
    assert not cov.gaps() and not cov.lemma_gaps()
    assert len(cov.clauses.clauses) >= 50 and len(cov.lemmas) >= 12


_CLAUSES = """
title = "Synthetic spec"
[sections]
s1 = "One"
[[clause]]
id = "s1.first"
section = "s1"
quote = "A MUST hold."
[[clause]]
id = "s1.second"
section = "s1"
quote = "B holds too."
"""

_TESTS = '''
import pytest

@pytest.mark.spec("s1.first")
def test_s1_first() -> None:
    pass

@pytest.mark.slow
@pytest.mark.spec("s1.second")
def test_s1_second() -> None:
    pass

def test_engineering() -> None:
    pass
'''


def _checkout(tmp_path: Path, tests: str, clauses: str = _CLAUSES) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "spec_clauses.toml").write_text(clauses, encoding="utf-8")
    (tmp_path / "tests" / "spec").mkdir(parents=True)
    (tmp_path / "tests" / "spec" / "test_synthetic.py").write_text(tests, encoding="utf-8")
    return tmp_path


def test_a_removed_marker_shows_up_as_a_gap(tmp_path: Path) -> None:
    root = _checkout(tmp_path, _TESTS)
    cov = coverage(root)
    assert not cov.problems and not cov.gaps()
    assert [t.node_id.rsplit("::", 1)[1] for t in cov.unmarked()] == ["test_engineering"]
    assert "`test_synthetic.py::test_s1_second` (slow)" in render_coverage(cov)
    test_file = root / "tests" / "spec" / "test_synthetic.py"
    test_file.write_text(_TESTS.replace('@pytest.mark.spec("s1.second")\n', ""), encoding="utf-8")
    cov = coverage(root)
    assert [c.id for c in cov.gaps()] == ["s1.second"]
    assert any(p.startswith("gap: clause s1.second (One) has no test") for p in cov.problems)
    assert any("test_s1_second: named as a spec test but carries no @pytest.mark.spec" in p for p in cov.problems)
    assert "| `s1.second` | B holds too. | **gap** |" in render_coverage(cov)


def test_an_expected_failure_checks_nothing_and_a_marker_must_name_a_clause(tmp_path: Path) -> None:
    tests = _TESTS.replace('@pytest.mark.spec("s1.first")', '@pytest.mark.xfail\n@pytest.mark.spec("s1.first", "s1.third")')
    cov = coverage(_checkout(tmp_path, tests))
    assert [c.id for c in cov.gaps()] == ["s1.first"]
    assert any("marks clause 's1.third', which docs/spec_clauses.toml does not list" in p for p in cov.problems)
    assert "**gap**<br>`test_synthetic.py::test_s1_first` (xfail)" in render_coverage(cov)


def test_module_level_marks_and_non_literal_ids(tmp_path: Path) -> None:
    tests = 'import pytest\npytestmark = pytest.mark.spec("s1.first")\nID = "s1.second"\n\n' \
        "@pytest.mark.spec(ID)\ndef test_s1_x() -> None:\n    pass\n"
    cov = coverage(_checkout(tmp_path, tests))
    assert cov.tests[0].clauses == ("s1.first",)
    assert any("takes clause ids as string literals" in p for p in cov.problems)


def test_a_lemma_without_a_test_is_a_gap(tmp_path: Path) -> None:
    root = _checkout(tmp_path, _TESTS)
    (root / "proofs_notes").mkdir()
    (root / "proofs_notes" / "lemmas.md").write_text(
        "### Lemma 1 (ok)\n\nChecked by: `tests/spec/test_synthetic.py::test_s1_first`.\n\n"
        "### Lemma 2 (none)\n\n```\n# not a heading\n```\nno line\n\n"
        "### Lemma 3 (ghost)\n\nChecked by: `tests/spec/test_synthetic.py::test_nothing`\n",
        encoding="utf-8",
    )
    cov = coverage(root)
    assert [lemma.title for lemma in cov.lemma_gaps()] == ["Lemma 2 (none)", "Lemma 3 (ghost)"]
    assert any("Lemma 3 (ghost) cites tests that do not exist" in p for p in cov.problems)


@pytest.mark.parametrize(
    ("clauses", "message"),
    [
        (_CLAUSES.replace('id = "s1.second"', 'id = "s1.first"'), "the id is used twice"),
        (_CLAUSES.replace('id = "s1.second"', 'id = "S1 second"'), "an id looks like"),
        (_CLAUSES.replace('section = "s1"\nquote = "B', 'section = "s9"\nquote = "B'), "section 's9' is not in"),
        ("not toml [", "cannot read the clause list"),
    ],
    ids=["duplicate", "bad-id", "unknown-section", "not-toml"],
)
def test_a_malformed_clause_list_is_refused(tmp_path: Path, clauses: str, message: str) -> None:
    (tmp_path / "c.toml").write_text(clauses, encoding="utf-8")
    with pytest.raises(CoverageError, match=message):
        load_clauses(tmp_path / "c.toml")


def test_quotes_are_checked_against_the_spec_text(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text(_CLAUSES, encoding="utf-8")
    clauses = load_clauses(tmp_path / "c.toml")
    assert check_quotes(clauses, "Intro. A MUST\n hold. B holds too.") == []
    problems = check_quotes(clauses, "A MUST hold. C MUST NOT fail; it is fine.")
    assert problems == [
        "clause s1.second: its quote is not in the spec: 'B holds too.'",
        "the spec's 'C MUST NOT fail' is quoted by no clause",
    ]


@pytest.mark.skipif(not SPEC.is_file(), reason="the evaluator spec is not next to this checkout")
def test_the_clause_list_quotes_the_real_spec_and_every_must() -> None:
    clauses = load_clauses(ROOT / "docs" / "spec_clauses.toml")
    assert check_quotes(clauses, SPEC.read_text(encoding="utf-8")) == []


# -- the command lines --------------------------------------------------------------------------------------


def test_tfexec_ops_prints_one_entry_or_the_index(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ops", "softmax"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# `softmax`\n") and "[softmax (C2)]" in out
    assert cli.main(["ops"]) == 0
    index = capsys.readouterr().out
    assert all(f"  {cls.name} " in index for cls in ALL_OPS)
    titles = [line for line in index.splitlines() if line and not line.startswith(" ")]
    assert len(titles) == len(set(titles))  # each group once, its v2 ops (linear) with its v1 ones
    assert index.index("  linear ") < index.index("Reductions:")


def test_tfexec_ops_unknown_name_is_a_usage_error_with_close_matches(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ops", "softmx"]) == 2
    assert "no op named 'softmx'; did you mean softmax" in capsys.readouterr().err


def test_docs_commands_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert docs_main([]) == 2
    assert docs_main(["ops", "--check"]) == 2
    assert cli.main(["docs", "check", "--root", str(tmp_path)]) == 2
    assert "not a tfexec checkout" in capsys.readouterr().err
    root = _checkout(tmp_path, _TESTS.replace('@pytest.mark.spec("s1.second")\n', ""))
    assert docs_main(["coverage", "--root", str(root)]) == 1
    captured = capsys.readouterr()
    assert "| `s1.second` | B holds too. | **gap** |" in captured.out and "gap: clause s1.second" in captured.err
    assert cli.main(["docs", "coverage", "--root", str(ROOT), "-o", str(tmp_path / "cov.md")]) == 0
    assert (tmp_path / "cov.md").read_text(encoding="utf-8") == (ROOT / DOCS["coverage"]).read_text(encoding="utf-8")


def test_tfexec_ops_answers_a_word_of_the_text_form_with_its_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ops", "grid"]) == 0
    captured = capsys.readouterr()
    assert "`grid` is not an op but a word of the text form" in captured.out
    assert "docs/text-form.md#loops-and-carries" in captured.out and "sigmoid" not in captured.out + captured.err
    page = (ROOT / TEXT_FORM_PAGE).read_text(encoding="utf-8")
    headings = {anchor(line.lstrip("#")) for line in page.splitlines() if line.startswith("#")}
    for name, (_, section) in STATEMENT_FORMS.items():
        assert cli.main(["ops", name]) == 0, name
        assert f"#{anchor(section)}" in capsys.readouterr().out
        assert anchor(section) in headings, section
    assert cli.main(["ops", "gird"]) == 2
    assert "did you mean grid?" in capsys.readouterr().err


# -- the text-form reference (docs/text-form.md) ----------------------------------------------------------


def _headings() -> str:
    """A page holding every section STATEMENT_FORMS points to, and nothing else."""
    return "\n".join(f"## {section}" for section in sorted({s for _, s in STATEMENT_FORMS.values()})) + "\n"


@pytest.mark.values
def test_every_program_of_the_text_form_reference_is_parsed_printed_and_evaluated() -> None:
    page = (ROOT / TEXT_FORM_PAGE).read_text(encoding="utf-8")
    blocks = text_form_examples(page)
    assert sum(b.kind == "example" for b in blocks) >= 15 and sum(b.kind == "refused" for b in blocks) >= 10
    assert text_mismatch(page, refresh_text_form(page)) is None  # its outputs current (digits within f32's tolerance)
    programs = "\n".join(b.text for b in blocks)
    for construct in (
        "for k, acc in grid(K // 16, acc0):", "carry(add(acc, tile))", "for i, (m, l) in grid(N // 8, m0, l0):",
        "value(scaled)", "= const()", "const('out.bias')", "class norm:", "@entry", "-> tuple[f32[R, 1], f32[R, 1]]",
        '-float("inf")', "top, total = stats(x)", "x = add(x, 1.0)", "return scale(once)", "constant([], dtype=f32, shape=(0, 3))",
    ):
        assert construct in programs, construct
    assert "keys: f/x, f/x#1" in page and "keys: f/scale/%2, f/once, f/scale#1/%2, f/%2" in page
    assert "ParseError: example:2:12: operators are not part of the HIR text form; write mul(...)" in page
    assert "TypeInferenceError: example:1:1 def f: declared return type" in page


def test_text_form_outputs_are_written_in_place_and_kept_current() -> None:
    program = "```python example\ndef f(x: f32[2]) -> f32[2]:\n    return neg(x)\n```\n"
    fresh = refresh_text_form(_headings() + program + "after\n")
    assert fresh.endswith(program + "```text\nx = f32[2] [-0.5, 0.0]\nresult = f32[2] [0.5, -0.0]\n```\nafter\n")
    stale = fresh.replace("[0.5, -0.0]", "[1.0, 2.0]")
    assert refresh_text_form(stale) == fresh


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("```python example\ndef f(x: f32[2]) -> f32[3]:\n    return neg(x)\n```\n", "fails: TypeInferenceError"),
        ("```python example\ndef f(x: f32[B]) -> f32[B]:\n    return neg(x)\n```\n", "give its size on the fence line"),
        ("```python refused\ndef f(x: f32[2]) -> f32[2]:\n    return neg(x)\n```\n", "ran without an error"),
        ("```python example 3\ndef f(x: f32[2]) -> f32[2]:\n    return neg(x)\n```\n", "unknown option '3'"),
        ("```python example\ndef f(x: f32[2]) -> f32[2]:\n    return neg(x)\n", "never closes"),
    ],
    ids=["type-error", "dim-without-size", "refusal-runs", "bad-option", "unclosed"],
)
def test_a_text_form_example_that_fails_or_a_refusal_that_runs_fails_the_check(block: str, message: str) -> None:
    with pytest.raises(TextFormError, match=re.escape(message)):
        refresh_text_form(_headings() + block)


def test_a_text_form_page_without_a_section_tfexec_ops_points_to_fails_the_check() -> None:
    with pytest.raises(TextFormError, match="names section 'Loops and carries', which the page lacks"):
        refresh_text_form(_headings().replace("## Loops and carries\n", ""))


def test_an_optional_operand_reads_operand_or_none_in_the_reference() -> None:
    """Python flattens ``Operand | None`` into every member of ``Operand``; the reference names
    the alias again (``bias: Operand | None``), as the builder's signature is written."""
    from tfexec import ops
    from tfexec.docs._opref import annotation_text

    assert annotation_text(ops.Operand | None) == "Operand | None"
    assert annotation_text(ops.DTypeLike | None) == "DTypeLike | None"
    assert annotation_text(ops.Operand) == "Operand"
    assert annotation_text(int | None) == "int | None"


# -- what a doc says torch computes, computed (issue #29 G) -------------------------------------------


def test_the_attention_doc_says_what_torch_computes_for_a_row_masked_from_every_key() -> None:
    import tfexec
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from tfexec.ir.ops.attention import Attention

    doc = " ".join((Attention.__doc__ or "").split())
    assert "torch 2.13's CPU kernels, fused and math, give 0 there, where ``softmax`` of the masked scores would be NaN" in doc
    assert "return attention(q, k, v, gt(s, 0.25))" in doc  # the example whose first row is masked from every key
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 1, n, 8, generator=g) for n in (2, 4, 4))  # 4-D: the fused kernel takes it
    mask = torch.tensor([[False] * 4, [True, False, True, False]])
    for backend in (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION):
        with sdpa_kernel(backend):
            assert torch.equal(sdpa(q, k, v, attn_mask=mask)[0, 0, 0], torch.zeros(8)), backend
    assert torch.softmax(torch.where(mask, 0.0, float("-inf")), -1)[0].isnan().all()
    fn = tfexec.parse(
        "def f(q: f32[1, 1, 2, 8], k: f32[1, 1, 4, 8], v: f32[1, 1, 4, 8], m: b1[2, 4]) -> f32[1, 1, 2, 8]:\n"
        "    return attention(q, k, v, m)\n"
    ).functions["f"]
    assert torch.equal(tfexec.evaluate(fn, q, k, v, mask), sdpa(q, k, v, attn_mask=mask))  # type: ignore[arg-type]
    assert tfexec.check_equivalence(fn, q, k, v, mask).ok
