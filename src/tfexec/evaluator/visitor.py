"""``EvaluatorVisitor`` and ``evaluate`` (evaluator spec §2, §4, §5): the direct route.

The visitor walks a scope's schedule (post-order, operands first) over an environment
keyed by ``id(expr)``, so a shared sub-DAG is evaluated once; each value is dropped after
its last reader unless the caller keeps the whole table. Function calls run the callee in
a fresh environment; loops run their variant body nodes once per iteration over values
of the invariant frontier computed once, before the loop.
"""

import sys
from collections.abc import Callable
from typing import Literal

import torch

from tfexec.api_checks import public
from tfexec.errors import EvalError, TfexecError
from tfexec.evaluator.context import EvaluateContext
from tfexec.evaluator.registry import (
    Apply,
    Handler,
    dispatch_error,
    eval_registry,
    expr_attribute_error,
    missing_handler_error,
    rule_apply,
)
from tfexec.evaluator.runtime import (
    bind_inputs,
    call_bindings,
    const_tensor_value,
    index_value,
    materialize_constant,
    rebind,
    trip_count,
    unbound_var_error,
)
from tfexec.evaluator.schedule import (
    Schedule,
    build_schedule,
    function_schedule,
    loop_schedule,
    pending_order,
)
from tfexec.evaluator.value import TensorValue, TupleValue, Value, to_python
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import (
    Call,
    Constant,
    ConstTensor,
    Expr,
    Function,
    GridRegionExpr,
    Tuple,
    TupleGetItem,
    Var,
)
from tfexec.ir.graph import loop_plan
from tfexec.ir.ops.base import Op
from tfexec.keys import ScopeKeys, function_keys, is_reported, loop_keys
from tfexec.loading import LoadedModule
from tfexec.visitor import ExprVisitor

LoopKeys = Literal["collapse", "expand"]
_NODE_CLASSES: tuple[type, ...] = (Var, Constant, ConstTensor, Call, Tuple, TupleGetItem, GridRegionExpr)


class EvaluatorVisitor(ExprVisitor[Value]):
    """Evaluate expressions with identity-based memoisation (``self.memo`` is the environment).

    ``table``, when given, receives every reported node's value under its node key (and
    nothing is freed); ``loops="expand"`` also records loop-body values per iteration.
    """

    def __init__(
        self,
        *,
        table: dict[str, Value] | None = None,
        prefix: str = "",
        loops: LoopKeys = "collapse",
        active: frozenset[int] = frozenset(),
    ) -> None:
        super().__init__()
        self.table = table
        self.prefix = prefix
        self.loops = loops
        self.keys: ScopeKeys | None = None
        self.active = active
        self._pins: dict[int, Expr] = {}
        # Unbound functions, looked up on the class: bound methods stored on ``self`` would
        # make a reference cycle keeping the visitor (and its memo) alive until a gc pass.
        cls = type(self)
        self._methods: dict[type, Callable[["EvaluatorVisitor", Expr, EvaluateContext], Value]] = {
            node_cls: getattr(cls, "visit_" + node_cls.__name__) for node_cls in _NODE_CLASSES
        }

    # -- walking a scope -------------------------------------------------------------

    def visit(self, expr: Expr, ctx: EvaluateContext) -> Value:
        """Evaluate ``expr`` (and what it reads) in the current environment.

        Values already in the environment are reused, never recomputed, and stay there;
        the intermediate values of this call are dropped after their last reader."""
        memo = self.memo
        if id(expr) in memo:
            return memo[id(expr)]
        order = pending_order(expr, memo)
        kept = [node for node in order if id(node) in memo]
        self.run_schedule(build_schedule(order, [expr, *kept]), ctx)
        # The memo is keyed on id(): a node whose value stays in it must stay alive, or a
        # new node could reuse its id and read a stale value.
        pins = self._pins
        for node in order:
            if id(node) in memo:
                pins[id(node)] = node
        return memo[id(expr)]

    def run_schedule(self, schedule: Schedule, ctx: EvaluateContext) -> None:
        """Evaluate every step not yet bound, freeing values after their last reader."""
        memo, methods, keep = self.memo, self._methods, self.table is not None
        keys, table = self.keys, self.table
        for node, frees, op in schedule.steps:
            if id(node) not in memo:
                if op is not None:  # an op call: visit_Call's dispatch, without its frame (hot path)
                    value = dispatch(node, op, tuple([memo[id(a)] for a in node.args]), ctx)  # type: ignore[union-attr, arg-type]
                else:
                    value = methods[type(node)](self, node, ctx)
                memo[id(node)] = value
                if table is not None and keys is not None and is_reported(node):
                    table[f"{self.prefix}/{keys.local[id(node)]}"] = value
            if not keep:
                for node_id in frees:
                    memo.pop(node_id, None)

    def run_function(self, fn: Function, args: list[Value], ctx: EvaluateContext) -> Value:
        """Bind ``args`` to ``fn``'s parameters in this (fresh) environment and evaluate its body."""
        schedule = function_schedule(fn)
        self.keys = function_keys(fn, schedule.order)
        self.active = self.active | {id(fn)}
        for param, arg in zip(fn.params, args):
            self.memo[id(param)] = rebind(arg, param)
        self.run_schedule(schedule, ctx)
        return self.memo[id(fn.body)]

    # -- nodes --------------------------------------------------------------------------

    def visit_Var(self, var: Var, ctx: EvaluateContext) -> Value:
        raise unbound_var_error(var)

    def visit_Constant(self, const: Constant, ctx: EvaluateContext) -> Value:
        return materialize_constant(const, ctx.device)

    def visit_ConstTensor(self, node: ConstTensor, ctx: EvaluateContext) -> Value:
        return const_tensor_value(node, ctx)

    def visit_Tuple(self, node: Tuple, ctx: EvaluateContext) -> Value:
        return TupleValue(tuple(self.memo[id(f)] for f in node.fields))

    def visit_TupleGetItem(self, node: TupleGetItem, ctx: EvaluateContext) -> Value:
        inner = self.memo[id(node.tuple)]
        if not isinstance(inner, TupleValue):
            raise EvalError(f"{describe_expr(node)}: projection [{node.index}] of a tensor, not a tuple")
        if node.index >= len(inner.elements):
            raise EvalError(
                f"{describe_expr(node)}: index {node.index} is out of range for a {len(inner.elements)}-tuple"
            )
        return inner.elements[node.index]

    def visit_Call(self, call: Call, ctx: EvaluateContext) -> Value:
        memo = self.memo
        args = tuple([memo[id(a)] for a in call.args])
        target = call.target
        if isinstance(target, Function):
            return self._call_function(call, target, args, ctx)
        return dispatch(call, target, args, ctx)

    def _call_function(self, call: Call, callee: Function, args: tuple[Value, ...], ctx: EvaluateContext) -> Value:
        if id(callee) in self.active:
            raise EvalError(f"{describe_expr(call)}: recursive call of {callee.name} is not supported")
        dims = call_bindings(call, callee, args)
        path = self.keys.callee_path[id(call)] if self.keys is not None else callee.name
        child = EvaluatorVisitor(table=self.table, prefix=f"{self.prefix}/{path}", loops=self.loops, active=self.active)
        callee_ctx = EvaluateContext(loaded_module=ctx.loaded_module, device=ctx.device, dim_bindings=dims)
        return child.run_function(callee, list(args), callee_ctx)

    def visit_GridRegionExpr(self, region: GridRegionExpr, ctx: EvaluateContext) -> Value:
        """Run the loop (spec §5): phis start at ``init_args`` and take each iteration's yields."""
        plan = loop_plan(region)
        schedule = loop_schedule(region)
        n = trip_count(region, ctx)
        frontier = {id(f): self.memo[id(f)] for f in plan.frontier}
        carries = [self.memo[id(a)] for a in region.init_args]
        expand = self.table is not None and self.loops == "expand" and self.keys is not None
        body_keys = loop_keys(region, plan.schedule) if expand else None
        last: Value | None = None
        # One visitor for the body, its environment fresh each iteration.
        child = EvaluatorVisitor(table=self.table if expand else None, prefix=self.prefix, loops=self.loops, active=self.active)
        child.keys = body_keys
        for i in range(n):
            if expand and self.keys:
                child.prefix = f"{self.prefix}/{self.keys.local[id(region)]}[{i}]"
            env = child.memo = dict(frontier)
            env[id(region.induction_var)] = index_value(i, ctx.device)
            for phi, value in zip(region.carried_args, carries):
                env[id(phi)] = rebind(value, phi)
            child.run_schedule(schedule, ctx)
            outs = [env[id(r)] for r in plan.roots]
            if region.carried_args:
                carries = outs
            else:
                last = outs[0]
        if not region.carried_args:
            assert last is not None
            return _plain(last)
        finals = [rebind(c, phi) for c, phi in zip(carries, region.carried_args)]
        return finals[0] if len(finals) == 1 else TupleValue(tuple(finals))


def _plain(value: Value) -> Value:
    """A loop result is an ordinary value: never a weak scalar, at any depth of a tuple."""
    if isinstance(value, TensorValue):
        return TensorValue(value.data, value.type) if value.scalar is not None else value
    assert isinstance(value, TupleValue)
    return TupleValue(tuple(_plain(v) for v in value.elements))


_DISPATCH: "dict[type, tuple[int, Handler | None, Apply | None]]" = {}
"""Per op class: the registry version, its handler and, for a value rule, the rule's apply."""


def dispatch(call: Call, op: Op, args: tuple[Value, ...], ctx: EvaluateContext) -> Value:
    """Dispatch one op call through ``eval_registry`` (spec §3): every failure, a missing
    handler included, is an ``EvalError`` prefixed by ``describe_expr(call)``.

    A handler made by ``value_rule`` is applied without building the per-dispatch context
    (``rule_apply``: same value, no allocation on the visitor's hottest path); a plain
    ``register_eval`` handler receives ``ctx.for_op(...)`` as the spec says.
    """
    cls = type(op)
    entry = _DISPATCH.get(cls)
    if entry is None or entry[0] != eval_registry.version:
        found = eval_registry.lookup(cls)
        entry = _DISPATCH[cls] = (eval_registry.version, found, None if found is None else rule_apply(found))
    _, handler, apply = entry
    if handler is None:
        raise missing_handler_error(call)
    n = len(args)
    if n < cls.min_args or (cls.max_args is not None and n > cls.max_args):
        raise EvalError(f"{describe_expr(call)}: {op.arity_error(n)}")
    if apply is not None:
        try:
            return apply(op, args, ctx)
        except Exception as exc:  # every failure surfaces as EvalError (spec §3)
            raise dispatch_error(call, exc) from exc
    bad_attribute = expr_attribute_error(call, op)
    if bad_attribute is not None:
        raise bad_attribute
    try:
        value = handler(ctx.for_op(op, args, call.checked_type))
    except Exception as exc:  # every failure surfaces as EvalError (spec §3)
        raise dispatch_error(call, exc) from exc
    if not isinstance(value, (TensorValue, TupleValue)):
        raise EvalError(f"{describe_expr(call)}: the handler for {type(op).__name__} returned {type(value).__name__}, not a Value")
    return value


def resolve_target(target: "Function | LoadedModule") -> "tuple[Function, LoadedModule | None]":
    """The function a target runs and the loaded module supplying its constants."""
    if isinstance(target, Function):
        return target, None
    if isinstance(target, LoadedModule):
        entry = target.entry
        if entry is None:
            raise EvalError(
                f"loaded module {target.name!r} has no entry, so it has no default step; select one with "
                ".function(name) or .child(name)"
            )
        return entry, target
    raise TypeError(f"evaluate() takes a Function or a LoadedModule, got {type(target).__name__}")


def target_name(target: object) -> str:
    """A short name of an evaluation target for messages that concern the whole run."""
    if isinstance(target, Function):
        return describe_expr(target)
    name = getattr(target, "name", None)
    return f"loaded module {name}" if isinstance(name, str) else type(target).__name__


def evaluate_value(
    target: "Function | LoadedModule", inputs: tuple[object, ...], *, table: dict[str, Value] | None = None,
    loops: LoopKeys = "collapse",
) -> Value:
    """Evaluate ``target`` on ``inputs`` and return its ``Value`` (filling ``table`` if given)."""
    fn, loaded = resolve_target(target)
    values, device, dims = bind_inputs(fn, inputs)
    ctx = EvaluateContext(loaded_module=loaded, device=device, dim_bindings=dims)
    visitor = EvaluatorVisitor(table=table, prefix=fn.name, loops=loops)
    return visitor.run_function(fn, values, ctx)


@public
def evaluate(target: "Function | LoadedModule", *inputs: object) -> "torch.Tensor | tuple[object, ...]":
    """Evaluate ``target`` on ``inputs`` (spec §2): a tensor, or a tuple for a tuple result.

    Inputs are bound to the parameters in order and cast to their dtypes; the run happens
    on the inputs' device (torch's default when no input is a tensor).
    """
    try:
        return to_python(evaluate_value(target, inputs))
    except TfexecError:
        raise
    except RecursionError as exc:
        raise EvalError(
            f"{target_name(target)}: evaluation nests deeper than Python's recursion limit "
            f"({sys.getrecursionlimit()}) allows: function calls, loops or tuple types nest too deeply"
        ) from exc
