"""The op reference: one entry per op of the catalogue, rendered as Markdown.

Everything in an entry is read from the code or computed when the page is generated: the
builder's signature (``tfexec.ops``), the attributes (the op class's dataclass fields), the
prose (the op docstrings, ``_docstring``), and the examples' and refusals' outputs
(``_examples``). Generating an entry also checks it: every constraint has a refusal, and
the error each refusal raises cites its label (``UNCITED`` lists the known exceptions).
"""

import dataclasses
import inspect
import re
import sys
import types as pytypes
import typing
from dataclasses import dataclass
from typing import Literal, Union, get_args, get_origin

from tfexec import ops as builders
from tfexec.docs._docstring import DocstringError, OpDoc, op_doc
from tfexec.docs._examples import FILENAME, SIGNIFICANT_DIGITS, ExampleError, ExampleRun, RefusalRun, run_example, run_refusal
from tfexec.semantics.registry import lookup_value_rule
from tfexec.ir.dims import DimExpr, DimVar
from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Op
from tfexec.ir.ops.catalogue import ALL_OPS, OPS_BY_NAME
from tfexec.text.grammar import format_value, required_attributes

UNCITED: dict[tuple[str, str], str] = {
}
"""Constraints whose refusal's error does not cite the label yet, with the file whose message
should. Generation fails if an entry here starts citing its label (remove the entry then)
or another constraint's error stops citing."""

_LABEL_MENTION = re.compile(r"\((C\d+)\)")
REQUIRED = "required"
"""The default column of an attribute the builder requires."""


class DocsError(Exception):
    """The reference cannot be generated as it stands (a docstring, example or refusal is wrong)."""


@dataclass(frozen=True, slots=True)
class OpReference:
    """Everything the reference says about one op."""

    name: str
    cls: type[Op]
    group: str
    signature: str
    operands: str
    attributes: tuple[tuple[str, str, str], ...]
    value_rule_module: str
    doc: OpDoc
    examples: tuple[ExampleRun, ...]
    refusals: tuple[RefusalRun, ...]


# -- annotations as text ------------------------------------------------------------------


_ALIASES = ((builders.Operand, "Operand"), (builders.DTypeLike, "DTypeLike"))
"""The unions a builder's signature names by their alias."""


def annotation_text(hint: object) -> str:
    """An annotation as the reference prints it: ``ShapeDim``, ``tuple[int, ...] | None``."""
    if isinstance(hint, str):
        return hint
    for alias, name in _ALIASES:
        if hint == alias:
            return name
    if hint is type(None):
        return "None"
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, pytypes.UnionType):
        if set(args) == {int, DimVar, DimExpr}:
            return "ShapeDim"
        for alias, name in _ALIASES:
            members = get_args(alias)
            if members and set(members) < set(args):  # ``Operand | None``: Python flattens the union
                rest = [a for a in args if a not in members]
                return " | ".join([name, *(annotation_text(a) for a in rest)])
        return " | ".join(annotation_text(a) for a in args)
    if origin is Literal:
        return " | ".join(repr(a) for a in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"tuple[{annotation_text(args[0])}, ...]"
        return "tuple[" + ", ".join(annotation_text(a) for a in args) + "]"
    if isinstance(hint, type):
        return hint.__name__
    return str(hint)


def _default_text(value: object) -> str:
    try:
        return format_value(value)
    except TypeError:
        return repr(value)


def builder_signature(name: str) -> tuple[str, str]:
    """``ops.NAME(...) -> Call`` without ``span``, and the operands part alone."""
    builder = getattr(builders, name)
    hints = typing.get_type_hints(builder)
    params: list[str] = []
    operands: list[str] = []
    star = False
    for p in inspect.signature(builder).parameters.values():
        if p.name == "span":
            continue
        hint = hints.get(p.name, p.annotation)
        text = f"{p.name}: {annotation_text(hint)}"
        if p.default is not inspect.Parameter.empty:
            text += f" = {_default_text(p.default)}"
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            text = "*" + text
            star = True
        elif p.kind is inspect.Parameter.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        params.append(text)
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL):
            operands.append(text)
    return f"ops.{name}({', '.join(params)}) -> Call", ", ".join(operands)


def attribute_rows(cls: type[Op]) -> tuple[tuple[str, str, str], ...]:
    """``(name, type, default)`` of each static attribute; ``required`` where the builder needs it."""
    hints = typing.get_type_hints(cls)
    required = required_attributes(cls)
    rows = []
    for f in dataclasses.fields(cls):
        default = REQUIRED if f.name in required else _default_text(f.default)
        rows.append((f.name, annotation_text(hints[f.name]), default))
    return tuple(rows)


def group_title(cls: type[Op]) -> str:
    """The op's group: the title of its module's docstring, up to the first colon."""
    doc = sys.modules[cls.__module__].__doc__ or cls.__module__
    return doc.strip().splitlines()[0].split(":")[0].strip()


# -- building entries -----------------------------------------------------------------------


def _arity(cls: type[Op]) -> str:
    lo, hi = cls.min_args, cls.max_args
    if hi is None:
        return f"at least {lo}"
    return str(lo) if lo == hi else f"{lo} to {hi}"


def op_reference(cls: type[Op]) -> OpReference:
    """The reference entry of ``cls``, with its examples and refusals run; a ``DocsError``
    says what is wrong when the entry does not hold together."""
    where = f"{cls.name} ({cls.__module__}.{cls.__qualname__})"
    try:
        doc = op_doc(cls)
        examples = tuple(run_example(p, f"{where} example") for p in doc.examples)
        refusals = tuple(run_refusal(r.label, r.program, f"{where} refusal") for r in doc.refusals)
    except (DocstringError, ExampleError) as exc:
        raise DocsError(str(exc)) from None
    labels = [c.label for c in doc.constraints]
    problems = []
    for label in labels:
        if not any(r.label == label for r in refusals):
            problems.append(f"constraint ({label}) has no 'Refused ({label}):' program")
    for r in refusals:
        cites = f"{cls.name} ({r.label})" in r.error
        known = (cls.name, r.label) in UNCITED
        if not cites and not known:
            problems.append(f"the error of 'Refused ({r.label}):' does not cite '{cls.name} ({r.label})': {r.error}")
        if cites and known:
            problems.append(f"'{cls.name} ({r.label})' is now cited: remove it from UNCITED in {__name__}")
    for text in (doc.summary, *doc.description, doc.type_rule, doc.value_rule):
        for label in _LABEL_MENTION.findall(text):
            if label not in labels:
                problems.append(f"the prose mentions ({label}), which is no constraint of the op")
    if problems:
        raise DocsError(f"{where}:\n  " + "\n  ".join(problems))
    signature, operands = builder_signature(cls.name)
    rule = lookup_value_rule(cls)
    return OpReference(
        name=cls.name,
        cls=cls,
        group=group_title(cls),
        signature=signature,
        operands=operands,
        attributes=attribute_rows(cls),
        value_rule_module=rule.__module__ if rule is not None else "(none registered)",
        doc=doc,
        examples=examples,
        refusals=refusals,
    )


def all_references() -> tuple[OpReference, ...]:
    """The entries of every op in ``ALL_OPS``, in catalogue order; a ``DocsError`` lists every problem."""
    out: list[OpReference] = []
    problems: list[str] = []
    for cls in ALL_OPS:
        try:
            out.append(op_reference(cls))
        except DocsError as exc:
            problems.append(str(exc))
    if problems:
        raise DocsError("the op reference does not hold together:\n" + "\n".join(problems))
    return tuple(out)


def find_op(name: str) -> type[Op] | None:
    """The op class spelled ``name`` in the text form, or None."""
    return OPS_BY_NAME.get(name)


# -- Markdown -------------------------------------------------------------------------------


def md(text: str) -> str:
    """Docstring markup as Markdown: ````code```` becomes ```code```."""
    return re.sub(r"``(.+?)``", r"`\1`", text)


def _sentence(text: str) -> str:
    """``text`` with its first letter capitalised (docstring sections continue a header)."""
    for i, c in enumerate(text):
        if c.isalpha():
            return text[:i] + c.upper() + text[i + 1 :] if i == 0 else text
    return text


def _fence(lang: str, body: str) -> list[str]:
    return [f"```{lang}", body, "```"]


def render_entry(ref: OpReference, heading: str = "###") -> str:
    """One op's entry as Markdown (also what ``tfexec ops NAME`` prints)."""
    doc = ref.doc
    lines = [f"{heading} `{ref.name}`", "", md(doc.summary), ""]
    for paragraph in doc.description:
        lines += [md(paragraph), ""]
    lines += [
        f"- builder: `{ref.signature}`",
        f"- class: `{ref.cls.__name__}` (`{ref.cls.__module__}`); operands: {_arity(ref.cls)}"
        + (f" (`{ref.operands}`)" if ref.operands else ""),
    ]
    if ref.attributes:
        shown = [f"`{n}: {t}` (required)" if d == REQUIRED else f"`{n}: {t} = {d}`" for n, t, d in ref.attributes]
        lines.append("- attributes: " + "; ".join(shown))
    else:
        lines.append("- attributes: none")
    lines += ["", f"**Type rule.** {_sentence(md(doc.type_rule))}", ""]
    lines += [f"**Value rule.** {_sentence(md(doc.value_rule))} Registered in `{ref.value_rule_module}`.", ""]
    if not doc.constraints:
        lines += ["**Constraints.** None.", ""]
    else:
        lines += ["**Constraints.**", ""]
        for c in doc.constraints:
            lines.append(f"- **({c.label})** {md(c.text)}")
            for r in (r for r in ref.refusals if r.label == c.label):
                note = UNCITED.get((ref.name, c.label))
                uncited = f" (the message, from `{note}`, does not cite the label yet)" if note else ""
                lines += ["", f"  Refused {r.stage}{uncited}:", ""]
                block = "\n".join(_fence("python", r.program) + _fence("text", r.error))
                lines += ["  " + line if line else "" for line in block.splitlines()]
            lines.append("")
    lines += ["**Examples.**" if len(ref.examples) > 1 else "**Example.**", ""]
    for e in ref.examples:
        shown = [f"{name} = {value}" for name, value in e.inputs] + [f"result = {e.result}"]
        lines += _fence("python", e.program) + _fence("text", "\n".join(shown)) + [""]
    return "\n".join(lines).rstrip("\n") + "\n"


PREAMBLE = f"""# Op reference

<!-- Generated by `tfexec docs ops` (python -m tfexec.docs ops). Do not edit: edit the op
docstrings in src/tfexec/ir/ops/ and run `python -m tfexec.docs --write`. -->

Every op of the catalogue (`tfexec.ir.ops.catalogue.ALL_OPS`), read from the code: the
builder in `tfexec.ops`, the op class's attributes, its docstring (summary, type rule,
value rule, constraints), and examples that tfexec ran when this page was generated.

How to read an entry:

- **Operands** are positional, **attributes** keyword-only (hir.md §ops). A Python
  `bool`/`int`/`float` operand becomes a weak rank-0 constant that promotes like a torch
  Python scalar. Every op checks its operand count and that its operands are tensors (a
  tuple only where the entry says so); every attribute is checked against its annotation
  when the op is built (a `TypeError`; a `ParseError` in the text form).
- **Constraints** `(C1)…(Cn)` are what a program must satisfy. The check of constraint
  `Cn` cites it in its error: `matmul (C1): …` at the start, or `… [softmax (C2)]` at the
  end. Each constraint shows a program that violates it and the error tfexec raised,
  and whether it was refused when the op was built, by the type rule (`infer_types`,
  `lower`), or at run time (`evaluate`).
- **Examples** are text-form programs (`tfexec.parse`) as `tfexec.print_ir` prints them,
  evaluated by `tfexec.evaluate`. Each parameter gets a fixed input: its `n` elements count
  up from `-(n // 2)` in row-major order, halved for floating dtypes (from 0 for `u8`;
  `b1` alternates from `True`). Floats print with {SIGNIFICANT_DIGITS} significant digits. Errors
  name the program's file as `{FILENAME}`.

`tfexec ops NAME` prints one entry in the terminal.
"""


def render_ops(refs: tuple[OpReference, ...] | None = None) -> str:
    """The whole reference (``docs/ops.md``)."""
    refs = all_references() if refs is None else refs
    groups: dict[str, list[OpReference]] = {}
    for ref in refs:
        groups.setdefault(ref.group, []).append(ref)
    lines = [PREAMBLE, "## Contents", "", "| group | ops |", "| --- | --- |"]
    for title, members in groups.items():
        lines.append(f"| {title} | " + " ".join(f"[`{r.name}`](#{r.name})" for r in members) + " |")
    lines.append("")
    for title, members in groups.items():
        lines += [f"## {title}", ""]
        for ref in members:
            lines.append(render_entry(ref))
    return "\n".join(lines).rstrip("\n") + "\n"


def render_index() -> str:
    """Every op's name and summary, by group (what ``tfexec ops`` prints without a name), the
    groups in the order ``docs/ops.md`` has them (an op catalogue v2 added to a v1 group, such
    as ``linear``, is listed with it)."""
    groups: dict[str, list[type[Op]]] = {}
    for cls in ALL_OPS:
        groups.setdefault(group_title(cls), []).append(cls)
    lines: list[str] = []
    width = max(len(cls.name) for cls in ALL_OPS)
    for title, members in groups.items():
        lines += ([""] if lines else []) + [f"{title}:"]
        for cls in members:
            try:
                summary = op_doc(cls).summary
            except DocstringError:
                summary = "(no summary)"
            lines.append(f"  {cls.name:<{width}}  {md(summary).replace('`', '')}")
    return "\n".join(lines) + "\n"
