"""The program as a reader sees it: its text form, and where each node is written in it.

``printed_source(target)`` prints the target's module (or function) with ``print_ir``,
parses that text back and pairs the two programs node by node — the printer's round trip
keeps the structure, so each function's post-order (and each loop's schedule) lines up
position by position. The result maps every node of the *evaluated* program to its span in
the *printed* text, which is what the explorer makes clickable. A scope whose nodes do not
line up (a program the printer cannot round-trip) simply has no spans; the page says so.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tfexec.errors import TfexecError
from tfexec.ir.expr import Call, ConstTensor, Expr, Function, GridRegionExpr, Var
from tfexec.ir.graph import function_order, loop_plan
from tfexec.ir.module import IRModule
from tfexec.loading import LoadedModule
from tfexec.text import parse, print_ir

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class TextSpan:
    """A stretch of one line of the printed text: 1-based line, 0-based column, length."""

    line: int
    column: int
    length: int


@dataclass(frozen=True, slots=True)
class PrintedSource:
    """The printed text, the span of each paired node (by ``id`` of the evaluated node) and,
    when some scope could not be paired, a note saying so."""

    text: str
    spans: dict[int, TextSpan]
    note: str | None


def printed_source(target: "Function | LoadedModule") -> PrintedSource:
    """The program's text and the span of each of its nodes in it: the file it was read from,
    as written (so a location ``tiled_matmul.tf.py:6:12`` is line 6 of the pane), when every
    node's recorded text is still where its span says; else the printed text form."""
    if isinstance(target, LoadedModule):
        program: IRModule | Function = target.module
        entry = target.entry
    else:
        program, entry = target, target
    own = _file_source(entry) if entry is not None else None
    if own is not None:
        return own
    try:
        text = print_ir(program)
    except (TfexecError, ValueError, TypeError) as exc:
        return PrintedSource("", {}, f"the program cannot be printed in the text form: {exc}")
    if entry is None:
        return PrintedSource(text, {}, None)
    try:
        printed = parse(text, filename="<printed>")
    except TfexecError as exc:
        return PrintedSource(text, {}, f"the printed text does not parse back ({exc}); no spans")
    twin = printed.functions.get(entry.name)
    if twin is None:
        return PrintedSource(text, {}, f"function {entry.name} is printed under another name; no spans")
    pairing = _Pairing(text)
    pairing.function(entry, twin)
    note = None
    if pairing.unpaired:
        note = "some scopes do not line up with their printed text, so their nodes have no span: " + ", ".join(
            sorted(pairing.unpaired)
        )
    return PrintedSource(text, pairing.spans, note)


class _Pairing:
    """Walks an evaluated program and its printed twin together, recording spans."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.spans: dict[int, TextSpan] = {}
        self.unpaired: set[str] = set()
        self.done: set[int] = set()

    def function(self, fn: Function, twin: Function) -> None:
        if id(fn) in self.done:
            return
        self.done.add(id(fn))
        self.scope(function_order(fn), function_order(twin), f"function {fn.name}")

    def scope(self, order: Sequence[Expr], twin: Sequence[Expr], where: str) -> None:
        if len(order) != len(twin) or any(not _alike(a, b) for a, b in zip(order, twin)):
            self.unpaired.add(where)
            return
        for node, other in zip(order, twin):
            span = self.span_of(other)
            if span is not None:
                self.spans[id(node)] = span
            if isinstance(node, Call) and isinstance(node.target, Function):
                assert isinstance(other, Call) and isinstance(other.target, Function)
                self.function(node.target, other.target)
            elif isinstance(node, GridRegionExpr):
                assert isinstance(other, GridRegionExpr)
                self.scope(loop_plan(node).schedule, loop_plan(other).schedule, f"a loop of {where}")

    def span_of(self, node: Expr) -> TextSpan | None:
        """The stretch of the printed line ``node`` was parsed from: its expression text, else
        its binding, else the word at its position."""
        span = node.span
        if span is None or not 1 <= span.line <= len(self.lines):
            return None
        line = self.lines[span.line - 1]
        col = span.column - 1
        loop_name = isinstance(node, Var) and " in " in span.op  # an index or a carry: just its name
        if span.op and not loop_name and line.startswith(span.op, col):
            return TextSpan(span.line, col, len(span.op))
        if span.binding and line.startswith(span.binding, col):
            return TextSpan(span.line, col, len(span.binding))
        word = _WORD.match(line, col)
        return TextSpan(span.line, col, len(word.group()) if word else 1)


class _InFile(_Pairing):
    """Spans of a program's nodes in the file its spans name: each node paired with itself.
    ``stale`` counts nodes of that file whose recorded text is not at their span (the file
    changed since it was read), and ``elsewhere`` nodes whose span names another file."""

    def __init__(self, text: str, file: str) -> None:
        super().__init__(text)
        self.file = file
        self.stale = 0
        self.elsewhere = 0

    def span_of(self, node: Expr) -> TextSpan | None:
        span = node.span
        if span is None:
            return None
        if span.file != self.file:
            self.elsewhere += 1
            return None
        found = super().span_of(node)
        line = self.lines[span.line - 1] if 1 <= span.line <= len(self.lines) else None
        texts = [t for t in (span.op, span.binding) if t]
        if isinstance(node, Var) and " in " in span.op:  # a loop index or carry: its name is what is written there
            texts = [span.op.split(" in ")[0]]
        if found is None or line is None or (texts and not any(line.startswith(t, span.column - 1) for t in texts)):
            self.stale += 1
        return found


def _file_source(entry: Function) -> PrintedSource | None:
    """The file ``entry`` was parsed from, with every node's span in it; None when there is no
    such file, it cannot be read, or some node's text is no longer where its span says."""
    if entry.span is None or entry.span.file.startswith("<"):
        return None
    path = Path(entry.span.file)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    pairing = _InFile(text, entry.span.file)
    pairing.function(entry, entry)
    if pairing.stale or pairing.elsewhere or pairing.unpaired or not pairing.spans:
        return None
    return PrintedSource(text, pairing.spans, None)


def _alike(a: Expr, b: Expr) -> bool:
    """The same kind of node (and, for a call, the same op or a function call)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, Call) and isinstance(b, Call):
        if isinstance(a.target, Function) or isinstance(b.target, Function):
            return isinstance(a.target, Function) and isinstance(b.target, Function)
        return a.target.name == b.target.name
    if isinstance(a, ConstTensor) and isinstance(b, ConstTensor):
        return a.name == b.name
    return True


__all__ = ["PrintedSource", "TextSpan", "printed_source"]
