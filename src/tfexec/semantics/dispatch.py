"""Op dispatch, decided once per call site and applied by both routes (evaluator spec §3).

``plan_call`` resolves everything static about one op ``Call``: the registry entry, the
refusals that do not depend on values (no handler, a wrong operand count, an expression
as an attribute), each operand's static view (a weak Python scalar, a run-time value, or
a tuple of those), the ``Arg``s a value rule is told, the ``Kernel`` it picks and the
layout of the result. The plan's kernel (or ``apply_handler``) then computes the value; the
direct route feeds them the operands' ``Value``s, the lowered graph the values of the
node's declared reads. Every failure is an ``EvalError`` prefixed by ``describe_expr(call)``.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TypeAlias, Union

import torch

from tfexec.errors import EvalError
from tfexec.ir.expr import Call
from tfexec.ir.ops.base import Op
from tfexec.ir.types import Layout, ShardLayout, TupleType, Type
from tfexec.ir.weak import OperandView, Weak, operand_view
from tfexec.semantics import messages
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.contract import check_handler_result, checked_kernel
from tfexec.semantics.layouts import tensor_layout
from tfexec.semantics.registry import Arg, Kernel, OpRule, eval_registry
from tfexec.semantics.values import (
    IndexValue, LayoutTree, TensorValue, TupleValue, Value, layout_leaf, may_hold_index, relabel,
)

Hole = None
"""In a ``Fill``: one operand value supplied at run time (a tensor, or a tuple of tensors)."""
Fill: TypeAlias = Union[Weak, None, tuple["Fill", ...]]
"""How a kernel's operand is assembled: a weak scalar, a run-time value (``Hole``), or a
tuple of those. ``OperandView`` is the same shape, read off the program."""


@dataclass(frozen=True, slots=True, eq=False)
class CallPlan:
    """Everything static about one op call site (see the module docstring).

    ``direct`` is true when every operand is a run-time value: the kernel's operands are
    then exactly the operands' values, in order; otherwise ``assemble`` makes them of the
    operands' run-time parts (``holes_of``) and the weak scalars.
    """

    call: Call
    op: Op
    version: int
    rule: OpRule | None
    refusal: EvalError | None
    views: tuple[OperandView, ...]
    operand_layouts: tuple[LayoutTree, ...]
    args: tuple[Arg, ...]
    kernel: Kernel | None
    layout: Layout | ShardLayout | None
    direct: bool
    assemble: "Assembler | None"

    @property
    def current(self) -> bool:
        """Whether the registry is still as it was when the plan was made."""
        return self.version == eval_registry.version


def plan_call(call: Call, op: Op, operand_layouts: Sequence[LayoutTree]) -> CallPlan:
    """The ``CallPlan`` of ``call`` (an op call) whose operands carry ``operand_layouts``."""
    version = eval_registry.version
    rule = eval_registry.lookup(type(op))
    views = tuple(operand_view(a) for a in call.args)
    layouts = tuple(operand_layouts)
    refusal = messages.missing_handler(call) if rule is None else messages.arity(call, op)
    if refusal is None and rule is not None and rule.value_rule is None:
        refusal = messages.expr_attribute(call, op)
    args = tuple(_arg(v, lay, a.checked_type) for v, lay, a in zip(views, layouts, call.args))
    kernel = None
    if refusal is None and rule is not None and rule.value_rule is not None:
        try:
            kernel = rule.value_rule(op, args)
        except Exception as exc:  # a rule must not raise here; if one does, the call fails when reached
            refusal = messages.dispatch_failed(call, exc)
        if kernel is not None and not rule.value_rule.__module__.startswith(_CATALOGUE):
            kernel = checked_kernel(kernel, type(op).__name__)
    layout = op.value_layout(tuple(tensor_layout(lay) for lay in layouts))
    direct = all(v is None for v in views)
    assemble = None if direct or kernel is None else assembler(views)
    return CallPlan(call, op, version, rule, refusal, views, layouts, args, kernel, layout, direct, assemble)


_CATALOGUE = "tfexec.semantics.rules."
"""Where the catalogue's value rules live: their kernels make IR dtypes by construction
(proofs_notes, Lemma 5); a user's value rule's kernel is checked at every call, on both
routes (``tfexec.semantics.contract``)."""


_PLAIN_ARG, _WEAK_ARG = Arg(), Arg(weak=True)  # the common Args, shared (a program has one per operand)


def _arg(view: OperandView, layout: LayoutTree, t: Type | None) -> Arg:
    """What the rule is told of one operand of static type ``t`` (None: not inferred, so it
    may be anything, an index value included)."""
    if isinstance(view, Weak):
        return _WEAK_ARG
    if view is None:
        lay = tensor_layout(layout)
        index = t is None or may_hold_index(t)
        return _PLAIN_ARG if lay is None and not index else Arg(lay, index=index)
    types = t.fields if isinstance(t, TupleType) else (None,) * len(view)
    return Arg(fields=tuple(_arg(v, layout_leaf(layout, i), f) for i, (v, f) in enumerate(zip(view, types))))


def holes_of(views: Sequence[OperandView], values: Sequence[Value], out: list[object], host: bool = False) -> list[object]:
    """The run-time parts of operand ``values`` (raw data) that ``views`` leave as holes; with
    ``host``, an index value as its host int (for a ``host_index`` kernel)."""
    for view, value in zip(views, values):
        if view is None:
            out.append(raw(value, host))
        elif isinstance(view, tuple):
            assert isinstance(value, TupleValue)
            holes_of(view, value.elements, out, host)
    return out


def raw(value: Value, host: bool = False) -> object:
    """A value's data: its tensor (with ``host``, an index value's host int), or a tuple of raw fields."""
    if isinstance(value, TensorValue):
        if host and isinstance(value, IndexValue):
            return value.index
        return value.data
    return tuple(raw(v, host) for v in value.elements)


Assembler = Callable[[Sequence[object]], Sequence[object]]


def assembler(fills: Sequence[Fill]) -> Assembler:
    """A kernel's operands, one per ``fills`` entry, each ``Hole`` taken in order from the
    run-time ``holes`` it is given: the weak scalars' values are appended to the holes, and
    each operand (a tuple one too) is then picked out of that by an ``itemgetter`` whose
    positions are found once, here, not per call."""
    n_holes = _count_holes(fills)
    holes = iter(range(n_holes))
    consts: list[object] = []

    def position(f: Fill) -> Pick:
        if f is None:
            return next(holes)
        if isinstance(f, Weak):
            consts.append(f.value)
            return n_holes + len(consts) - 1
        return tuple(position(g) for g in f)

    top = _picker(tuple(position(f) for f in fills))
    extra = tuple(consts)
    if not extra:
        return top
    return lambda xs: top((*xs, *extra))


Pick: TypeAlias = Union[int, tuple["Pick", ...]]
"""Where an operand comes from: a position among the holes and weak values, or a tuple of picks."""


def _picker(pick: tuple[Pick, ...]) -> Assembler:
    """The function taking the tuple ``pick`` describes out of the holes and weak values."""
    if len(pick) >= 2 and all(type(p) is int for p in pick):
        whole: Assembler = itemgetter(*pick)  # one C call, making the tuple
        return whole
    parts: list[Callable[[Sequence[object]], object]] = [
        itemgetter(p) if isinstance(p, int) else _picker(p) for p in pick
    ]
    return lambda xs: tuple([part(xs) for part in parts])


def _count_holes(fills: Sequence[Fill]) -> int:
    return sum(1 if f is None else 0 if isinstance(f, Weak) else _count_holes(f) for f in fills)


def handler_operands(plan: CallPlan, values: Sequence[Value]) -> tuple[Value, ...]:
    """The operands a plain handler sees: the values, a weak scalar marked with its ``scalar``."""
    return tuple(_marked(v, value) for v, value in zip(plan.views, values))


def _marked(view: OperandView, value: Value) -> Value:
    if view is None:
        return value
    if isinstance(view, Weak):
        assert isinstance(value, TensorValue)
        return TensorValue(value.data, value.type, scalar=view.value)
    assert isinstance(value, TupleValue)
    return TupleValue(tuple(_marked(v, e) for v, e in zip(view, value.elements)))


def apply_handler(plan: CallPlan, ctx: EvaluateContext, values: Sequence[Value]) -> Value:
    """Call ``plan``'s plain handler on the operand values; its result is taken as the call's
    value carrying the plan's layout and no weak scalar. Raises ``EvalError``."""
    rule = plan.rule
    assert rule is not None and rule.handler is not None
    try:
        value = rule.handler(ctx.for_op(plan.op, handler_operands(plan, values), plan.call.checked_type))
    except Exception as exc:  # every failure surfaces as EvalError (spec §3)
        raise messages.dispatch_failed(plan.call, exc) from exc
    check_handler_result(plan.call, type(plan.op).__name__, value, ctx.dim_bindings)
    return relabel(value, plan.layout)
