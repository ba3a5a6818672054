"""The evaluator's registry (evaluator spec §3) and the value rules both routes share.

``eval_registry`` maps an op class to a handler ``(EvaluateContext) -> Value``; users add
handlers with ``@register_eval(MyOp)``. The built-in ops register a *value rule* instead:
``@value_rule(Add)`` on a function ``(op, operand_layouts) -> Kernel`` that pre-binds the
op's static attributes once. ``value_rule`` also registers the matching handler in
``eval_registry``, so the visitor dispatches through the registry as the spec says while
the lowering calls the very same kernel with nothing left to look up.
"""

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, TypeAlias, TypeVar

import torch

from tfexec.errors import EvalError, TfexecError
from tfexec.evaluator.context import EvaluateContext
from tfexec.evaluator.value import (
    TensorValue,
    Value,
    kernel_arg,
    layout_of,
    type_of_data,
)
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Call, is_expr
from tfexec.ir.ops.base import Op
from tfexec.ir.types import Layout, ShardLayout
from tfexec.visitor import AnalysisRegistry

Handler: TypeAlias = Callable[[EvaluateContext], Value]
Layouts: TypeAlias = "tuple[Layout | ShardLayout | None, ...]"
OpT = TypeVar("OpT", bound=Op)


@dataclass(frozen=True, slots=True)
class Kernel:
    """One op's value rule with its static attributes bound.

    ``fn(*args)`` — or ``fn(ctx, *args)`` when ``needs_ctx`` — maps operands (tensors, weak
    Python scalars, or tuples of them for ``Tuple`` operands) to the result tensor, whose
    dtype must be one the IR names. A kernel may read only ``ctx.device``,
    ``ctx.dim_bindings`` and ``ctx.loaded_module``: the lowering passes the run's context,
    not a per-call one.
    ``tensor_fn``, when set, is what ``fn`` computes when every operand is a tensor,
    callable without the context: the lowering uses it when no operand is a weak scalar.
    """

    fn: Callable[..., torch.Tensor]
    needs_ctx: bool = False
    tensor_fn: Callable[..., torch.Tensor] | None = None


Specialiser: TypeAlias = Callable[[Any, Any], Kernel]

eval_registry: AnalysisRegistry[Handler] = AnalysisRegistry("eval_registry")


def register_eval(op_cls: type[Op], *, override: bool = False) -> Callable[[Handler], Handler]:
    """Return the evaluator registration decorator for ``op_cls`` (evaluator spec §3)."""
    return eval_registry.register(op_cls, override=override)


def value_rule(op_cls: type[OpT]) -> Callable[[Callable[[OpT, Layouts], Kernel]], Callable[[OpT, Layouts], Kernel]]:
    """Register a built-in op's value rule, and the ``eval_registry`` handler that applies it."""

    def decorate(specialise: Callable[[OpT, Layouts], Kernel]) -> Callable[[OpT, Layouts], Kernel]:
        eval_registry.add(op_cls, _handler_for(specialise))
        return specialise

    return decorate


def lookup_value_rule(op_cls: type[Op]) -> Specialiser | None:
    """The value rule behind ``op_cls``'s registered handler; None when the handler is a
    plain ``register_eval`` one (then the lowering calls the handler itself)."""
    handler = eval_registry.lookup(op_cls)
    return None if handler is None else _rule_of_handler.get(handler)


_rule_of_handler: dict[Handler, Specialiser] = {}


Apply: TypeAlias = Callable[[Op, "tuple[Value, ...]", EvaluateContext], Value]
_apply_of_handler: dict[Handler, Apply] = {}


def rule_apply(handler: Handler) -> Apply | None:
    """For a handler made by ``value_rule``, the function it applies: ``apply(op, args, ctx)``
    computes what ``handler(ctx.for_op(op, args, ...))`` computes, without building the
    per-dispatch context (a value rule reads only the run's device, dims and module)."""
    return _apply_of_handler.get(handler)


def _handler_for(specialise: Callable[[OpT, Layouts], Kernel]) -> Handler:
    kernels: dict[tuple[Op, Layouts], tuple[Kernel, "Layout | ShardLayout | None"]] = {}

    def apply(op: Op, values: "tuple[Value, ...]", ctx: EvaluateContext) -> Value:
        # Operands as the kernel takes them; `plain` when all are tensors (no weak scalar, no tuple).
        args: list[object] = []
        layouts_list: list[Layout | ShardLayout | None] = []
        plain = True
        for a in values:
            if a.__class__ is TensorValue and a.scalar is None:
                args.append(a.data)
                layouts_list.append(a.type.layout)
            else:
                plain = False
                args.append(kernel_arg(a))
                layouts_list.append(layout_of(a))
        layouts = tuple(layouts_list)
        key = (op, layouts)
        try:
            entry = kernels.get(key)
        except TypeError:  # an op with an unhashable attribute: specialise without caching
            entry = (specialise(op, layouts), op.value_layout(layouts))  # type: ignore[arg-type]
        if entry is None:
            entry = kernels[key] = (specialise(op, layouts), op.value_layout(layouts))  # type: ignore[arg-type]
        kernel, layout = entry
        fast = kernel.tensor_fn
        if plain and fast is not None:
            data = fast(*args)  # what kernel.fn computes on tensor operands, one frame less
        elif kernel.needs_ctx:
            data = kernel.fn(ctx, *args)
        else:
            data = kernel.fn(*args)
        return TensorValue(data, type_of_data(data, layout))

    def handler(ctx: EvaluateContext) -> Value:
        op = ctx.op
        assert op is not None
        return apply(op, ctx.args, ctx)

    _rule_of_handler[handler] = specialise
    _apply_of_handler[handler] = apply
    return handler


def reason_of(exc: BaseException) -> str:
    """The user-facing reason for an exception raised inside a dispatch."""
    if isinstance(exc, TfexecError):
        return str(exc)
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else '(no message)'}"


def dispatch_error(call: Call, exc: BaseException) -> EvalError:
    """The ``EvalError`` for a failed dispatch of ``call``, prefixed by ``describe_expr``."""
    err = EvalError(f"{describe_expr(call)}: {reason_of(exc)}")
    err.__cause__ = exc
    return err


def expr_attribute_error(call: Call, op: Op) -> EvalError | None:
    """The ``EvalError`` for an op carrying an ``Expr`` as a static attribute, else None.

    Runtime data is always a ``Call`` operand (spec §4): a handler sees evaluated operands
    and must never re-enter the evaluator through an attribute.
    """
    for f in fields(op):
        if _holds_expr(getattr(op, f.name, None)):
            return EvalError(
                f"{describe_expr(call)}: attribute {f.name} of {type(op).__name__} is an expression; runtime data "
                "must be a Call operand, not an op attribute (evaluator spec §4)"
            )
    return None


def _holds_expr(value: object) -> bool:
    """Whether an attribute value is, or contains (in tuples, lists, dicts), an ``Expr``."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if is_expr(item):
            return True
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, (tuple, list)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return False


def is_value_rule_handler(handler: Handler) -> bool:
    """Whether ``handler`` applies a built-in value rule (its attributes are plain data by construction)."""
    return handler in _rule_of_handler


def missing_handler_error(call: Call) -> EvalError:
    """The ``EvalError`` for a call whose op class has no handler (it names the class)."""
    cls = type(call.target)
    return EvalError(f"{describe_expr(call)}: no evaluator handler is registered for op class {cls.__name__}")
