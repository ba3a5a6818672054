"""``compare_tables``: two per-node value tables, compared key by key with per-dtype tolerances.

A table maps node keys to tensors. It may come from a dump file (``tfexec dump`` or any
runtime writing the dump format), a mapping in memory, or a callable
``(program, inputs) -> {node key: tensor}`` run on the program — ``tfexec_table`` is
tfexec's own. The report is the per-node table in the expected table's (topological)
order, each row with the node's op, location and source line, and it names the first
node whose values diverge.
"""

import linecache
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeAlias

import torch

from tfexec.api_checks import public
from tfexec.compare._format import Dump, entry_for, read_dump, write_dump
from tfexec.ir.span import display_location
from tfexec.compare._tolerance import Tolerance, compare_tensors, resolve_tolerances
from tfexec.errors import TfexecError
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Function
from tfexec.loading import LoadedModule
from tfexec.wording import a

Program: TypeAlias = "Function | LoadedModule"
TableFn: TypeAlias = Callable[[Function | LoadedModule, tuple[object, ...]], Mapping[str, object]]
"""A runtime as a function: ``(program, inputs) -> {node key: tensor}``."""
TableSource: TypeAlias = "Mapping[str, object] | Dump | str | os.PathLike[str] | TableFn"
Status = Literal["ok", "MISMATCH", "MISSING", "EXTRA"]


class CompareError(TfexecError):
    """A table cannot be obtained (a callable without a program, a value that is not a tensor)."""


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """What a row says about a node: its op, its ``file:line:col`` and its source line."""

    op: str = "?"
    location: str = ""
    source: str = ""


@dataclass(frozen=True, slots=True)
class NodeComparison:
    """One row of the per-node table."""

    key: str
    op: str
    location: str
    source: str
    shape: str
    dtype: str
    tolerance: str
    max_abs_diff: float | None
    status: Status
    reason: str | None = None


@dataclass(frozen=True)
class ComparisonReport:
    """The outcome of ``compare_tables``: ``ok``, how many keys were ``compared``, the
    per-node ``rows`` in topological order, and the ``tolerances`` used per dtype."""

    ok: bool
    compared: int
    rows: tuple[NodeComparison, ...]
    tolerances: tuple[tuple[str, str], ...]
    allow_missing: bool = False

    @property
    def mismatches(self) -> tuple[NodeComparison, ...]:
        """The rows whose values, dtype or shape diverge, in topological order."""
        return tuple(r for r in self.rows if r.status == "MISMATCH")

    @property
    def missing(self) -> tuple[NodeComparison, ...]:
        """The rows only one of the two tables has."""
        return tuple(r for r in self.rows if r.status in ("MISSING", "EXTRA"))

    @property
    def first_divergence(self) -> NodeComparison | None:
        """The first node, in topological order, whose values diverge."""
        bad = self.mismatches
        return bad[0] if bad else None

    def __str__(self) -> str:
        headers = ("key", "op", "location", "shape", "dtype", "tolerance", "max|Δ|", "status", "source")
        cells = [
            (r.key, r.op, display_location(r.location), r.shape, r.dtype, r.tolerance,
             "-" if r.max_abs_diff is None else f"{r.max_abs_diff:.3g}", r.status, _clip(r.source, 60))
            for r in self.rows
        ]
        lines: list[str] = []
        if cells:
            widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
            lines.append("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip())
            lines.append("  ".join("-" * w for w in widths))
            lines.extend("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)
        if self.tolerances:
            stated = ", ".join(f"{d} {t}" for d, t in self.tolerances)
            lines.append(f"tolerances: {stated} (|actual - expected| <= atol + rtol * |expected|; NaN matches NaN)")
        lines.append(self.summary())
        first = self.first_divergence
        if first is not None and first.source:
            line = first.location.rsplit(":", 2)[1] if first.location.count(":") >= 2 else ""
            lines.append(f"  {line} | {first.source}" if line else f"  {first.source}")
        return "\n".join(lines)

    def summary(self) -> str:
        """The verdict line: counts, and the first divergence with its reason."""
        verdict = "OK" if self.ok else "MISMATCH"
        only_a = sum(r.status == "MISSING" for r in self.rows)
        only_b = sum(r.status == "EXTRA" for r in self.rows)
        text = f"{verdict}: {self.compared} node value(s) compared, {len(self.mismatches)} diverge"
        if only_a or only_b:
            counted = "not compared" if self.allow_missing else "each a failure; allow_missing / --allow-missing to accept"
            text += f"; {only_a} only in expected, {only_b} only in actual ({counted})"
        if self.compared == 0:
            text += "; nothing was compared: no key is in both tables"
        return text + self.divergence_clause()

    def divergence_clause(self) -> str:
        """The verdict's clause naming the first divergence, its op, location and reason
        (``"; first divergence at …"``), or ``""`` when nothing diverges."""
        first = self.first_divergence
        if first is None:
            return ""
        where = ", ".join(x for x in (first.op, first.location) if x)
        return f"; first divergence at {first.key} ({where}): {first.reason}"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def flatten_value(key: str, value: object, out: dict[str, torch.Tensor]) -> None:
    """Store a node's value under ``key``: a tensor as itself, a tuple's fields as ``key.i``."""
    if isinstance(value, torch.Tensor):
        out[key] = value
    elif isinstance(value, tuple):
        for i, field in enumerate(value):
            flatten_value(f"{key}.{i}", field, out)
    else:
        raise CompareError(f"table entry {key!r} is {a(type(value).__name__)}, not a tensor or a tuple of tensors")


@public
def tfexec_table(
    program: "Function | LoadedModule", inputs: Sequence[object], loops: Literal["collapse", "expand"] = "collapse",
    dims: "Mapping[str, int] | None" = None,
) -> dict[str, torch.Tensor]:
    """tfexec's per-node values of ``program`` on ``inputs`` (a ``TableFn``): every op call and
    loop by node key, tuple values as ``KEY.i``; loop bodies per iteration with ``loops="expand"``
    (``dims`` as for ``tfexec.evaluate``)."""
    from tfexec.forward.lower import lower

    table: dict[str, torch.Tensor] = {}
    for key, value in lower(program).denote_all(*inputs, loops=loops, dims=dims).items():
        flatten_value(key, value, table)
    return table


def write_program_dump(
    program: "Function | LoadedModule", inputs: Sequence[object], path: "str | os.PathLike[str]",
    loops: Literal["collapse", "expand"] = "collapse", dims: "Mapping[str, int] | None" = None,
) -> tuple[Path, int]:
    """What ``tfexec dump`` writes: tfexec's table of ``program`` on ``inputs`` at ``path``,
    with its index (op and location of every key); returns the index path and the count."""
    table = tfexec_table(program, inputs, loops, dims)
    infos = [program_info(program)]
    entries = []
    for key, tensor in table.items():
        info = info_for(key, infos)
        entries.append(entry_for(key, node_key_of(key), tensor, "" if info.op == "?" else info.op, info.location))
    fn = program if isinstance(program, Function) else program.entry
    return write_dump(path, table, entries, program=fn.name if fn is not None else None), len(table)


_FIELD = re.compile(r"(\.\d+)+$")
_ITERATION = re.compile(r"\[\d+\]")


def node_key_of(key: str) -> str:
    """The node key a table key belongs to (``block/acc.1`` -> ``block/acc``)."""
    return _FIELD.sub("", key)


def program_info(program: "Function | LoadedModule") -> dict[str, NodeInfo]:
    """Op, location and source line of every node key of ``program`` (iterations as ``[*]``)."""
    from tfexec.semantics.keys import node_sources
    from tfexec.ir.describe import describe_expr, op_label

    fn = program if isinstance(program, Function) else program.entry
    if fn is None:
        return {}
    out: dict[str, NodeInfo] = {}
    for key, node in node_sources(fn).items():
        location = node.span.location() if node.span is not None else ""
        described = describe_expr(node)
        fallback = described[len(location):].strip() if location and described.startswith(location) else described
        out[key] = NodeInfo(op_label(node), location, source_line(location) or fallback)
    return out


def source_line(location: str) -> str:
    """The stripped text of the line ``file:line:col`` points at, or ``""`` when unreadable."""
    parts = location.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return ""
    return linecache.getline(parts[0], int(parts[1])).strip()


def info_for(key: str, infos: Sequence[Mapping[str, NodeInfo]]) -> NodeInfo:
    """What the first of ``infos`` that knows ``key`` (or its node, or its loop template) says."""
    node = node_key_of(key)
    for table in infos:
        for candidate in (key, node, _ITERATION.sub("[*]", node)):
            if candidate in table:
                return table[candidate]
    return NodeInfo()


def _materialise(
    source: TableSource, program: "Program | None", inputs: tuple[object, ...], side: str
) -> tuple[dict[str, torch.Tensor], dict[str, NodeInfo]]:
    """A table source as ``{key: tensor}`` plus what its index says about each key."""
    if isinstance(source, (str, os.PathLike)):
        source = read_dump(source)
    if isinstance(source, Dump):
        infos = {k: NodeInfo(e.op or "?", e.location, source_line(e.location)) for k, e in source.entries.items()}
        return dict(source.tensors), infos
    if isinstance(source, Mapping):
        raw: Mapping[str, object] = source
    else:
        if program is None:
            raise CompareError(f"the {side} table is a callable: pass program= and inputs= for it to run on")
        raw = source(program, inputs)
        if not isinstance(raw, Mapping):
            raise CompareError(f"the {side} table callable returned {type(raw).__name__}, not a mapping of node keys")
    table: dict[str, torch.Tensor] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            raise CompareError(f"the {side} table has a key {key!r} that is not a string node key")
        flatten_value(key, value, table)
    return table, {}


@public
def compare_tables(
    expected: "TableSource",
    actual: "TableSource",
    *,
    program: "Function | LoadedModule | None" = None,
    inputs: Sequence[object] = (),
    tolerances: "Mapping[DType, Tolerance] | None" = None,
    allow_missing: bool = False,
    info: "Mapping[str, NodeInfo] | None" = None,
) -> ComparisonReport:
    """Compare two per-node tables key by key: same dtype, same shape, values within the
    dtype's tolerance (``DEFAULT_TOLERANCES``, replaced per dtype by ``tolerances``).

    Each table is a dump path, a ``Dump``, a mapping, or a callable run as
    ``table(program, inputs)``. Rows follow ``expected``'s order, then keys only ``actual``
    has. A key only one table has fails the comparison unless ``allow_missing``. Each row's
    op, location and source line come from ``info`` (by key or node key, for a caller that
    knows better: an importer pairing nodes with the user's source), else ``program``, else
    the dumps' indexes.
    """
    args = tuple(inputs)
    want, want_info = _materialise(expected, program, args, "expected")
    got, got_info = _materialise(actual, program, args, "actual")
    infos = [dict(info or {}), program_info(program) if program is not None else {}, want_info, got_info]
    table = resolve_tolerances(tolerances)
    rows: list[NodeComparison] = []
    used: dict[str, str] = {}
    compared = 0
    for key in [*want, *(k for k in got if k not in want)]:
        node = info_for(key, infos)
        e, a = want.get(key), got.get(key)
        if e is None or a is None:
            present = e if e is not None else a
            assert present is not None
            status: Status = "MISSING" if a is None else "EXTRA"
            reason = "only in the expected table" if a is None else "only in the actual table"
            rows.append(NodeComparison(
                key, node.op, node.location, node.source, str(list(present.shape)), _short(present), "", None, status, reason,
            ))
            continue
        compared += 1
        tol = _tolerance_for(e, table)
        verdict = compare_tensors(e, a, tol)
        if e.dtype.is_floating_point:
            used[_short(e)] = str(tol)
        rows.append(NodeComparison(
            key, node.op, node.location, node.source, str(list(e.shape)), _short(e),
            str(tol) if e.dtype.is_floating_point else "exact", verdict.max_abs_diff,
            "ok" if verdict.reason is None else "MISMATCH", verdict.reason,
        ))
    failing = any(r.status == "MISMATCH" or (r.status != "ok" and not allow_missing) for r in rows)
    stated = tuple(sorted(used.items()))
    if any(r.tolerance == "exact" and r.status != "MISSING" and r.status != "EXTRA" for r in rows):
        stated += (("integers and b1", "exact"),)
    return ComparisonReport(compared > 0 and not failing, compared, tuple(rows), stated, allow_missing)


def _tolerance_for(t: torch.Tensor, table: Mapping[DType, Tolerance]) -> Tolerance:
    try:
        return table[DType.from_torch(t.dtype)]
    except TypeError:
        return Tolerance(0.0, 0.0)


def _short(t: torch.Tensor) -> str:
    try:
        return DType.from_torch(t.dtype).short
    except TypeError:
        return str(t.dtype).removeprefix("torch.")
