"""What a lowered node computes: a small closed set of node kinds, each a function of the
values of the node's declared reads and the run's context (``tfexec.forward.run.Run``).

* ``OpApply`` — an op's kernel applied to its operands (a value rule's call site);
* ``HandlerCall`` — a plain ``register_eval`` handler called on its operands' values;
* ``MakeConstant`` — a constant made on the run's device; ``ReadWeight`` — a module weight;
* ``EnterCall`` — an inlined call's boundary: the arguments checked against the callee's
  parameters, the callee's dim scope opened; its value is the tuple of the arguments;
* ``RunLoop`` — a loop: a nested ``Body`` run once per iteration;
* ``Fail`` — an error the direct route raises at the same point (no handler, an unbound var).

Every rule a kind applies comes from ``tfexec.semantics``, shared with the direct route.
``dispatch`` marks the kinds whose failures are wrapped as the direct route wraps a
dispatch; ``direct``, when set, is a function of the read values alone (an op kernel that
needs nothing else, its weak scalars filled in), which the run loop calls without the kind's
frame.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, TypeAlias, Union

from tfexec.errors import EvalError
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Call, Constant, ConstTensor, Function, GridRegionExpr
from tfexec.ir.ops.base import Op
from tfexec.ir.types import TupleType, Type
from tfexec.forward.run import Body, Getter, Run, getter, leaves, read, record
from tfexec.semantics.binding import call_bindings
from tfexec.semantics.constants import const_tensor_data, index_tensor, materialize_constant
from tfexec.semantics.dispatch import Assembler, CallPlan, Fill, apply_handler, assembler, raw
from tfexec.semantics.keys import iteration_prefix
from tfexec.semantics.loops import trip_count
from tfexec.semantics.values import Value, as_value, host_indices, observed

Shape: TypeAlias = Union[int, tuple["Shape", ...]]
"""A value's tuple structure over a flat list: a leaf is its position in the list."""


def tensors_at(xs: Sequence[object], conv: tuple[int, ...], device: "str | None") -> Sequence[object]:
    """``xs`` with the host-int index values at positions ``conv`` made tensors (they are
    observed there: read by a kernel that takes tensors, a handler, a call's boundary)."""
    if not conv:
        return xs
    out = list(xs)
    for p in conv:
        out[p] = observed(out[p], device)
    return out


def rebuild(shape: Shape, flat: Sequence[object]) -> object:
    """The (nested) value ``shape`` describes, its leaves taken from ``flat``."""
    if isinstance(shape, int):
        return flat[shape]
    return tuple(rebuild(s, flat) for s in shape)


def shape_of_type(t: Type, start: int = 0) -> tuple[Shape, int]:
    """The shape of a value of type ``t`` over positions from ``start``, and the next position."""
    if isinstance(t, TupleType):
        fields: list[Shape] = []
        for f in t.fields:
            s, start = shape_of_type(f, start)
            fields.append(s)
        return tuple(fields), start
    return start, start + 1


@dataclass(frozen=True, slots=True, eq=False)
class OpApply:
    """``plan``'s kernel applied to its operands; ``fills`` says, per operand, where the read
    values go (``None``: the next one) and which operands are weak scalars."""

    plan: CallPlan
    fills: tuple[Fill, ...]
    conv: tuple[int, ...] = ()
    """Reads that may hold a host-int index value the kernel takes as a tensor (converted first)."""
    dispatch: ClassVar[bool] = True
    plain: bool = field(init=False)
    assemble: Assembler | None = field(init=False, repr=False)
    """The kernel's operands from the read values (None when they are the read values)."""
    direct: Callable[..., object] | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        plain = all(f is None for f in self.fills)
        object.__setattr__(self, "plain", plain)
        assemble = None if plain else assembler(self.fills)
        object.__setattr__(self, "assemble", assemble)
        kernel = self.plan.kernel
        assert kernel is not None
        direct: Callable[..., object] | None = None
        if not kernel.needs_ctx and not self.conv:
            fn = kernel.fn
            direct = fn if assemble is None else lambda *xs: fn(*assemble(xs))
        object.__setattr__(self, "direct", direct)

    def compute(self, run: Run, scope: int, xs: Sequence[object]) -> object:
        """The kernel on the operands assembled from ``xs`` (host-int index values at ``conv``
        made tensors first), with the scope's context when it needs one."""
        kernel = self.plan.kernel
        assert kernel is not None
        if self.conv:
            xs = tensors_at(xs, self.conv, run.device)
        operands = xs if self.assemble is None else self.assemble(xs)
        return kernel.fn(run.contexts[scope], *operands) if kernel.needs_ctx else kernel.fn(*operands)

    @property
    def op(self) -> Op:
        return self.plan.op

    def describe(self) -> str:
        return self.plan.op.name


@dataclass(frozen=True, slots=True, eq=False)
class HandlerCall:
    """``plan``'s plain handler called on the operands' values (``operands``: each operand's
    shape over the read values); ``result`` is the value's shape by the call's type."""

    plan: CallPlan
    operands: tuple[Shape, ...]
    result: Type
    conv: tuple[int, ...] = ()
    dispatch: ClassVar[bool] = False
    direct: ClassVar[None] = None

    @property
    def op(self) -> Op:
        return self.plan.op

    def compute(self, run: Run, scope: int, xs: Sequence[object]) -> object:
        xs = tensors_at(xs, self.conv, run.device)
        values = [as_value(rebuild(s, xs), lay) for s, lay in zip(self.operands, self.plan.operand_layouts)]
        return raw(apply_handler(self.plan, run.contexts[scope], values))

    def describe(self) -> str:
        return self.plan.op.name


@dataclass(frozen=True, slots=True, eq=False)
class MakeConstant:
    """A constant made on the run's device (core-ir §2)."""

    constant: Constant
    dispatch: ClassVar[bool] = False
    direct: ClassVar[None] = None

    def compute(self, run: Run, scope: int, xs: Sequence[object]) -> object:
        return materialize_constant(self.constant, run.device).data

    def describe(self) -> str:
        return "constant"


@dataclass(frozen=True, slots=True, eq=False)
class ReadWeight:
    """A module weight, read from the run's loaded module."""

    weight: ConstTensor
    dispatch: ClassVar[bool] = False
    direct: ClassVar[None] = None

    def compute(self, run: Run, scope: int, xs: Sequence[object]) -> object:
        return const_tensor_data(self.weight, run.contexts[scope])

    def describe(self) -> str:
        return f"weight {self.weight.name}"


@dataclass(frozen=True, slots=True, eq=False)
class EnterCall:
    """An inlined call's boundary: the arguments (``args``: their shapes over the read values,
    ``layouts``: theirs) checked against ``callee``'s parameters, which opens dim scope
    ``callee_scope``; the value is the tuple of the arguments, which the callee's parameters read."""

    call: Call
    callee: Function
    args: tuple[Shape, ...]
    layouts: tuple[object, ...]
    callee_scope: int
    conv: tuple[int, ...] = ()
    dispatch: ClassVar[bool] = False
    direct: ClassVar[None] = None

    def compute(self, run: Run, scope: int, xs: Sequence[object]) -> object:
        """The arguments, made of the reads (host-int indices made tensors), handed to
        ``run.enter`` (which checks them and opens the callee's scope) and returned."""
        xs = tensors_at(xs, self.conv, run.device)
        args = tuple(rebuild(s, xs) for s in self.args)
        run.enter(self, args)
        return args

    def bindings(self, args: tuple[object, ...]) -> dict[str, int]:
        """The callee's dim bindings for ``args``, checked against its parameters (hir §1.1)."""
        values = [as_value(a, lay) for a, lay in zip(args, self.layouts)]  # type: ignore[arg-type]
        return call_bindings(self.call, self.callee, values)

    def describe(self) -> str:
        return f"call {self.callee.name}"


@dataclass(frozen=True, slots=True, eq=False)
class RunLoop:
    """A loop: ``body`` runs once per iteration on the frontier values (the first
    ``n_front`` reads), the index and the carries (the rest of the reads, then each
    iteration's yields); ``result`` is the loop value's shape over the final carries (or,
    without carries, the last iteration's outputs). ``key`` is the loop's key in its scope,
    the prefix of its iterations' keys."""

    region: GridRegionExpr
    body: Body
    n_front: int
    result: Shape
    key: str
    dispatch: ClassVar[bool] = False
    direct: ClassVar[None] = None
    outputs: Getter = field(init=False, repr=False)
    """The body's output values (its outputs' leaves) taken out of an iteration's context."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "outputs", getter(leaves(self.body.outputs)))

    def compute(self, run: Run, scope: int, xs: Sequence[object]) -> object:
        n = trip_count(self.region, run.contexts[scope])
        device = run.device
        front = list(xs[: self.n_front])
        carries = [observed(c, device) for c in xs[self.n_front :]]  # carries are tensors
        body, outputs, check = self.body, self.outputs, run.checks is not None
        carried = bool(self.region.carried_args)
        host = host_indices(device)
        last: list[object] = []
        for i in range(n):
            values = [*front, i if host else index_tensor(i, device), *carries]
            if run.trace is None:
                body.execute(run, values, free=True, check=check)
            else:
                nested: dict[str, object] = {}
                iteration = run.iteration(iteration_prefix(run.trace_prefix + self.key, i), nested)
                body.execute(iteration, values, free=False, check=check)
                record(body.keyed, values, iteration.trace_prefix, nested, run.trace, device)
            outs = [observed(x, device) for x in outputs(values)]
            if carried:
                carries = outs
            else:
                last = outs
        return rebuild(self.result, carries if carried else last)

    def describe(self) -> str:
        return "grid"


@dataclass(frozen=True, slots=True, eq=False)
class Fail:
    """A node that raises ``error`` when reached: where the direct route raises it."""

    error: EvalError
    dispatch: ClassVar[bool] = False
    direct: ClassVar[None] = None

    def compute(self, run: Run, scope: int, xs: Sequence[object]) -> object:
        raise self.error

    def describe(self) -> str:
        return "error"


NodeKind: TypeAlias = OpApply | HandlerCall | MakeConstant | ReadWeight | EnterCall | RunLoop | Fail
