"""``ForwardGraph``: a lowered function — its input binding, node list, outputs and keys.

``eval`` returns the whole context (inputs, then every node value, in order), as the Lean
``ForwardGraph.eval`` does; ``run`` returns just the outputs and frees each slot after its
last reader; ``denote_all`` erases the context into a table keyed by node key, the bridge
to the visitor's table (Lean ``denoteAll``).
"""

from collections.abc import Callable, Sequence
from operator import itemgetter
from dataclasses import dataclass, field
from typing import Literal

import torch

from tfexec.api_checks import public
from tfexec.errors import EvalError, TfexecError
from tfexec.evaluator.context import EvaluateContext
from tfexec.evaluator.registry import dispatch_error
from tfexec.evaluator.runtime import bind_inputs
from tfexec.evaluator.value import TensorValue, TupleValue, Value
from tfexec.forward.check import Annotation, CheckMode, TypeCheckError, check_context
from tfexec.forward.data import ForwardData
from tfexec.forward.node import ForwardNode
from tfexec.forward.refs import Ref, TensorRef, leaves
from tfexec.ir.expr import Function
from tfexec.loading import LoadedModule

LoopKeys = Literal["collapse", "expand"]
Step = tuple[Callable[..., object], "Callable[[list[object]], tuple[object, ...]] | None", tuple[int, ...]]


@dataclass(slots=True)
class RunContext(EvaluateContext):
    """A run's context, plus what ``denote_all(loops="expand")`` needs: a table to record
    loop-body values in and the key prefix of the iteration being run."""

    trace: dict[str, object] | None = None
    trace_prefix: str = ""
    full_check: bool = False
    """Whether every node is checked against its declared type (mode ``"full"``)."""

    def scoped(self, dim_bindings: dict[str, int]) -> "RunContext":
        """The context of an inlined callee: fresh dim bindings, same run."""
        return RunContext(
            loaded_module=self.loaded_module, device=self.device, dim_bindings=dim_bindings,
            trace=self.trace, trace_prefix=self.trace_prefix, full_check=self.full_check,
        )

    def iteration(self, prefix: str, trace: dict[str, object]) -> "RunContext":
        """The context of one loop iteration: its key prefix and the table nested loops record into."""
        return RunContext(
            loaded_module=self.loaded_module, device=self.device, dim_bindings=self.dim_bindings,
            trace=trace, trace_prefix=prefix, full_check=self.full_check,
        )


@dataclass(frozen=True, slots=True, eq=False)
class Body:
    """A lowered scope: its ``ForwardData``, output references, keyed references and, per
    node, the slots whose last reader it is (for ``run``)."""

    data: ForwardData
    outputs: Ref
    keyed: tuple[tuple[str, Ref], ...]
    frees: tuple[tuple[int, ...], ...]
    annotations: tuple[Annotation | None, ...]
    unread: frozenset[int] = frozenset()
    """Nodes whose value nothing reads (weak scalar constants): the run skips making them."""
    steps: "tuple[Step, ...]" = field(init=False)
    """The run loop's view of the nodes, derived from them (see ``make_steps``)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", make_steps(self.data.nodes, self.frees, self.unread))

    def eval(self, values: list[object], ctx: EvaluateContext, check: bool = False) -> list[object]:
        """Append every node's value to ``values`` (inputs first) and return it; with ``check``,
        check each value against its node's declared type."""
        return self._loop(values, ctx, check, free=False)

    def run(self, values: list[object], ctx: EvaluateContext, check: bool = False) -> list[object]:
        """Like ``eval`` but release each slot after its last reader."""
        return self._loop(values, ctx, check, free=True)

    def _loop(self, values: list[object], ctx: EvaluateContext, check: bool, free: bool) -> list[object]:
        append = values.append
        try:
            if check:
                for (f, arg, frees), node, ann in zip(self.steps, self.data.nodes, self.annotations):
                    out = f(*arg(values)) if arg is not None else f(values, ctx)
                    if ann is not None:
                        ann.check(out, node.source, "this node's value")
                    append(out)
                    if free:
                        for s in frees:
                            values[s] = None
            elif free:
                for f, arg, frees in self.steps:
                    append(f(*arg(values)) if arg is not None else f(values, ctx))
                    if frees:
                        for s in frees:
                            values[s] = None
            else:
                for f, arg, _ in self.steps:
                    append(f(*arg(values)) if arg is not None else f(values, ctx))
        except Exception as exc:
            _reraise(self.data.nodes[len(values) - self.data.n_inputs], exc)
        return values


def make_steps(
    nodes: Sequence[ForwardNode], frees: Sequence[tuple[int, ...]], unread: frozenset[int] = frozenset()
) -> tuple[Step, ...]:
    """The run loop's view of the nodes: ``(f, args, frees)`` where ``args`` (an
    ``itemgetter`` over the slots) is set for plain tensor calls and ``f(*args(values))`` is
    the node's value; otherwise ``f`` is the node's closure, called as ``f(values, ctx)``."""
    steps: list[Step] = []
    for index, (node, free) in enumerate(zip(nodes, frees)):
        if index in unread:
            steps.append((_nothing, None, free))
        elif node.plain is not None:
            f, slots = node.plain
            getter = itemgetter(*slots) if len(slots) > 1 else _single(slots[0])
            steps.append((f, getter, free))
        else:
            steps.append((node.fn, None, free))
    return tuple(steps)


def _nothing(values: list[object], ctx: EvaluateContext) -> object:
    return None


def _single(slot: int) -> Callable[[list[object]], tuple[object]]:
    return lambda v: (v[slot],)


def _node_error(node: ForwardNode, exc: Exception) -> Exception:
    """The error a failing node surfaces: an op dispatch's failure wrapped exactly as the
    visitor wraps it; every other node raises tfexec errors that are already final."""
    if isinstance(exc, TypeCheckError):
        return exc
    if node.dispatch and node.source is not None:
        return dispatch_error(node.source, exc)  # type: ignore[arg-type]
    if isinstance(exc, TfexecError):
        return exc
    return EvalError(f"internal error in lowered node {node.label}: {type(exc).__name__}: {exc}")


def _reraise(node: ForwardNode, exc: Exception) -> None:
    err = _node_error(node, exc)
    if err is exc:
        raise exc
    raise err from exc


def record(
    keyed: Sequence[tuple[str, Ref]], values: Sequence[object], prefix: str, nested: dict[str, object],
    out: dict[str, object],
) -> None:
    """Write a scope's keyed values into ``out`` in the visitor's order: each loop's
    per-iteration values (taken from ``nested``) just before the loop's own value."""
    for key, ref in keyed:
        full = prefix + key
        for k in [k for k in nested if k.startswith(full + "[")]:
            out[k] = nested.pop(k)
        out[full] = read(ref, values)
    out.update(nested)


def read(ref: Ref, values: Sequence[object]) -> object:
    """The value a reference denotes in an evaluated context: a tensor or a tuple."""
    if isinstance(ref, TensorRef):
        return values[ref.slot]
    return tuple(read(f, values) for f in ref.fields)


def as_value(ref: Ref, values: Sequence[object]) -> Value:
    """The ``Value`` a reference denotes (layouts from the reference, weak scalars kept)."""
    from tfexec.evaluator.value import type_of_data

    if isinstance(ref, TensorRef):
        data = values[ref.slot]
        assert isinstance(data, torch.Tensor)
        return TensorValue(data, type_of_data(data, ref.layout), scalar=ref.scalar)
    return TupleValue(tuple(as_value(f, values) for f in ref.fields))


@dataclass(frozen=True, slots=True, eq=False)
class ForwardGraph:
    """A forward-executable lowering of one function (the Lean ``ForwardGraph``).

    ``function`` is the HIR function it came from; ``loaded`` the loaded module supplying
    its constants (if any); ``body`` the lowered node list; ``check`` the default runtime
    checking mode.
    """

    function: Function
    body: Body
    input_refs: tuple[Ref, ...]
    input_annotations: tuple[Annotation, ...]
    output_annotation: Annotation | None
    loaded: "LoadedModule | None" = None
    check: CheckMode = "boundary"
    scope_count: int = field(default=1)

    @property
    def nodes(self) -> Sequence[ForwardNode]:
        """Every lowered node, in order (each with its key, type and source)."""
        return self.body.data.nodes

    @property
    def n_inputs(self) -> int:
        return self.body.data.n_inputs

    def _start(
        self, inputs: tuple[object, ...], trace: dict[str, object] | None, full: bool = False
    ) -> tuple[list[object], RunContext]:
        values, device, dims = bind_inputs(self.function, inputs)
        ctx = RunContext(loaded_module=self.loaded, device=device, dim_bindings=dims, trace=trace, full_check=full)
        slots: list[object] = []
        for v in values:
            slots.extend(_leaf_tensors(v))
        return slots, ctx

    def _check_inputs(self, slots: list[object], mode: CheckMode) -> None:
        if mode == "off":
            return
        checks = list(zip(self.function.params, self.input_refs, self.input_annotations))
        # Plain dims first: after bind_inputs every name a DimExpr uses is bound by a plain axis.
        for param, ref, ann in sorted(checks, key=lambda c: c[2].has_dim_exprs):
            ann.check(read(ref, slots), param, f"input {param.name}")

    @public
    def eval(self, *inputs: object, check: CheckMode | None = None) -> list[object]:
        """The whole context: the bound inputs (tensor leaves), then every node value in order."""
        mode = check or self.check
        with check_context():
            slots, ctx = self._start(inputs, None, mode == "full")
            self._check_inputs(slots, mode)
            values = self.body.eval(slots, ctx, check=mode == "full")
            self._check_output(read(self.body.outputs, values), mode)
        return values

    @public
    def run(self, *inputs: object, check: CheckMode | None = None) -> "torch.Tensor | tuple[object, ...]":
        """The outputs only, each slot released after its last reader (peak memory ≈ eager's)."""
        mode = check or self.check
        with check_context():
            slots, ctx = self._start(inputs, None, mode == "full")
            self._check_inputs(slots, mode)
            values = self.body.run(slots, ctx, check=mode == "full")
            out = read(self.body.outputs, values)
            self._check_output(out, mode)
        assert isinstance(out, (torch.Tensor, tuple))
        return out

    @public
    def denote_all(self, *inputs: object, loops: LoopKeys = "collapse", check: CheckMode | None = None) -> dict[str, object]:
        """The per-node value table keyed by node key (loop bodies per iteration with ``loops="expand"``)."""
        mode = check or self.check
        trace: dict[str, object] | None = {} if loops == "expand" else None
        with check_context():
            slots, ctx = self._start(inputs, trace, mode == "full")
            self._check_inputs(slots, mode)
            values = self.body.eval(slots, ctx, check=mode == "full")
            self._check_output(read(self.body.outputs, values), mode)
        table: dict[str, object] = {}
        record(self.body.keyed, values, "", trace or {}, table)
        return table

    def _check_output(self, out: object, mode: CheckMode) -> None:
        if mode != "off" and self.output_annotation is not None:
            self.output_annotation.check(out, self.function.body, f"the output of {self.function.name}")


def _leaf_tensors(value: Value) -> list[object]:
    if isinstance(value, TensorValue):
        return [value.data]
    assert isinstance(value, TupleValue)
    out: list[object] = []
    for v in value.elements:
        out.extend(_leaf_tensors(v))
    return out


def input_refs_for(function: Function) -> tuple[list[Ref], int]:
    """References for a function's parameters over consecutive input slots."""
    refs: list[Ref] = []
    n = 0
    from tfexec.forward.refs import TupleRef
    from tfexec.ir.types import TensorType, TupleType, Type

    def build(t: Type) -> Ref:
        nonlocal n
        if isinstance(t, TupleType):
            return TupleRef(tuple(build(f) for f in t.fields))
        assert isinstance(t, TensorType)
        ref = TensorRef(n, t.layout)
        n += 1
        return ref

    for p in function.params:
        refs.append(build(p.type))
    return refs, n


__all__ = ["Body", "ForwardGraph", "RunContext", "as_value", "input_refs_for", "leaves", "read", "record"]
