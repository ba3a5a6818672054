"""Op dispatch, decided once per call site and applied by both routes (evaluator spec §3).

``plan_call`` resolves everything static about one op ``Call``: the registry entry, the
refusals that do not depend on values (no handler, a wrong operand count, an expression
as an attribute), each operand's static view (a weak Python scalar, a run-time value, or
a tuple of those), the ``Arg``s a value rule is told, the ``Kernel`` it picks and the
layout of the result. The plan's kernel (or ``apply_handler``) then computes the value; the
direct route feeds them the operands' ``Value``s, the lowered graph the values of the
node's declared reads. Every failure is an ``EvalError`` prefixed by ``describe_expr(call)``.
"""

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeAlias, Union

import torch

from tfexec.errors import EvalError
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.ops.base import Op
from tfexec.ir.types import Layout, ShardLayout
from tfexec.ir.weak import OperandView, Weak, operand_view
from tfexec.semantics import messages
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.layouts import tensor_layout
from tfexec.semantics.registry import Arg, Kernel, OpRule, eval_registry
from tfexec.semantics.values import IndexValue, LayoutTree, TensorValue, TupleValue, Value, layout_leaf, relabel

Hole = None
"""In a ``Fill``: one operand value supplied at run time (a tensor, or a tuple of tensors)."""
Fill: TypeAlias = Union[Weak, None, tuple["Fill", ...]]
"""How a kernel's operand is assembled: a weak scalar, a run-time value (``Hole``), or a
tuple of those. ``OperandView`` is the same shape, read off the program."""


@dataclass(frozen=True, slots=True, eq=False)
class CallPlan:
    """Everything static about one op call site (see the module docstring).

    ``direct`` is true when every operand is a run-time value: the kernel's operands are
    then exactly the operands' values, in order.
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
    args = tuple(_arg(v, lay) for v, lay in zip(views, layouts))
    kernel = None
    if refusal is None and rule is not None and rule.value_rule is not None:
        try:
            kernel = rule.value_rule(op, args)
        except Exception as exc:  # a rule must not raise here; if one does, the call fails when reached
            refusal = messages.dispatch_failed(call, exc)
        if kernel is not None and not rule.value_rule.__module__.startswith(_CATALOGUE):
            kernel = _ir_dtype_checked(kernel)
    layout = op.value_layout(tuple(tensor_layout(lay) for lay in layouts))
    direct = all(v is None for v in views)
    return CallPlan(call, op, version, rule, refusal, views, layouts, args, kernel, layout, direct)


_CATALOGUE = "tfexec.semantics.rules."
"""Where the catalogue's value rules live: their kernels make IR dtypes by construction
(proofs_notes, Lemma 5); a user's value rule is checked at every call, on both routes."""


def _ir_dtype_checked(kernel: Kernel) -> Kernel:
    """``kernel`` refusing a result of a dtype the IR does not name (a user rule making complex64, say)."""
    fn = kernel.fn

    def checked(*operands: object) -> torch.Tensor:
        out = fn(*operands)
        if isinstance(out, torch.Tensor):
            DType.from_torch(out.dtype)  # TypeError: "torch dtype ... has no HIR DType; supported: ..."
        return out

    return dataclasses.replace(kernel, fn=checked)


_PLAIN_ARG, _WEAK_ARG = Arg(), Arg(weak=True)  # the common Args, shared (a program has one per operand)


def _arg(view: OperandView, layout: LayoutTree) -> Arg:
    if isinstance(view, Weak):
        return _WEAK_ARG
    if view is None:
        lay = tensor_layout(layout)
        return _PLAIN_ARG if lay is None else Arg(lay)
    return Arg(fields=tuple(_arg(v, layout_leaf(layout, i)) for i, v in enumerate(view)))


def fill(template: Fill, holes: Iterator[object]) -> object:
    """A kernel operand: ``template`` with each ``Hole`` taken, in order, from ``holes``."""
    if template is None:
        return next(holes)
    if isinstance(template, Weak):
        return template.value
    return tuple(fill(t, holes) for t in template)


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


def assemble(fills: Sequence[Fill], holes: Sequence[object]) -> list[object]:
    """A kernel's operands: one per ``fills`` entry, each ``Hole`` taken in order from ``holes``."""
    it = iter(holes)
    return [fill(f, it) for f in fills]


Assembler = Callable[[Sequence[object]], list[object]]


def assembler(fills: Sequence[Fill]) -> Assembler:
    """``assemble`` with ``fills`` fixed: each hole's position in ``holes`` is found once, here,
    not per call (the lowered graph assembles a node's operands this way at every run)."""
    position = [0]

    def part(f: Fill) -> Callable[[Sequence[object]], object]:
        if f is None:
            i = position[0]
            position[0] += 1
            return lambda holes: holes[i]
        if isinstance(f, Weak):
            value = f.value
            return lambda holes: value
        parts = [part(g) for g in f]
        return lambda holes: tuple([p(holes) for p in parts])

    parts = [part(f) for f in fills]
    return lambda holes: [p(holes) for p in parts]


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
    if not isinstance(value, (TensorValue, TupleValue)):
        raise messages.not_a_value(plan.call, plan.op, value)
    return relabel(value, plan.layout)
