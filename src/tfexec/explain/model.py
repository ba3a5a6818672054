"""The explorer page's data: one JSON object the page's script draws everything from.

``page_model`` runs both routes (``tfexec.explain.routes``), outlines the lowered graph
(``tfexec.explain.outline``), maps its nodes to the printed text
(``tfexec.explain.sources``) and records each value once per node key and iteration
(``tfexec.explain.values``): bitwise-equal values once, differing ones from each route.
Slots without a key (inputs, constants, weights) take their value from the lowered
context. The verdict names the failing node first: where the program raises, or the first
node (in snoc order, iterations in order) whose routes differ.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tfexec.errors import TypeInferenceError
from tfexec.explain.outline import TOP, Outline, Row, outline
from tfexec.explain.routes import Runs, run_both
from tfexec.explain.sources import PrintedSource, printed_source
from tfexec.explain.values import Summary, difference, summary
from tfexec.forward.kinds import RunLoop
from tfexec.ir.dims import DimVar
from tfexec.ir.expr import Function
from tfexec.ir.types import TensorType
from tfexec.loading import LoadedModule

MAX_ITERATIONS = 64
"""Per loop (and outer iteration), the page records the values of the first this many iterations."""
MAX_SAMPLE_CELLS = 120_000
"""The page keeps samples of the data up to this many cells in all (about 640 KB of base64);
values after that keep their numbers only, so a long loop cannot make the page huge."""

_ITERATION = re.compile(r"\[(\d+)\]")

Json = dict[str, object]


@dataclass(frozen=True, slots=True)
class PageModel:
    """The page's JSON data, its status (``ok``, ``failed``, ``differ``) and a one-line summary."""

    data: Json
    status: str
    headline: str


def page_model(target: "Function | LoadedModule", inputs: tuple[object, ...], title: str, about: str) -> PageModel:
    """Everything the page shows about running ``target`` on ``inputs``."""
    source = printed_source(target)
    runs = run_both(target, inputs)
    data: Json = {"title": title, "about": about, "source": _source_json(source, None), "rows": [], "loops": {},
                  "values": {}, "counts": {}, "max_iterations": MAX_ITERATIONS}
    if runs.graph is None:
        assert runs.lower_error is not None
        error = _error_text(runs.lower_error)
        what = "type-check" if isinstance(runs.lower_error, TypeInferenceError) else "lower"
        verdict: Json = {"status": "failed", "text": f"the program does not {what}, so neither route runs",
                         "row": None, "iterations": {}, "errors": [{"route": "lowering", "text": error}]}
        data["verdict"] = verdict
        return PageModel(data, "failed", f"the program does not {what}: {error}")
    lines = outline(runs.graph)
    values = _Values(runs)
    data["source"] = _source_json(source, lines)
    names = slot_names(lines.rows)
    data["rows"] = [_row_json(r, names) for r in lines.rows]
    data["loops"] = {str(i): {"rows": list(lp.rows), "index": lp.index, "carries": list(lp.carries),
                              "outputs": list(lp.outputs), "extent": lp.extent} for i, lp in lines.loops.items()}
    data["outputs"] = list(lines.outputs)
    for row in lines.rows:
        if row.body == TOP and row.value_key is None and row.kind not in ("error",):
            values.slot(row.slot)
    data["values"] = values.records
    data["counts"] = values.counts
    verdict = _verdict(lines, runs, values)
    data["verdict"] = verdict
    status = str(verdict["status"])
    return PageModel(data, status, str(verdict["text"]))


class _Values:
    """The value records by concrete key, and the iteration count of each loop instance."""

    def __init__(self, runs: Runs) -> None:
        self.runs = runs
        self.records: dict[str, Json] = {}
        self.diffs: dict[str, Summary] = {}
        self.counts: dict[str, int] = {}
        self.sampled = 0
        keys = list(runs.direct) + [k for k in runs.lowered if k not in runs.direct]
        for key in keys:
            for m in _ITERATION.finditer(key):
                prefix = key[: m.start()]
                self.counts[prefix] = max(self.counts.get(prefix, 0), int(m.group(1)) + 1)
        for key in keys:
            if any(int(m.group(1)) >= MAX_ITERATIONS for m in _ITERATION.finditer(key)):
                continue
            self.records[key] = self.record(key)

    def summary(self, value: object) -> Summary:
        out = summary(value, sample=self.sampled < MAX_SAMPLE_CELLS)
        self.sampled += _cells(out)
        return out

    def record(self, key: str) -> Json:
        direct, lowered = self.runs.direct, self.runs.lowered
        if key in direct and key in lowered:
            diff = difference(direct[key], lowered[key])
            if diff is None:
                return {"v": self.summary(direct[key]), "eq": True}
            self.diffs[key] = diff
            return {"d": self.summary(direct[key]), "l": self.summary(lowered[key]), "diff": diff}
        if key in direct:
            return {"d": self.summary(direct[key])}
        return {"l": self.summary(lowered[key])}

    def slot(self, slot: int) -> None:
        """Record a top-level slot that has no key, from the lowered context."""
        context = self.runs.context
        if context is not None and slot < len(context):
            self.records[f"slot:{slot}"] = {"l": self.summary(context[slot]), "slot": True}

    def concrete(self, template: str, loops: Sequence[int]) -> list[tuple[str, dict[int, int]]]:
        """Every recorded key of ``template`` (one ``[*]`` per loop of ``loops``) with its iterations."""
        out: list[tuple[str, dict[int, int]]] = [("", {})]
        parts = template.split("[*]")
        for n, part in enumerate(parts[:-1]):
            grown: list[tuple[str, dict[int, int]]] = []
            for prefix, iters in out:
                head = prefix + part
                for i in range(min(self.counts.get(head, 0), MAX_ITERATIONS)):
                    grown.append((f"{head}[{i}]", {**iters, loops[n]: i}))
            out = grown
        return [(prefix + parts[-1], iters) for prefix, iters in out]


def _cells(s: Summary) -> int:
    fields = s.get("fields")
    if isinstance(fields, list):
        return sum(_cells(f) for f in fields)
    shape = s.get("sample_shape")
    return int(shape[0]) * int(shape[1]) if isinstance(shape, list) else 0


def _verdict(lines: Outline, runs: Runs, values: _Values) -> Json:
    errors = _errors(runs)
    if errors:
        row, iters = _failing_row(lines, runs, values)
        where = f" at {_row_name(row, lines)}" if row is not None else ""
        both = runs.direct_error is not None and runs.lowered_error is not None
        if both and str(runs.direct_error) == str(runs.lowered_error):
            text = f"the program fails{where}: both routes raise the same error"
            status = "failed"
        elif both:
            text, status = f"the program fails{where}, and the routes raise different errors", "differ"
        else:
            failing = "direct route" if runs.direct_error is not None else "lowered route"
            text, status = f"the routes differ: only the {failing} raises{where}", "differ"
        return {"status": status, "text": text, "row": row.index if row else None, "iterations": iters,
                "errors": errors}
    for row in lines.rows:
        if row.value_key is None:
            continue
        for key, iters in values.concrete(row.value_key, row.loops):
            diff = values.diffs.get(key)
            if diff is not None:
                at = _row_name(row, lines) if key == (row.key or row.value_key) else f"{_row_name(row, lines)}, {key}"
                return {"status": "differ", "row": row.index, "iterations": iters, "errors": [],
                        "text": f"the routes differ at {at}: {diff['reason']}"}
    compared = sum(1 for r in values.records.values() if r.get("eq"))
    return {"status": "ok", "row": None, "iterations": {}, "errors": [],
            "text": f"{compared} value(s) compared: every one bitwise equal on both routes"}


def _errors(runs: Runs) -> list[Json]:
    direct, lowered = runs.direct_error, runs.lowered_error
    if direct is not None and lowered is not None and str(direct) == str(lowered):
        return [{"route": "both routes", "text": _error_text(direct)}]
    out: list[Json] = []
    if direct is not None:
        out.append({"route": "direct route (visitor)", "text": _error_text(direct)})
    if lowered is not None:
        out.append({"route": "lowered route (snoc list)", "text": _error_text(lowered)})
    return out


def _failing_row(lines: Outline, runs: Runs, values: _Values) -> tuple[Row | None, dict[int, int]]:
    """The row whose node raised: its location starts the error message, and (of several
    rows with that source: a callee inlined twice) the first the direct route did not finish."""
    error = runs.direct_error or runs.lowered_error
    message = str(error)
    candidates = [r for r in lines.rows if r.where and message.startswith(r.where) and r.kind not in ("input",)]
    for row in candidates:
        key, iters = _last_instance(row, values)
        if key is None or key not in runs.direct:
            return row, iters
    return (candidates[0], _last_instance(candidates[0], values)[1]) if candidates else (None, {})


def _last_instance(row: Row, values: _Values) -> tuple[str | None, dict[int, int]]:
    """The key of ``row``'s last recorded iteration (its loops' last iterations) and those iterations."""
    if row.value_key is None:
        return None, {}
    key, iters = "", {}
    parts = row.value_key.split("[*]")
    for n, part in enumerate(parts[:-1]):
        head = key + part
        i = max(values.counts.get(head, 1) - 1, 0)
        key, iters[row.loops[n]] = f"{head}[{i}]", i
    return key + parts[-1], iters


def _row_name(row: Row, lines: Outline) -> str:
    """``slot %3.4 (f/acc[*]/pa)``: the slot as the page names it (a body's after its loop)."""
    key = row.key or row.value_key
    name = slot_names(lines.rows)[row.index]
    return f"slot {name} ({key})" if key else f"slot {name} ({row.label})"


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def slot_names(rows: Sequence[Row]) -> list[str]:
    """Each row's slot as the page names it: ``%3`` at the top, ``%5.2`` for slot 2 of the body
    of the loop at ``%5`` (``%5.3.1`` one loop deeper), since every body numbers its slots from 0."""
    names: list[str] = []
    for row in rows:
        names.append(f"%{row.slot}" if row.body == TOP else f"{names[row.body]}.{row.slot}")
    return names


def _read_name(row: Row, position: int, names: Sequence[str]) -> str:
    read = row.reads[position]
    return names[row.read_rows[position]] + "".join(f"[{i}]" for i in read.path)


def _op_text(row: Row, names: Sequence[str]) -> str:
    """The snoc list's op column: the call form over slots (``mul(%10, 0.25)``, ``add(%5.3, %5.1)``)."""
    if row.kind in ("input", "frontier", "index", "carry", "weight", "error"):
        return row.op
    if row.kind == "constant":
        return f"constant {row.literal}" if row.literal is not None else f"constant {row.type}"
    if row.kind == "loop" and row.node is not None and isinstance(row.node.what, RunLoop):
        n = row.node.what.n_front
        front = " ".join(_read_name(row, p, names) for p in range(n)) or "nothing"
        starts = " ".join(_read_name(row, p, names) for p in range(n, len(row.reads)))
        return f"grid({row.node.what.region.extent}) over {front}" + (f"; carries start as {starts}" if starts else "")
    return row.call_form(lambda p: _read_name(row, p, names))


def _row_json(row: Row, names: Sequence[str]) -> Json:
    scope = "%" if row.body == TOP else names[row.body] + "."
    out: Json = {
        "i": row.index, "body": row.body, "slot": row.slot, "sn": names[row.index], "kind": row.kind, "name": row.name,
        "label": row.label, "op": _op_text(row, names),
        "reads": [[r.slot, _read_name(row, p, names), target] for p, (r, target) in enumerate(zip(row.reads, row.read_rows))],
        "type": row.type, "frees": [f"{scope}{s}" for s in row.frees], "key": row.key, "vkey": row.value_key,
        "where": row.where, "loops": list(row.loops),
    }
    if row.declared != row.type:
        out["declared"] = row.declared
    if row.body == TOP and row.value_key is None:
        out["vkey"] = f"slot:{row.slot}"
    for name in ("origin", "feedback", "literal"):
        value = getattr(row, name)
        if value is not None:
            out[name] = value
    return out


def _source_json(source: PrintedSource, lines: Outline | None) -> Json:
    """The printed text and its spans: ``[line, column, length, rows]``, one per stretch of text."""
    spans: dict[tuple[int, int, int], list[int]] = {}
    if lines is not None:
        for row in lines.rows:
            node = row.source if row.kind != "frontier" or row.origin is None else lines.rows[row.origin].source
            span = source.spans.get(id(node)) if node is not None else None
            if span is not None:
                spans.setdefault((span.line, span.column, span.length), []).append(row.index)
    ordered = sorted(spans.items(), key=lambda item: (item[0][0], item[0][1], -item[0][2]))
    return {"text": source.text, "note": source.note, "spans": [[*k, rows] for k, rows in ordered]}


def describe_inputs(fn: Function, inputs: Sequence[object]) -> str:
    """``x f32[8, 64]; dims S=8`` — what the page was run on."""
    parts: list[str] = []
    dims: dict[str, int] = {}
    for param, value in zip(fn.params, inputs):
        shape = getattr(value, "shape", None)
        dtype = getattr(value, "dtype", None)
        if shape is not None:
            parts.append(f"{param.name} {str(dtype).removeprefix('torch.')}{list(shape)}")
            if isinstance(param.type, TensorType) and len(param.type.shape) == len(shape):
                for d, n in zip(param.type.shape, shape):
                    if isinstance(d, DimVar):
                        dims.setdefault(d.name, int(n))
        else:
            parts.append(f"{param.name} {type(value).__name__}")
    text = "inputs: " + (", ".join(parts) or "none")
    if dims:
        text += "; dims " + ", ".join(f"{k}={v}" for k, v in sorted(dims.items()))
    return text


__all__ = ["MAX_ITERATIONS", "MAX_SAMPLE_CELLS", "PageModel", "describe_inputs", "page_model"]
