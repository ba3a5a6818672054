"""``ForwardGraph``: a lowered function — its node list, outputs and keys — and how it runs.

``eval`` returns the whole context (one value per parameter, then every node's value, in
order), as the Lean ``ForwardGraph.eval`` does; ``run`` returns just the outputs and frees
each slot after its last reader; ``denote_all`` erases the context into a table keyed by
node key, the bridge to the direct route's table (Lean ``denoteAll``).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import torch

from tfexec.api_checks import public
from tfexec.forward.check import CheckMode, check_value
from tfexec.forward.listing import listing
from tfexec.forward.node import ForwardNode
from tfexec.forward.run import Body, Run, read, record
from tfexec.ir.dims import ShapeDim
from tfexec.ir.expr import Function
from tfexec.loading import LoadedModule
from tfexec.semantics.binding import bind_inputs, check_return
from tfexec.semantics.dispatch import raw
from tfexec.semantics.layouts import function_layouts
from tfexec.semantics.values import as_value, observed

LoopKeys = Literal["collapse", "expand"]


@dataclass(frozen=True, slots=True, eq=False)
class ForwardGraph:
    """A forward-executable lowering of one function (the Lean ``ForwardGraph``).

    ``function`` is the HIR function it came from; ``body`` its node list (slot ``i`` of
    the first ``len(function.params)`` is parameter ``i``); ``loaded`` the loaded module
    supplying its constants (if any); ``check`` the default runtime checking mode;
    ``scope_count`` how many dim scopes it has (the entry's, and one per inlined call).
    """

    function: Function
    body: Body
    loaded: "LoadedModule | None" = None
    check: CheckMode = "boundary"
    scope_count: int = 1

    @property
    def nodes(self) -> Sequence[ForwardNode]:
        """Every lowered node, in order (each with its key, type and source)."""
        return self.body.data.nodes

    @property
    def n_inputs(self) -> int:
        return self.body.data.n_inputs

    def _start(
        self, inputs: tuple[object, ...], mode: CheckMode, trace: dict[str, object] | None, given: Mapping[str, int] | None
    ) -> tuple[list[object], Run]:
        values, device, dims = bind_inputs(self.function, inputs, given)
        run = Run(self.loaded, device, dims, self.scope_count, full=mode == "full", trace=trace)
        return [raw(v) for v in values], run

    def _execute(
        self, inputs: tuple[object, ...], mode: CheckMode, free: bool, trace: dict[str, object] | None = None,
        given: Mapping[str, int] | None = None,
    ) -> tuple[list[object], object]:
        """Run the graph: the context (observed, unless ``free``) and the observed output, after
        the declared return type and, unless ``mode`` is ``"off"``, the inferred type are checked."""
        values, run = self._start(inputs, mode, trace, given)
        self.body.execute(run, values, free=free, check=mode == "full")
        fn = self.function
        out = observed(read(self.body.outputs, values), run.device)
        dims = dict(run.contexts[0].dim_bindings)
        check_return(fn, as_value(out, function_layouts(fn).of(fn.body)), dims)
        if mode != "off" and fn.body.checked_type is not None:
            bindings: dict[str, ShapeDim] = run.checks.bindings[0] if run.checks is not None else dict(dims)
            check_value(fn.body.checked_type, out, bindings, fn.body, f"the output of {fn.name}")
        if not free:  # the context is observed: host-int index values as their tensors
            values = [observed(v, run.device) for v in values]
        return values, out

    @public
    def eval(self, *inputs: object, check: CheckMode | None = None, dims: Mapping[str, int] | None = None) -> list[object]:
        """The whole context: one value per parameter, then every node's value, in order
        (``dims`` as for ``tfexec.evaluate``)."""
        return self._execute(inputs, check or self.check, free=False, given=dims)[0]

    @public
    def run(
        self, *inputs: object, check: CheckMode | None = None, dims: Mapping[str, int] | None = None
    ) -> "torch.Tensor | tuple[object, ...]":
        """The outputs only, each slot released after its last reader (peak memory ≈ eager's)."""
        out = self._execute(inputs, check or self.check, free=True, given=dims)[1]
        assert isinstance(out, (torch.Tensor, tuple))
        return out

    @public
    def denote_all(
        self, *inputs: object, loops: LoopKeys = "collapse", check: CheckMode | None = None,
        dims: Mapping[str, int] | None = None,
    ) -> dict[str, object]:
        """The per-node value table keyed by node key (loop bodies per iteration with ``loops="expand"``)."""
        trace: dict[str, object] | None = {} if loops == "expand" else None
        values, _ = self._execute(inputs, check or self.check, free=False, trace=trace, given=dims)
        table: dict[str, object] = {}
        record(self.body.keyed, values, "", trace or {}, table, None)  # the context is observed already
        return table

    def __str__(self) -> str:
        return listing(self.function, self.body, len(self.nodes))

    def __repr__(self) -> str:
        return f"ForwardGraph({self.function.name}, {len(self.nodes)} nodes)"


__all__ = ["ForwardGraph"]
