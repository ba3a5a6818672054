"""Both routes run once for the explorer, keeping every value they compute.

The direct route fills a per-node table as it goes (``evaluate_value(..., table=t,
loops="expand")``), so when it raises, the table still holds every value computed before the
failure. The lowering route gives its per-node table (``denote_all(loops="expand")``) and,
for slots without a key (constants, weights, call boundaries), the whole context
(``eval``). Each route's error is kept, never raised: the page shows it.
"""

from dataclasses import dataclass, field

from tfexec.errors import TfexecError
from tfexec.evaluator.visitor import evaluate_value
from tfexec.forward.graph import ForwardGraph
from tfexec.forward.lower import lower
from tfexec.ir.expr import Function
from tfexec.loading import LoadedModule
from tfexec.semantics.values import Value
from tfexec.explain.values import as_data


@dataclass
class Runs:
    """What the two routes computed: ``graph`` (None when the program does not lower),
    each route's table of values by node key and its error, and the lowered context
    (one value per top-level slot) when the lowered run finished."""

    graph: ForwardGraph | None
    lower_error: TfexecError | None = None
    direct: dict[str, object] = field(default_factory=dict)
    direct_error: TfexecError | None = None
    lowered: dict[str, object] = field(default_factory=dict)
    lowered_error: TfexecError | None = None
    context: list[object] | None = None

    @property
    def failed(self) -> bool:
        return any(e is not None for e in (self.lower_error, self.direct_error, self.lowered_error))


def run_both(target: "Function | LoadedModule", inputs: tuple[object, ...]) -> Runs:
    """Lower ``target`` and run both routes on ``inputs``, keeping every value and error."""
    try:
        graph = lower(target)
    except TfexecError as exc:
        return Runs(None, lower_error=exc)
    runs = Runs(graph)
    table: dict[str, Value] = {}
    try:
        evaluate_value(target, inputs, table=table, loops="expand")
    except TfexecError as exc:
        runs.direct_error = exc
    runs.direct = {k: as_data(v) for k, v in table.items()}
    try:
        runs.lowered = graph.denote_all(*inputs, loops="expand")
        runs.context = graph.eval(*inputs)
    except TfexecError as exc:
        runs.lowered_error = exc
        runs.lowered, runs.context = _computed_before_failure(graph, inputs)
    return runs


def _computed_before_failure(graph: ForwardGraph, inputs: tuple[object, ...]) -> tuple[dict[str, object], list[object]]:
    """The lowered route run again up to its failure: the values of the slots it filled (a
    snoc list fills them in order) and of the loop iterations it finished, by node key, and
    the filled part of the context. The page shows them as computed, not as "raised before"."""
    from tfexec.forward.run import read
    from tfexec.semantics.values import observed

    trace: dict[str, object] = {}
    try:
        values, run = graph._start(inputs, graph.check, trace, None)
    except TfexecError:
        return {}, []
    try:
        graph.body.execute(run, values, free=False, check=graph.check == "full")
    except TfexecError:
        pass  # the same failure as before: what was filled until then is what the page keeps
    table: dict[str, object] = {}
    for key, ref in graph.body.keyed:
        for k in [k for k in trace if k.startswith(key + "[")]:
            table[k] = trace.pop(k)
        if _filled(ref, len(values)):
            table[key] = observed(read(ref, values), run.device)
    table.update(trace)
    return table, [observed(v, run.device) for v in values]


def _filled(ref: object, n: int) -> bool:
    """Whether every slot ``ref`` reads is among the first ``n`` (a tuple ref: each of its parts)."""
    if isinstance(ref, tuple):
        return all(_filled(r, n) for r in ref)
    return int(getattr(ref, "slot", n)) < n


__all__ = ["Runs", "run_both"]
