"""``docs/text-form.md``, the language reference of the text form: its examples are run.

The page is written by hand; what tfexec says about its examples is not. A fenced block
opened with ```` ```python example ```` is a program. It is parsed, printed (the print must
parse back to the same program and print the same again), type-checked, evaluated on fixed
inputs and checked on both routes. The fence line may give dim sizes (```` ```python
example B=2 ````; a parameter axis ``B`` gets that size), ``keys`` (list the node keys
of the per-node table) and ``expand`` (key loop bodies per iteration). A block opened with ```` ```python refused ```` must fail with a
tfexec error: when parsed, by the type rule, or at run time.

Right after each such block, generation writes a ```` ```text ```` block with what tfexec
said: the inputs and the result (``example_input`` makes the inputs, as for ``docs/ops.md``;
module constants get such values too), the node keys when asked, and the canonical text
when the example is not written as ``print_ir`` prints it; for a refusal, the error.
``python -m tfexec.docs --write`` refreshes these blocks; ``--check`` fails when one is stale.

``STATEMENT_FORMS`` are the words of the text form that are not ops (``grid``, ``carry``,
``const``...): ``tfexec ops grid`` answers with the section of the page that describes it.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import torch

from tfexec import check_equivalence, evaluate, infer_types
from tfexec.docs._examples import example_input, format_value
from tfexec.errors import EvalError, ModuleLoadError, ParseError, TfexecError, TypeInferenceError
from tfexec.ir.dims import DimError, resolve_dim
from tfexec.ir.expr import Function
from tfexec.ir.module import IRModule
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.loading import LoadedModule
from tfexec.text import parse, print_ir, structural_difference

PAGE = Path("docs/text-form.md")
"""The page, relative to the repository root."""
FILENAME = "example"
"""The file name the page's programs are parsed under (it starts every error's location)."""

STATEMENT_FORMS: dict[str, tuple[str, str]] = {
    "grid": ("a loop: `for k, acc in grid(extent, acc0): ... carry(new_acc)`", "Loops and carries"),
    "carry": ("the last statement of a loop body: the next value of each carry", "Loops and carries"),
    "value": ("the last statement of a loop without carries: the iteration's value", "Loops and carries"),
    "for": ("only as a loop over grid(...): `for k, acc in grid(extent, acc0):`", "Loops and carries"),
    "const": ("a module constant (a weight): `w: f32[64, 64] = const()`", "Modules and weights"),
    "class": ("a child module: `class attn:` holding constants named `attn.<name>`", "Modules and weights"),
    "constant": ("a literal tensor or strong scalar: `constant([1, 2], dtype=i32)`", "Constants and scalars"),
    "float": ('the non-finite scalars `float("inf")`, `-float("inf")`, `float("nan")`', "Constants and scalars"),
    "entry": ("`@entry` marks the function a module runs", "The entry function"),
    "def": ("a function: `def name(x: f32[B, 64]) -> f32[B, 64]: ... return value`", "Functions and statements"),
    "return": ("the last statement of a function: its value", "Functions and statements"),
    "tuple": ("tuple types `(f32[4], i64[()])` or `tuple[f32[4], i64[()]]`, values `(a, b)`, `t[0]`", "Tuples"),
    "min": ("dim arithmetic in a shape: `min(A, B)` (the elementwise op is `minimum`)", "Types and dims"),
    "max": ("dim arithmetic in a shape: `max(A, B)` (the elementwise op is `maximum`)", "Types and dims"),
}
"""Words of the text form that are not ops: what each is, and the section of the page about it."""

_FENCE = re.compile(r"^```python (example|refused)((?: [^\s]+)*)\s*$")
_DIM = re.compile(r"^([A-Za-z_]\w*)=(\d+)$")


class TextFormError(Exception):
    """An example of the page does not run, or a refusal runs (the message names the line)."""


@dataclass(frozen=True, slots=True)
class Block:
    """One program block of the page: its kind, fence options, text, and where it is."""

    kind: str
    dims: dict[str, int]
    keys: bool
    expand: bool
    text: str
    line: int


def anchor(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as ``-``."""
    slug = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return slug.replace(" ", "-")


def statement_form(name: str) -> str | None:
    """What ``tfexec ops NAME`` says for a statement form of the text form (None for others)."""
    found = STATEMENT_FORMS.get(name)
    if found is None:
        return None
    what, section = found
    return (
        f"`{name}` is not an op but a word of the text form — {what}.\n"
        f"See {PAGE}, section \"{section}\" ({PAGE}#{anchor(section)}).\n"
    )


def refresh(page: str) -> str:
    """The page with the output block after every example and refusal recomputed."""
    lines = page.split("\n")
    out: list[str] = []
    i = 0
    headings = {anchor(line.lstrip("#")) for line in lines if line.startswith("## ") or line.startswith("### ")}
    for name, (_, section) in STATEMENT_FORMS.items():
        if anchor(section) not in headings:
            raise TextFormError(f"{PAGE}: STATEMENT_FORMS[{name!r}] names section {section!r}, which the page lacks")
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            out.append(lines[i])
            i += 1
            continue
        start = i
        end = _closing(lines, i + 1, start)
        block = _block(m, lines[start + 1:end], start + 1)
        out.extend(lines[start:end + 1])
        i = end + 1
        if i < len(lines) and lines[i] == "```text":
            i = _closing(lines, i + 1, i) + 1
        out.append("```text")
        out.extend(run_block(block))
        out.append("```")
    return "\n".join(out)


def _closing(lines: list[str], i: int, start: int) -> int:
    while i < len(lines) and lines[i] != "```":
        i += 1
    if i == len(lines):
        raise TextFormError(f"{PAGE}:{start + 1}: the code block never closes")
    return i


def _block(m: re.Match[str], body: list[str], line: int) -> Block:
    dims: dict[str, int] = {}
    flags: set[str] = set()
    for option in m.group(2).split():
        d = _DIM.match(option)
        if d is not None:
            dims[d.group(1)] = int(d.group(2))
        elif option in ("keys", "expand"):
            flags.add(option)
        else:
            raise TextFormError(f"{PAGE}:{line}: unknown option {option!r} on the fence (NAME=SIZE, keys or expand)")
    return Block(m.group(1), dims, "keys" in flags, "expand" in flags, "\n".join(body) + "\n", line)


def run_block(block: Block) -> list[str]:
    """The lines of the output block of ``block``."""
    if block.kind == "refused":
        return _refusal(block)
    return _example(block)


def _static(t: Type, dims: dict[str, int], where: str) -> Type:
    if isinstance(t, TupleType):
        return TupleType(tuple(_static(f, dims, where) for f in t.fields))
    try:
        return TensorType(tuple(resolve_dim(d, dims) for d in t.shape), t.dtype, t.layout)
    except DimError as exc:
        raise TextFormError(f"{where}: {exc}; give its size on the fence line (```python example NAME=SIZE)") from None


def _target(module: IRModule, fn: Function, dims: dict[str, int], where: str) -> "tuple[Function | LoadedModule, list[str]]":
    constants = module.all_constants()
    if not constants:
        return fn, []
    shown: list[str] = []
    reading: dict[str, torch.Tensor] = {}
    for name, t in constants.items():
        static = _static(t, dims, where)
        value = example_input(static, where)
        assert isinstance(value, torch.Tensor)
        reading[name] = value
        shown.append(f"{name} = const {format_value(value, static)}")
    loaded = LoadedModule.from_reading(module, reading)
    return (loaded if fn.name == module.entry else loaded.function(fn.name)), shown


def _example(block: Block) -> list[str]:
    where = f"{PAGE}:{block.line}"
    try:
        module = parse(block.text, filename=FILENAME)
        printed = print_ir(module)
        again = parse(printed, filename=FILENAME)
        difference = structural_difference(module, again)
        if difference is not None:
            raise TextFormError(f"{where}: the printed example parses to another program: {difference}")
        if print_ir(again) != printed:
            raise TextFormError(f"{where}: printing the printed example changes it again")
        fn = module.entry_function
        infer_types(fn)
        params = [_static(p.type, block.dims, where) for p in fn.params]
        inputs = [example_input(t, where) for t in params]
        target, constants = _target(module, fn, block.dims, where)
        result = evaluate(target, *inputs)
        report = check_equivalence(target, *inputs, loops="expand" if block.expand else "collapse")
    except (TfexecError, LookupError) as exc:
        raise TextFormError(f"{where}: the example\n{block.text}fails: {type(exc).__name__}: {exc}") from None
    if not report.ok:
        raise TextFormError(f"{where}: the routes disagree on the example:\n{report}")
    body_type = fn.body.checked_type
    assert body_type is not None
    out: list[str] = []
    if printed.strip("\n") != block.text.strip("\n"):
        out += ["prints as:"] + [f"    {line}" if line else "" for line in printed.strip("\n").split("\n")] + [""]
    if block.dims:
        out.append("dims: " + ", ".join(f"{k}={v}" for k, v in block.dims.items()))
    out += [f"{p.name} = {format_value(x, t)}" for p, x, t in zip(fn.params, inputs, params)]
    out += constants
    out.append(f"result = {format_value(result, _static(body_type, block.dims, where))}")
    if block.keys:
        out.append("keys: " + ", ".join(row.key for row in report.rows))
    return out


def _refusal(block: Block) -> list[str]:
    where = f"{PAGE}:{block.line}"
    try:
        module = parse(block.text, filename=FILENAME)
        fn = module.entry_function
        infer_types(fn)
        params = [_static(p.type, block.dims, where) for p in fn.params]
        target, _ = _target(module, fn, block.dims, where)
        evaluate(target, *(example_input(t, where) for t in params))
    except (ParseError, TypeInferenceError, EvalError, ModuleLoadError) as exc:
        return f"{type(exc).__name__}: {exc}".split("\n")
    except (TfexecError, LookupError) as exc:
        raise TextFormError(f"{where}: the refusal\n{block.text}raised {type(exc).__name__}: {exc}") from None
    raise TextFormError(f"{where}: the refusal\n{block.text}ran without an error")


def examples(page: str) -> list[Block]:
    """Every program block of the page, in order."""
    lines = page.split("\n")
    found = []
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if m is not None:
            found.append(_block(m, lines[i + 1:_closing(lines, i + 1, i)], i + 1))
    return found


__all__ = ["FILENAME", "PAGE", "STATEMENT_FORMS", "Block", "TextFormError", "anchor", "examples", "refresh", "run_block", "statement_form"]
