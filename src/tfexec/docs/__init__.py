"""Generated documentation that cannot drift: the op reference, the spec coverage matrix and
the text-form reference's examples.

``docs/ops.md`` (``render_ops``) is read from the code: for every op of
``tfexec.ir.ops.catalogue.ALL_OPS``, its builder's signature (``tfexec.ops``), its
attributes (the op class's dataclass fields), its docstring, and examples that tfexec
parses, prints and evaluates while the page is generated. ``docs/spec-coverage.md``
(``render_coverage``) lists every clause of ``docs/spec_clauses.toml`` with the tests of
``tests/spec/`` that mark it (``@pytest.mark.spec("s2.dimvar-agree")``), and every lemma of
``proofs_notes/`` with its ``Checked by:`` tests. ``docs/text-form.md``, the language
reference of the text form, is written by hand; its example programs are run and the
output block after each is recomputed (``_textform``). ``python -m tfexec.docs --check``
(CI) regenerates all three, fails with a diff when a committed copy is stale, and fails on
a gap; ``--write`` rewrites them.

The op docstring convention
===========================

An op class's docstring is the single source of its prose. After ``inspect.cleandoc``:

* The text before the first section is the **summary** (its first paragraph: what the op
  computes) and an optional **description** (further paragraphs). Every op class states
  its own summary.
* A **section** starts with a header at the start of a line and runs to the next header;
  continuation lines are indented:

  - ``Type rule:`` the result type from the operand types and attributes;
  - ``Value rule:`` the torch function the op follows and the decisions hir.md fixes;
  - ``Constraints:`` either ``none.`` or items ``(C1) …``, ``(C2) …`` (labels run from C1
    without gaps). The check of ``Cn`` cites it in its error message as ``op (Cn)``;
  - ``Example:`` a text-form program, on the header line (``def example(x: f32[2, 3]):
    return softmax(x)``) or indented below it. Generation prints it canonically, runs it on
    fixed inputs (``tfexec.docs._examples.example_input``) and shows the result;
  - ``Refused (Cn):`` a program that violates ``Cn``. Generation runs it and shows the
    error, which must cite ``op (Cn)`` (``_opref.UNCITED`` lists the known exceptions).
    Every constraint needs at least one.

* A header may be qualified by the op class's ``kind`` ClassVar: ``Type rule [compare]:``
  applies only to ops whose ``kind`` is ``compare``, and wins over a plain section of the
  same class.
* Sections are inherited along the MRO, so a base class (``BinaryOp``) can speak for its
  ops: the type rule, value rule and examples come from the nearest class that states
  them; constraints and refusals merge by label, a subclass's item replacing its base's.
  ``{op}`` anywhere stands for the op's text name.
* ````code```` is code; the Markdown shows it as ```code```.

Nothing is written twice: the reference shows the docstrings; the examples' outputs and
the refusals' errors are whatever tfexec computes when the page is generated, with fixed
inputs and print options, so the page is the same on every machine and run.
"""

from tfexec.docs._check import DOCS, NoCheckout, check, find_root, generate, write
from tfexec.docs._coverage import Coverage, CoverageError, coverage, render_coverage
from tfexec.docs._docstring import DocstringError, OpDoc, op_doc
from tfexec.docs._opref import DocsError, OpReference, all_references, op_reference, render_entry, render_index, render_ops

__all__ = [
    "DOCS", "Coverage", "CoverageError", "DocsError", "DocstringError", "NoCheckout", "OpDoc", "OpReference", "all_references",
    "check", "coverage", "find_root", "generate", "op_doc", "op_reference", "render_coverage", "render_entry",
    "render_index", "render_ops", "write",
]
