"""Node-by-node equivalence of the two routes: ``check_equivalence`` and ``assert_equivalent``.

Both routes run with every value kept; their tables (keyed by node key) must have the
same keys and, per key, the same dtype, shape and bits (NaN equal to NaN), unless the
caller opts into a tolerance. When both routes raise, they must raise the same error
message; the report is then ``ok`` with ``compared == 0`` and carries the error.

The lowered graph is also *validated* (``tfexec.validate``): proved to denote the program
for all inputs, without running it. The report says which it did: values compared on
these inputs, the lowering validated for all inputs (``validation``); ``ok`` needs both.
"""

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import torch

from tfexec.api_checks import public
from tfexec.errors import EquivalenceError, TfexecError, TypeInferenceError
from tfexec.evaluator.visitor import evaluate_value
from tfexec.forward.lower import lower
from tfexec.infer import infer_types
from tfexec.ir.describe import describe_expr, op_label
from tfexec.ir.expr import Expr, Function
from tfexec.ir.span import display_location
from tfexec.loading import LoadedModule
from tfexec.semantics.keys import node_sources, template
from tfexec.semantics.targets import resolve_target
from tfexec.semantics.values import Value, to_python
from tfexec.validate import ValidationReport, validate

LoopKeys = Literal["collapse", "expand"]


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One diverging key: its node key, ``describe_expr`` of the node, and why."""

    key: str
    description: str
    reason: str


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the per-node table."""

    key: str
    op: str
    location: str
    shape: str
    dtype: str
    max_abs_diff: float | None
    status: str


@dataclass(frozen=True)
class EquivalenceReport:
    """The outcome of running both routes: ``ok``, how many keys were ``compared``, the
    ``mismatches`` in topological order, the per-node ``rows``, and the shared ``error``
    when both routes raised the same one."""

    ok: bool
    compared: int
    mismatches: tuple[Mismatch, ...]
    rows: tuple[Row, ...] = ()
    error: str | None = None
    visitor_error: str | None = None
    lowering_error: str | None = None
    type_error: str | None = None
    """Set when the program does not type-check: then it is neither lowered nor compared."""
    outputs: object = field(default=None, repr=False)
    validation: ValidationReport | None = field(default=None, repr=False)
    """The lowering's validation for all inputs (None when the program did not lower)."""

    @property
    def compared_ok(self) -> bool:
        """Whether the values compared on these inputs agree (whatever validation found)."""
        return not self.mismatches and (self.error is not None or (self.visitor_error is None and self.lowering_error is None))

    @property
    def validation_line(self) -> str:
        """What was checked how: values compared on these inputs, the lowering validated for all inputs."""
        v = self.validation
        if v is None:
            return "compared on these inputs; the lowering was not validated (it did not lower)"
        if v.ok:
            return f"compared on these inputs; validated for all inputs: the lowering denotes the program at all {v.checked} key(s)"
        first = v.first_problem
        return f"compared on these inputs; NOT validated for all inputs: {len(v.problems) + v.unlisted} problem(s), first {first}"

    @property
    def first_divergence(self) -> Mismatch | None:
        """The first mismatching node in topological order, if any."""
        return self.mismatches[0] if self.mismatches else None

    def __str__(self) -> str:
        if self.type_error is not None:
            return f"TYPE ERROR: the program does not type-check, so the routes were not compared: {self.type_error}"
        lines = []
        if self.rows:
            headers = ("key", "op", "location", "shape", "dtype", "max|Δ|", "status")
            cells = [
                (r.key, r.op, display_location(r.location), r.shape, r.dtype, "-" if r.max_abs_diff is None else f"{r.max_abs_diff:.3g}", r.status)
                for r in self.rows
            ]
            widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
            lines.append("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip())
            lines.append("  ".join("-" * w for w in widths))
            lines.extend("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)
        if self.error is not None:
            lines.append(f"both routes raised the same error: {self.error}")
        if self.visitor_error is not None and self.error is None:
            lines.append(f"visitor raised: {self.visitor_error}")
        if self.lowering_error is not None and self.error is None:
            lines.append(f"lowering raised: {self.lowering_error}")
        lines.append(self.validation_line)
        if self.ok and self.error is not None:  # the routes agree, but on a failure: never "OK"
            verdict = "FAILED ALIKE"
            summary = f"{verdict}: the program fails the same way on both routes; {self.compared} node(s) compared before it"
        else:
            verdict = "OK" if self.ok else ("NOT VALIDATED" if self.compared_ok else "MISMATCH")
            summary = f"{verdict}: {self.compared} node(s) compared, {len(self.mismatches)} mismatch(es)"
        if self.first_divergence is not None:
            m = self.first_divergence
            summary += f"; first divergence at {m.key} ({m.description}): {m.reason}"
        lines.append(summary)
        return "\n".join(lines)


@public
def check_equivalence(
    target: "Function | LoadedModule", *inputs: object, rtol: float | None = None, atol: float | None = None,
    loops: LoopKeys = "collapse", dims: Mapping[str, int] | None = None,
) -> EquivalenceReport:
    """Run both routes on ``inputs`` keeping every value, and compare them key by key
    (``dims`` as for ``tfexec.evaluate``).

    Values must match bitwise (NaN equals NaN) unless ``rtol``/``atol`` is given; dtypes and
    shapes must always match.
    """
    fn, _ = resolve_target(target)
    try:
        infer_types(fn)
    except TypeInferenceError as exc:
        return EquivalenceReport(False, 0, (), type_error=str(exc))
    sources = node_sources(fn)
    table: dict[str, Value] = {}
    visitor_error: TfexecError | None = None
    try:
        result = evaluate_value(target, inputs, table=table, loops=loops, dims=dims)
    except TfexecError as exc:
        visitor_error, result = exc, None
    lowering_error: TfexecError | None = None
    lowered: dict[str, object] = {}
    validation: ValidationReport | None = None
    try:
        graph = lower(target)
        validation = validate(graph)
        lowered = graph.denote_all(*inputs, loops=loops, dims=dims)
    except TfexecError as exc:
        lowering_error = exc
    if visitor_error is not None or lowering_error is not None:
        return _validated(_error_report(visitor_error, lowering_error), validation)
    assert result is not None
    return _validated(_compare(table, lowered, sources, rtol, atol, to_python(result)), validation)


def _validated(report: EquivalenceReport, validation: ValidationReport | None) -> EquivalenceReport:
    """``report`` with the lowering's validation: ``ok`` needs the comparison and the validation."""
    ok = report.ok and (validation is None or validation.ok)
    return dataclasses.replace(report, ok=ok, validation=validation)


@public
def assert_equivalent(
    target: "Function | LoadedModule", *inputs: object, rtol: float | None = None, atol: float | None = None,
    loops: LoopKeys = "collapse", dims: Mapping[str, int] | None = None,
) -> EquivalenceReport:
    """``check_equivalence``, raising ``EquivalenceError`` naming the first divergence."""
    report = check_equivalence(target, *inputs, rtol=rtol, atol=atol, loops=loops, dims=dims)
    if not report.ok:
        raise EquivalenceError(str(report))
    return report


def _error_report(visitor: TfexecError | None, lowering: TfexecError | None) -> EquivalenceReport:
    v = None if visitor is None else f"{type(visitor).__name__}: {visitor}"
    lo = None if lowering is None else f"{type(lowering).__name__}: {lowering}"
    if v is not None and v == lo:
        return EquivalenceReport(True, 0, (), error=v)
    reason = f"visitor {'raised ' + v if v else 'returned a value'}; lowering {'raised ' + lo if lo else 'returned a value'}"
    return EquivalenceReport(False, 0, (Mismatch("<run>", "the whole run", reason),), visitor_error=v, lowering_error=lo)


def _leaves(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, Value):
        return _leaves(to_python(value))
    assert isinstance(value, tuple)
    out: list[torch.Tensor] = []
    for v in value:
        out.extend(_leaves(v))
    return out


def _bits(t: torch.Tensor) -> torch.Tensor:
    views = {2: torch.int16, 4: torch.int32, 8: torch.int64}
    if t.dtype.is_floating_point and t.element_size() in views:
        return t.contiguous().view(views[t.element_size()])
    return t


def _compare_tensor(a: torch.Tensor, b: torch.Tensor, rtol: float | None, atol: float | None) -> tuple[str | None, float | None]:
    if a.dtype != b.dtype:
        return f"dtype differs: visitor {a.dtype}, lowering {b.dtype}", None
    if a.shape != b.shape:
        return f"shape differs: visitor {list(a.shape)}, lowering {list(b.shape)}", None
    if a.device != b.device:
        return f"device differs: visitor {a.device}, lowering {b.device}", None
    if a.device.type == "meta":
        return None, None
    diff: float | None = None
    if a.numel() and (a.dtype.is_floating_point or a.dtype.is_complex):
        d = (a.double() - b.double()).abs()
        finite = d[~d.isnan()]
        diff = float(finite.max()) if finite.numel() else 0.0
    elif a.numel() and a.dtype != torch.bool:
        diff = float((a.long() - b.long()).abs().max())
    if rtol is not None or atol is not None:
        close = torch.allclose(a.double(), b.double(), rtol=rtol or 0.0, atol=atol or 0.0, equal_nan=True) if a.dtype.is_floating_point else torch.equal(a, b)
        return (None if close else f"values differ beyond rtol={rtol} atol={atol} (max |Δ| {diff})"), diff
    if not torch.equal(_bits(a), _bits(b)):
        return f"values differ bitwise (max |Δ| {diff})", diff
    return None, diff


def _compare(
    visitor: dict[str, Value], lowered: dict[str, object], sources: dict[str, Expr], rtol: float | None,
    atol: float | None, outputs: object,
) -> EquivalenceReport:
    mismatches: list[Mismatch] = []
    rows: list[Row] = []
    keys = list(visitor) + [k for k in lowered if k not in visitor]
    compared = 0
    for key in keys:
        node = sources.get(template(key))
        description = describe_expr(node) if node is not None else key
        op = op_label(node) if node is not None else "?"
        location = node.span.location() if node is not None and node.span is not None else ""
        if key not in lowered or key not in visitor:
            side = "lowering" if key not in lowered else "visitor"
            mismatches.append(Mismatch(key, description, f"key missing from the {side} table"))
            rows.append(Row(key, op, location, "", "", None, "MISSING"))
            continue
        a, b = _leaves(visitor[key]), _leaves(lowered[key])
        compared += 1
        reason: str | None = None
        worst: float | None = None
        if len(a) != len(b):
            reason = f"tuple arity differs: visitor {len(a)}, lowering {len(b)}"
        else:
            for x, y in zip(a, b):
                reason, diff = _compare_tensor(x, y, rtol, atol)
                if diff is not None:
                    worst = diff if worst is None else max(worst, diff)
                if reason is not None:
                    break
        shape = ", ".join(str(list(t.shape)) for t in a)
        dtype = ", ".join(str(t.dtype).replace("torch.", "") for t in a)
        rows.append(Row(key, op, location, shape, dtype, worst, "ok" if reason is None else "MISMATCH"))
        if reason is not None:
            mismatches.append(Mismatch(key, description, reason))
    return EquivalenceReport(not mismatches, compared, tuple(mismatches), tuple(rows), outputs=outputs)
