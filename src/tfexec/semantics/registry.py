"""The evaluator's registry (evaluator spec §3): one entry per op class, used by both routes.

``eval_registry`` maps an op class to an ``OpRule``: either a plain handler a user
registered with ``@register_eval(MyOp)`` — ``handler(ctx: EvaluateContext) -> Value`` — or
a built-in *value rule* registered with ``@value_rule(Add)``. A value rule is
``rule(op, args) -> Kernel``: given the op's static attributes and what is known of each
operand before the run (``Arg``: its layout, whether it is a weak Python scalar), it picks
the one function that computes the op's value at that call site. Both routes ask the rule
once per call site (``tfexec.semantics.dispatch.plan_call``) and call that same function;
an ``OpRule`` is also callable as a handler, so a caller holding only values (the mesh
evaluator wrapping a rule, a user dispatching by hand) gets the same result.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

import torch

from tfexec.errors import EvalError
from tfexec.ir.ops.base import Op
from tfexec.ir.types import Layout, ShardLayout
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.values import IndexValue, TensorValue, TupleValue, Value, type_of_data
from tfexec.visitor import AnalysisRegistry

Handler: TypeAlias = Callable[[EvaluateContext], Value]
OpT = TypeVar("OpT", bound=Op)


@dataclass(frozen=True, slots=True)
class Arg:
    """What a value rule knows of one operand before it has a value.

    ``layout`` is the layout the operand's value carries; ``weak`` says the operand is a
    weak Python scalar (``mul(x, 0.5)``), which the kernel then receives as the Python
    value; ``fields`` describes a tuple operand with weak fields (slice starts ``(0, t)``);
    ``index`` says the operand may be an index value (its type is ``i64[()]``), which a
    ``host_index`` kernel may receive as a host int — a kernel told no operand is one needs
    no run context to make tensors of them.
    """

    layout: Layout | ShardLayout | None = None
    weak: bool = False
    fields: tuple["Arg", ...] | None = None
    index: bool = False


@dataclass(frozen=True, slots=True)
class Kernel:
    """One call site's value function: ``fn(*operands)``, or ``fn(ctx, *operands)`` when
    ``needs_ctx`` (then it may read ``ctx.device``, ``ctx.dim_bindings`` and
    ``ctx.loaded_module``, nothing else). An operand is a tensor, a weak scalar's Python
    value, or a tuple of those; the result is a tensor of a dtype the IR names."""

    fn: Callable[..., torch.Tensor]
    needs_ctx: bool = False
    host_index: bool = False
    """The kernel does index arithmetic: an operand that is an index value (a loop's induction
    variable, a ``dim_*`` result) may reach it as a Python int, and it may return one — an
    index value, made a tensor only where observed (core-ir §2); such an int must fit in i64."""


ValueRule: TypeAlias = Callable[[Any, "tuple[Arg, ...]"], Kernel]
"""``rule(op, args) -> Kernel``: pure, and never raising for an op its constructor accepted."""


@dataclass(frozen=True, slots=True, eq=False)
class OpRule:
    """The registry entry of one op class: a plain ``handler`` or a built-in ``value_rule``.

    Calling it is calling the handler the evaluator spec describes (§3).
    """

    handler: Handler | None = None
    value_rule: ValueRule | None = None

    def __call__(self, ctx: EvaluateContext) -> Value:
        if self.handler is not None:
            return self.handler(ctx)
        assert self.value_rule is not None and ctx.op is not None
        args = tuple(arg_of_value(v) for v in ctx.args)
        kernel = self.value_rule(ctx.op, args)
        operands = [kernel_operand(v, kernel.host_index) for v in ctx.args]
        data: object = kernel.fn(ctx, *operands) if kernel.needs_ctx else kernel.fn(*operands)
        if type(data) is int:  # an index value (Kernel.host_index)
            return IndexValue(data, ctx.device)
        assert isinstance(data, torch.Tensor)
        return TensorValue(data, type_of_data(data, ctx.op.value_layout(tuple(a.layout for a in args))))


class EvalRegistry(AnalysisRegistry[OpRule]):
    """``AnalysisRegistry`` of ``OpRule``s; a plain callable registered directly is taken as a handler."""

    def add(self, key: type, handler: "OpRule | Handler", *, override: bool = False) -> None:
        rule = handler if isinstance(handler, OpRule) else OpRule(handler=handler)
        super().add(key, rule, override=override)


eval_registry = EvalRegistry("eval_registry")


def register_eval(op_cls: type[Op], *, override: bool = False) -> Callable[[Handler], Handler]:
    """Register the decorated function as the value rule of ``op_cls`` (evaluator spec §3).

    A handler is ``handler(ctx: EvaluateContext) -> Value`` and may rely on exactly this:

    * ``ctx.op`` is the op instance (its static attributes);
    * ``ctx.args`` holds one ``Value`` per call operand, in order — a ``TensorValue``
      (``.data``, its logical tensor; ``.type``, its concrete type with layout; ``.scalar``,
      the Python value when the operand is a weak scalar such as the ``0.5`` of
      ``mul(x, 0.5)``) or a ``TupleValue`` — and their count is within ``op_cls.min_args``
      .. ``max_args`` (checked before the handler runs);
    * ``ctx.device``, ``ctx.dim_bindings`` (the sizes of the scope's ``DimVar``s) and
      ``ctx.loaded_module`` describe the run;
    * ``ctx.result_type`` is the call's inferred type, or ``None`` when type inference has
      not run: a handler must not need it.

    It returns a ``TensorValue`` or ``TupleValue`` computed where its operands are, without
    modifying them: tuple fields are ``Value``s, each tensor's ``data`` is a ``torch.Tensor``
    of its ``type``'s dtype and shape, and the tuple tree is the call's inferred type's
    (``tfexec.semantics.contract`` checks this on both routes; anything else is an
    ``EvalError`` naming the call). That value becomes the call's value, carrying the layout
    ``op.value_layout`` gives (and no weak scalar). Anything it raises becomes an
    ``EvalError`` prefixed by ``describe_expr`` of the call. Both routes call it: the direct
    route at each dispatch, the lowered graph from the call's node. Registering a class
    twice is an error unless ``override=True``.
    """

    def decorate(handler: Handler) -> Handler:
        eval_registry.add(op_cls, OpRule(handler=handler), override=override)
        return handler

    return decorate


def value_rule(op_cls: type[OpT]) -> Callable[[Callable[[OpT, "tuple[Arg, ...]"], Kernel]], Callable[[OpT, "tuple[Arg, ...]"], Kernel]]:
    """Register a built-in op's value rule (see the module docstring)."""

    def decorate(rule: Callable[[OpT, "tuple[Arg, ...]"], Kernel]) -> Callable[[OpT, "tuple[Arg, ...]"], Kernel]:
        eval_registry.add(op_cls, OpRule(value_rule=rule))
        return rule

    return decorate


def lookup_value_rule(op_cls: type[Op]) -> ValueRule | None:
    """The built-in value rule registered for ``op_cls``, or None (no entry, or a plain handler)."""
    entry = eval_registry.lookup(op_cls)
    return None if entry is None else entry.value_rule


def arg_of_value(value: Value) -> Arg:
    """The ``Arg`` a value stands for (what a rule would have been told about it)."""
    if isinstance(value, TensorValue):
        return Arg(value.type.layout, value.scalar is not None, index=isinstance(value, IndexValue))
    fields = tuple(arg_of_value(v) for v in value.elements)
    return Arg(fields=fields) if any(f.weak or f.fields is not None for f in fields) else Arg()


def kernel_operand(value: Value, host_index: bool = False) -> object:
    """What a kernel receives for an operand value: its tensor, its weak scalar, or a tuple of
    those (with ``host_index``, an index value's host int)."""
    if isinstance(value, TensorValue):
        if host_index and isinstance(value, IndexValue):
            return value.index
        return value.data if value.scalar is None else value.scalar
    if isinstance(value, TupleValue):
        return tuple(kernel_operand(v, host_index) for v in value.elements)
    raise EvalError(f"an operand must be a Value, found {type(value).__name__}")
