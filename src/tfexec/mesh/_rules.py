"""The mesh rules: how a participant evaluates each op on DTensor values.

``ShardLayout`` maps onto DTensor placements one mesh axis at a time: ``Split(a)`` is
``Shard(a)`` and ``Replicate()`` is ``Replicate()``. Two mesh axes splitting one tensor
axis split it in mesh-axis order (the first mesh axis outermost), which is DTensor's order.

A participant holds three kinds of tensor values:

* **distributed** — a ``DTensor``: a logical value spread over the mesh;
* **logical** — a plain tensor that every participant holds whole and alike (constants,
  ``full``/``arange``, loop indices, and results computed only from such values);
* **per-participant** — a plain tensor that differs between participants: the result of
  ``local`` on a split axis, and everything computed from one.

``MeshState.wrap`` turns a single-participant handler into a mesh one: with no
per-participant operand, logical plain operands join distributed ones as replicated
DTensors and the handler's own kernel runs on DTensors (DTensor propagates the
sharding); with a per-participant operand, every distributed operand is gathered to its
logical value (``full_tensor``) and the kernel runs on plain tensors, giving a
per-participant result. ``reshard`` and ``local`` have rules of their own, in
``mesh_rules``.
"""

import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.distributed.tensor
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor
from torch.distributed.tensor import Replicate as DReplicate
from torch.distributed.tensor import Shard as DShard
from torch.distributed.tensor.placement_types import Placement

from tfexec.errors import EvalError, TfexecError
from tfexec.ir.ops.distribution import Local, Reshard
from tfexec.ir.types import Mesh, ShardLayout, Split
from tfexec.mesh._internals import (
    EvaluateContext,
    Handler,
    TensorValue,
    TupleValue,
    Value,
    as_tensor,
    eval_registry,
    kernel_arg,
    reason_of,
    type_of_data,
)
from tfexec.mesh._failures import is_comm_error
from tfexec.mesh._layouts import split_axis_error, uneven_split
from tfexec.mesh._progress import Progress
from tfexec.visitor import AnalysisRegistry


def placements(layout: ShardLayout, rank: int) -> list[Placement]:
    """The DTensor placements of ``layout`` for a value of ``rank`` (a Split naming no axis
    is an ``EvalError``)."""
    why = split_axis_error(layout, rank)
    if why is not None:
        raise EvalError(why)
    return [DShard(a.tensor_axis % rank) if isinstance(a, Split) else DReplicate() for a in layout.attrs]


def placed(placements_: tuple[Placement, ...] | list[Placement]) -> str:
    return "(" + ", ".join(repr(p) for p in placements_) + ")"


@dataclass(slots=True)
class MeshState:
    """One participant's run: its device mesh, the IR mesh, its progress slot, and the
    per-participant tensors it made (by identity, without keeping them alive)."""

    device_mesh: DeviceMesh
    mesh: Mesh
    slot: Progress
    op_nodes: dict[int, int] = field(default_factory=dict)
    _local: dict[int, "weakref.ref[torch.Tensor]"] = field(default_factory=dict)

    # -- kinds of values -------------------------------------------------------------

    def is_local(self, t: torch.Tensor) -> bool:
        ref = self._local.get(id(t))
        return ref is not None and ref() is t

    def mark(self, value: Value) -> None:
        """Record every tensor of ``value`` as per-participant."""
        if isinstance(value, TensorValue):
            if not isinstance(value.data, DTensor):
                if len(self._local) > 4096:
                    self._local = {k: r for k, r in self._local.items() if r() is not None}
                self._local[id(value.data)] = weakref.ref(value.data)
        elif isinstance(value, TupleValue):
            for v in value.elements:
                self.mark(v)

    def has_local(self, value: Value) -> bool:
        if isinstance(value, TensorValue):
            return value.scalar is None and not isinstance(value.data, DTensor) and self.is_local(value.data)
        return isinstance(value, TupleValue) and any(self.has_local(v) for v in value.elements)

    def has_dtensor(self, value: Value) -> bool:
        if isinstance(value, TensorValue):
            return isinstance(value.data, DTensor)
        return isinstance(value, TupleValue) and any(self.has_dtensor(v) for v in value.elements)

    def gathered(self, value: Value) -> Value:
        """``value`` with every distributed tensor replaced by its logical value."""
        if isinstance(value, TensorValue):
            if isinstance(value.data, DTensor):
                return TensorValue(value.data.full_tensor(), value.type)
            return value
        assert isinstance(value, TupleValue)
        return TupleValue(tuple(self.gathered(v) for v in value.elements))

    def replicated(self, value: Value) -> Value:
        """``value`` with a logical plain tensor made a replicated DTensor (tuples stay as
        they are: their fields are indices read as Python ints)."""
        if isinstance(value, TensorValue) and value.scalar is None and not isinstance(value.data, DTensor):
            return TensorValue(self.as_dtensor(value.data), value.type)
        return value

    def as_dtensor(self, t: torch.Tensor) -> DTensor:
        """A logical tensor as a DTensor (a plain one is replicated on every mesh axis)."""
        if isinstance(t, DTensor):
            return t
        return DTensor.from_local(t, self.device_mesh, [DReplicate()] * self.device_mesh.ndim, run_check=False)

    def distribute(self, t: torch.Tensor, layout: ShardLayout) -> DTensor:
        """The logical tensor ``t`` redistributed to ``layout`` (a real ``redistribute``)."""
        self.check_mesh(layout)
        where = placements(layout, t.dim())
        why = uneven_split(layout, tuple(t.shape))
        if why is not None:
            raise EvalError(why)
        return self.as_dtensor(t).redistribute(self.device_mesh, where)

    def check_mesh(self, layout: ShardLayout) -> None:
        if layout.mesh != self.mesh:
            raise EvalError(f"{layout} is over {layout.mesh}, but this run's mesh is {self.mesh}")

    # -- handlers -----------------------------------------------------------------------

    def enter(self, ctx: EvaluateContext) -> None:
        self.slot.enter(self.op_nodes.get(id(ctx.op), -1))

    def wrap(self, base: Handler) -> Handler:
        """The mesh form of a single-participant handler (see the module docstring)."""

        def handler(ctx: EvaluateContext) -> Value:
            self.enter(ctx)
            args = ctx.args
            assert ctx.op is not None
            if any(self.has_local(a) for a in args):
                value = base(ctx.for_op(ctx.op, tuple(self.gathered(a) for a in args), ctx.result_type))
                self.mark(value)
                return value
            if not any(self.has_dtensor(a) for a in args):
                return base(ctx)
            mesh_args = tuple(self.replicated(a) for a in args)
            try:
                return base(ctx.for_op(ctx.op, mesh_args, ctx.result_type))
            except Exception as exc:
                if isinstance(exc, TfexecError) or not _raised_in_dtensor(exc) or is_comm_error(exc):
                    raise  # a communication error is a peer gone, not a placement DTensor cannot compute
                shown = ", ".join(
                    placed(a.data.placements) if isinstance(a, TensorValue) and isinstance(a.data, DTensor) else "plain"
                    for a in mesh_args
                )
                raise EvalError(
                    f"the mesh evaluator computes {ctx.op.name} with DTensor on operands placed [{shown}], and it "
                    f"failed: {reason_of(exc).rstrip('.')}. If DTensor has no rule for these placements, reshard the operands "
                    "(for instance to Replicate() on every mesh axis) before this op"
                ) from exc

        return handler


_DTENSOR_DIR = os.path.dirname(torch.distributed.tensor.__file__)


def _raised_in_dtensor(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by DTensor's dispatch (sharding propagation, redistribution)."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(_DTENSOR_DIR):
            return True
        tb = tb.tb_next
    return False


MeshRule = Callable[[MeshState, Handler], Handler]
mesh_rules: AnalysisRegistry[MeshRule] = AnalysisRegistry("mesh_rules")
"""Ops whose mesh meaning is not the generic wrapping: given the state and the
single-participant handler, they return the mesh handler."""


@mesh_rules.register(Reshard)
def _reshard(state: MeshState, base: Handler) -> Handler:
    def handler(ctx: EvaluateContext) -> Value:
        state.enter(ctx)
        op, (value,) = ctx.op, ctx.args
        assert isinstance(op, Reshard)
        target = op.layout
        if not isinstance(target, ShardLayout) or not isinstance(value, TensorValue):
            return base(ctx)  # a layout-domain or no layout: the logical value, as on one participant
        if state.has_local(value):
            raise EvalError(
                f"reshard to {target} of a per-participant value (it depends on local of a split value): such a "
                "value has no logical value to distribute"
            )
        data = as_tensor(ctx, kernel_arg(value))
        moved = state.distribute(data, target)
        return TensorValue(moved, type_of_data(moved, target))

    return handler


@mesh_rules.register(Local)
def _local(state: MeshState, base: Handler) -> Handler:
    def handler(ctx: EvaluateContext) -> Value:
        state.enter(ctx)
        (value,) = ctx.args
        layout = value.type.layout if isinstance(value, TensorValue) else None
        if not isinstance(layout, ShardLayout) or not layout.splits or not isinstance(value, TensorValue):
            return base(ctx)  # no split: the local view is the whole value (evaluator spec §6)
        if state.has_local(value):
            raise EvalError(f"local of a per-participant value typed {layout} has no shard to take")
        shard = state.distribute(value.data, layout).to_local()
        result = TensorValue(shard, type_of_data(shard, layout.layout))
        state.mark(result)
        return result

    return handler


def install(state: MeshState) -> dict[type, Handler]:
    """Make this process's ``eval_registry`` the mesh one: every handler wrapped, ``reshard``
    and ``local`` by their mesh rules; returns the handlers it replaced, for ``restore``.
    A participant process of tfexec's own launcher exists for the mesh run alone and never
    restores; a participant in a user's process (``evaluate_distributed``) restores after."""
    before: dict[type, Handler] = {}
    for key in eval_registry.keys():  # noqa: SIM118 - an AnalysisRegistry, not a dict
        base = eval_registry.lookup(key)
        assert base is not None
        before[key] = base
        rule = mesh_rules.lookup(key)
        eval_registry.add(key, rule(state, base) if rule is not None else state.wrap(base), override=True)
    return before


def restore(before: dict[type, Handler]) -> None:
    """Put back the handlers ``install`` replaced."""
    for key, handler in before.items():
        eval_registry.add(key, handler, override=True)
