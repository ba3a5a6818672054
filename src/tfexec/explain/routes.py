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
    return runs


__all__ = ["Runs", "run_both"]
