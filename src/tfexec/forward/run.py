"""The run loop: the one piece of code that indexes a forward context.

A ``Body`` is a lowered node list (the graph's, or a loop body's) with its outputs, its keyed
references and, per node, the slots it reads last. ``Body.execute`` appends each node's
value to the context, handing the node exactly the values of its declared reads; with
``free`` it then drops each slot after its last reader, with ``check`` it checks each value
against its node's declared type. A ``Run`` is the run's own context, the same for every
node: the device, the loaded module, one dim environment per dim scope (an inlined call's
boundary node opens its callee's), and what ``denote_all(loops="expand")`` records.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, TypeAlias, Union

from tfexec.errors import EvalError, TfexecError, TypeCheckError
import torch

from tfexec.forward.check import ScopeChecks, check_node, static_shape
from tfexec.forward.data import ForwardData
from tfexec.forward.node import ForwardNode, Read
from tfexec.loading import LoadedModule
from tfexec.semantics import messages
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.liveness import last_reads
from tfexec.semantics.values import observed

if TYPE_CHECKING:
    from tfexec.forward.kinds import EnterCall

Ref: TypeAlias = Union[Read, tuple["Ref", ...]]
"""Where a value lives in a context: one read, or a tuple of refs (a ``Tuple`` node has no slot)."""
Getter = Callable[[list[object]], tuple[object, ...]]


class Run:
    """One run's context, shared by its nodes: device, loaded module, the dim environment of
    each dim scope, the runtime checks' bindings, and the trace of ``loops="expand"``."""

    __slots__ = ("loaded", "device", "contexts", "checks", "trace", "trace_prefix")

    def __init__(
        self, loaded: "LoadedModule | None", device: str | None, dims: dict[str, int], scopes: int,
        *, full: bool = False, trace: dict[str, object] | None = None,
    ) -> None:
        self.loaded = loaded
        self.device = device
        entry = EvaluateContext(loaded_module=loaded, device=device, dim_bindings=dims)
        self.contexts: list[EvaluateContext] = [entry] * scopes
        self.checks: ScopeChecks | None = ScopeChecks(scopes, dims) if full else None
        self.trace = trace
        self.trace_prefix = ""

    def open_scope(self, scope: int, dims: dict[str, int]) -> None:
        """Enter an inlined callee: its dim scope now has ``dims``."""
        self.contexts[scope] = self.contexts[0].scoped(dims)
        if self.checks is not None:
            self.checks.open(scope, dims)

    def enter(self, boundary: "EnterCall", args: tuple[object, ...]) -> None:
        """An inlined call's boundary with these arguments: check them, open its callee's scope."""
        self.open_scope(boundary.callee_scope, boundary.bindings(args))

    def iteration(self, prefix: str, trace: dict[str, object]) -> "Run":
        """This run, recording one loop iteration's values into ``trace`` under ``prefix``."""
        child = Run.__new__(Run)
        child.loaded, child.device, child.contexts, child.checks = self.loaded, self.device, self.contexts, self.checks
        child.trace, child.trace_prefix = trace, prefix
        return child


Step = tuple[Callable[..., object], int, int, int, "Getter | None", int, "tuple[int, ...] | None"]
"""The run loop's view of one node: ``(f, kind, a, b, get, scope, frees)``. ``kind`` says how
``f`` is called: ``ONE``/``TWO`` — an op kernel on the values of slots ``a`` (and ``b``);
``DIRECT`` — an op kernel on the values ``get`` takes out; ``COMPUTE`` — the node kind's
``compute(run, scope, values)``. ``frees`` are the slots it reads last (None: none)."""
ONE, TWO, DIRECT, COMPUTE = 1, 2, 3, 0


@dataclass(frozen=True, slots=True, eq=False)
class Body:
    """A lowered node list: ``data``, the ``outputs`` reference, the keyed references (in the
    table's order) and, derived from them, each node's step."""

    data: ForwardData
    outputs: Ref
    keyed: tuple[tuple[str, Ref], ...]
    frees: tuple[tuple[int, ...], ...] = field(init=False)
    steps: tuple[Step, ...] = field(init=False)
    static: tuple["tuple[torch.dtype, tuple[int, ...]] | None", ...] = field(init=False)
    """Per node, its declared dtype and shape when the type is a tensor with static dims only:
    a value equal to them needs no further check (nothing would bind)."""

    def __post_init__(self) -> None:
        nodes = self.data.nodes
        kept = [r.slot for r in leaves(self.outputs)]
        object.__setattr__(self, "frees", last_reads([[r.slot for r in n.reads] for n in nodes], kept))
        object.__setattr__(self, "steps", tuple(_step(n, f) for n, f in zip(nodes, self.frees)))
        object.__setattr__(self, "static", tuple(static_shape(n.type) for n in nodes))

    @property
    def nodes(self) -> Sequence[ForwardNode]:
        return self.data.nodes

    def execute(self, run: Run, values: list[object], *, free: bool, check: bool = False) -> list[object]:
        """Append every node's value to ``values`` (the inputs) and return it."""
        append = values.append
        try:
            if check:
                checks = run.checks
                assert checks is not None
                for (f, kind, a, b, get, scope, frees), node, static in zip(self.steps, self.data.nodes, self.static):
                    if kind == TWO:
                        out = f(values[a], values[b])
                    elif kind == ONE:
                        out = f(values[a])
                    elif kind == DIRECT:
                        out = f(*get(values))  # type: ignore[misc]
                    else:
                        out = f(run, scope, get(values))  # type: ignore[misc]
                    if static is None or not isinstance(out, torch.Tensor) or (out.dtype, out.shape) != static:
                        try:
                            check_node(node, observed(out, run.device), checks)
                        except TypeCheckError as refused:
                            raise _CheckRefused(refused) from None
                    append(out)
                    if free and frees:
                        for s in frees:
                            values[s] = None
            else:
                for f, kind, a, b, get, scope, frees in self.steps:
                    if kind == TWO:
                        append(f(values[a], values[b]))
                    elif kind == ONE:
                        append(f(values[a]))
                    elif kind == DIRECT:
                        append(f(*get(values)))  # type: ignore[misc]
                    else:
                        append(f(run, scope, get(values)))  # type: ignore[misc]
                    if free and frees:
                        for s in frees:
                            values[s] = None
        except Exception as exc:
            _reraise(self.data.nodes[len(values) - self.data.n_inputs], exc)
        return values


def _step(node: ForwardNode, frees: tuple[int, ...]) -> Step:
    direct, reads = node.what.direct, node.reads
    last = frees or None
    if direct is not None and not any(r.path for r in reads):
        if len(reads) == 1:
            return (direct, ONE, reads[0].slot, 0, None, node.scope, last)
        if len(reads) == 2:
            return (direct, TWO, reads[0].slot, reads[1].slot, None, node.scope, last)
    if direct is not None:
        return (direct, DIRECT, 0, 0, getter(reads), node.scope, last)
    return (node.what.compute, COMPUTE, 0, 0, getter(reads), node.scope, last)


def getter(reads: Sequence[Read]) -> Getter:
    """The function that takes a node's read values out of a context, in order."""
    if any(r.path for r in reads):
        return lambda v: tuple(project(v[r.slot], r.path) for r in reads)
    slots = [r.slot for r in reads]
    if not slots:
        return lambda v: ()
    if len(slots) == 1:
        (s,) = slots
        return lambda v: (v[s],)
    return itemgetter(*slots)


def project(value: object, path: tuple[int, ...]) -> object:
    """Field ``path`` of a (nested) tuple value."""
    for i in path:
        assert isinstance(value, tuple)
        value = value[i]
    return value


def read(ref: Ref, values: Sequence[object]) -> object:
    """The value a reference denotes in an evaluated context: a tensor or a tuple."""
    if isinstance(ref, Read):
        return project(values[ref.slot], ref.path)
    return tuple(read(r, values) for r in ref)


def leaves(ref: Ref) -> list[Read]:
    """The reads of ``ref``, in field order."""
    if isinstance(ref, Read):
        return [ref]
    out: list[Read] = []
    for r in ref:
        out.extend(leaves(r))
    return out


class _CheckRefused(Exception):
    """The runtime check refused a node's value: its ``TypeCheckError`` surfaces as it is (a
    kernel raising ``TypeCheckError`` itself is a failing dispatch, wrapped like any other)."""

    def __init__(self, error: TypeCheckError) -> None:
        super().__init__(str(error))
        self.error = error


def _node_error(node: ForwardNode, exc: Exception) -> Exception:
    """The error a failing node surfaces: the runtime check's refusal as it is; an op kernel's
    failure wrapped exactly as the visitor wraps it; every other node raises tfexec errors that
    are already final."""
    if isinstance(exc, _CheckRefused):
        return exc.error
    if node.what.dispatch:
        return messages.dispatch_failed(node.source, exc)
    if isinstance(exc, TfexecError):
        return exc
    return EvalError(f"internal error in lowered node {node.label}: {type(exc).__name__}: {exc}")


def _reraise(node: ForwardNode, exc: Exception) -> None:
    err = _node_error(node, exc)
    if err is exc:
        raise exc
    if isinstance(exc, _CheckRefused):
        raise err from None
    raise err from exc


def record(
    keyed: Sequence[tuple[str, Ref]], values: Sequence[object], prefix: str, nested: dict[str, object],
    out: dict[str, object], device: "str | None",
) -> None:
    """Write a scope's keyed values into ``out`` in the visitor's order: each loop's
    per-iteration values (taken from ``nested``) just before the loop's own value; a host-int
    index value is recorded as its tensor."""
    for key, ref in keyed:
        full = prefix + key
        for k in [k for k in nested if k.startswith(full + "[")]:
            out[k] = nested.pop(k)
        out[full] = observed(read(ref, values), device)
    out.update(nested)


__all__ = ["Body", "Getter", "Ref", "Run", "getter", "leaves", "project", "read", "record"]
