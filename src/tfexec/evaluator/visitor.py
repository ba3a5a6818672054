"""``EvaluatorVisitor`` and ``evaluate`` (evaluator spec §2, §4, §5): the direct route.

The visitor walks a scope's schedule (post-order, operands first) over an environment
keyed by ``id(expr)``, so a shared sub-DAG is evaluated once; each value is dropped after
its last reader unless the caller keeps the whole table. Function calls run the callee in
a fresh environment; loops run their variant body nodes once per iteration over values
of the invariant frontier computed once, before the loop. What is static about a node —
its op dispatch, its operands' weak scalars, its value's layout — is decided by the shared
rules of ``tfexec.semantics``, once per call site.
"""

import copy
import sys
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import torch

from tfexec.api_checks import public
from tfexec.errors import EvalError, TfexecError
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.graph import MAX_NESTING, loop_plan
from tfexec.ir.ops.base import Op
from tfexec.loading import LoadedModule
from tfexec.semantics import messages
from tfexec.semantics.binding import bind_inputs, call_bindings, check_return
from tfexec.semantics.constants import const_tensor_value, constant_value, index_value
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.dispatch import CallPlan, apply_handler, holes_of, plan_call, raw
from tfexec.semantics.keys import ScopeKeys, function_keys, is_reported, iteration_prefix, loop_keys
from tfexec.semantics.layouts import StaticLayouts, function_layouts
from tfexec.semantics.loops import trip_count
from tfexec.semantics.targets import resolve_target, target_name
from tfexec.semantics.registry import eval_registry
from tfexec.semantics.values import ComputedValue, IndexValue, TupleValue, Value, relabel, to_python
from tfexec.evaluator.schedule import Schedule, build_schedule, function_schedule, loop_schedule, pending_order
from tfexec.visitor import ExprVisitor

LoopKeys = Literal["collapse", "expand"]
_NODE_CLASSES: tuple[type, ...] = (Var, Constant, ConstTensor, Call, Tuple, TupleGetItem, GridRegionExpr)
Method = Callable[["EvaluatorVisitor", Expr, EvaluateContext], Value]


class EvaluatorVisitor(ExprVisitor[Value]):
    """Evaluate expressions with identity-based memoisation (``self.memo`` is the environment).

    ``table``, when given, receives every reported node's value under its node key (and
    nothing is freed); ``loops="expand"`` also records loop-body values per iteration.

    Every method below may be overridden in a subclass; the walk calls the override for
    every node of its class, in callees and loop bodies too (they are evaluated by a shallow
    copy of this visitor, ``spawn``, with a fresh environment)::

        run_function(fn, args, ctx)          bind the parameters, run fn's schedule
        └─ run_schedule(schedule, ctx)       each node once, operands first; free after last read
           ├─ visit_Var(var, ctx)            a Var this scope does not bind: an error
           ├─ visit_Constant(const, ctx)     a literal, made on the run's device
           ├─ visit_ConstTensor(node, ctx)   a module weight, read from the loaded module
           ├─ visit_Tuple(node, ctx)
           ├─ visit_TupleGetItem(node, ctx)
           ├─ visit_Call(call, ctx)
           │  ├─ call_op(call, op, ctx)             dispatch through eval_registry (spec §3)
           │  └─ call_function(call, callee, ctx)   a fresh environment: spawn().run_function
           └─ visit_GridRegionExpr(region, ctx)     the loop (spec §5): spawn().run_schedule per iteration
    """

    def __init__(self, *, table: dict[str, Value] | None = None, prefix: str = "", loops: LoopKeys = "collapse") -> None:
        super().__init__()
        self.table = table
        self.prefix = prefix
        self.loops = loops
        self.keys: ScopeKeys | None = None
        self.layouts = StaticLayouts()
        """The static layout of every node this visitor evaluates (shared per function)."""
        self.plans: dict[int, CallPlan] = {}
        """Each op call site's dispatch plan, by ``id`` of the call (shared per function)."""
        self.active: frozenset[int] = frozenset()
        self.depth = 0
        self._pins: dict[int, Expr] = {}
        # Unbound functions, looked up on the class (so overrides count): bound methods stored
        # on ``self`` would make a reference cycle keeping the visitor and its memo alive.
        cls = type(self)
        self._methods: dict[type, Method] = {c: getattr(cls, "visit_" + c.__name__) for c in _NODE_CLASSES}
        self._inline_ops = cls.visit_Call is EvaluatorVisitor.visit_Call and cls.call_op is EvaluatorVisitor.call_op

    def spawn(self, prefix: str, table: dict[str, Value] | None) -> "EvaluatorVisitor":
        """A visitor like this one with a fresh environment: it evaluates a callee or a loop body."""
        child = copy.copy(self)
        child.memo = {}
        child._pins = {}
        child.prefix = prefix
        child.table = table
        child.depth = self.depth + 1
        return child

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
        """Evaluate every step not yet bound, freeing values after their last reader.

        An op call is dispatched here, without ``visit_Call``'s frame, when this visitor's
        class keeps ``visit_Call`` and ``call_op`` as they are (``_apply_op`` is their body);
        a subclass overriding either gets every call through its override."""
        memo, methods, table, keys = self.memo, self._methods, self.table, self.keys
        inline = self._inline_ops
        plans = self.plans
        version = eval_registry.version
        for node, nid, frees, op_args in schedule.steps:
            if nid not in memo:
                if inline and op_args is not None:
                    plan = plans.get(nid)
                    if plan is None or plan.version != version:
                        plan = self._plan(node)  # type: ignore[arg-type]
                    value = _apply_op(plan, [memo[i] for i in op_args], ctx)
                else:
                    value = methods[type(node)](self, node, ctx)
                memo[nid] = value
                if table is not None and keys is not None and is_reported(node):
                    table[keys.key(self.prefix, node)] = value
            if table is None:
                for node_id in frees:
                    memo.pop(node_id, None)

    def run_function(self, fn: Function, args: list[Value], ctx: EvaluateContext) -> Value:
        """Bind ``args`` to ``fn``'s parameters in this (fresh) environment and evaluate its body."""
        self.keys = function_keys(fn)
        self.layouts = function_layouts(fn)
        self.plans = _function_plans(fn)
        self.active = self.active | {id(fn)}
        for param, arg in zip(fn.params, args):
            self.memo[id(param)] = relabel(arg, self.layouts.of(param))
        self.run_schedule(function_schedule(fn), ctx)
        return self.memo[id(fn.body)]

    # -- nodes --------------------------------------------------------------------------

    def visit_Var(self, var: Var, ctx: EvaluateContext) -> Value:
        raise messages.unbound_var(var)

    def visit_Constant(self, const: Constant, ctx: EvaluateContext) -> Value:
        return constant_value(const, ctx.device)

    def visit_ConstTensor(self, node: ConstTensor, ctx: EvaluateContext) -> Value:
        return const_tensor_value(node, ctx)

    def visit_Tuple(self, node: Tuple, ctx: EvaluateContext) -> Value:
        memo = self.memo
        return messages.tuple_value(node, [memo[id(f)] for f in node.fields])

    def visit_TupleGetItem(self, node: TupleGetItem, ctx: EvaluateContext) -> Value:
        inner = self.memo[id(node.tuple)]
        if not isinstance(inner, TupleValue):
            raise messages.projection_of_tensor(node)
        if node.index >= len(inner.elements):
            raise messages.projection_out_of_range(node, len(inner.elements))
        return inner.elements[node.index]

    def visit_Call(self, call: Call, ctx: EvaluateContext) -> Value:
        target = call.target
        if isinstance(target, Function):
            return self.call_function(call, target, ctx)
        return self.call_op(call, target, ctx)

    def call_op(self, call: Call, op: Op, ctx: EvaluateContext) -> Value:
        """Dispatch an op call through ``eval_registry`` (spec §3): every failure, a missing
        handler included, is an ``EvalError`` prefixed by ``describe_expr(call)``."""
        plan = self.plans.get(id(call))
        if plan is None or not plan.current:
            plan = self._plan(call)
        memo = self.memo
        return _apply_op(plan, [memo[id(a)] for a in call.args], ctx)

    def _plan(self, call: Call) -> CallPlan:
        """The call site's dispatch plan, made (again, if the registry changed) and kept."""
        assert isinstance(call.target, Op)
        plan = self.plans[id(call)] = plan_call(call, call.target, [self.layouts.of(a) for a in call.args])
        return plan

    def call_function(self, call: Call, callee: Function, ctx: EvaluateContext) -> Value:
        """Evaluate ``callee``'s body on the call's arguments in a fresh environment (spec §4),
        after checking them against its parameters (hir §1.1)."""
        if id(callee) in self.active:
            raise messages.recursive_call(call, callee)
        if self.depth >= MAX_NESTING:
            raise messages.nesting_too_deep(call)
        args = [self.memo[id(a)] for a in call.args]
        dims = call_bindings(call, callee, args)
        prefix = self.keys.callee_prefix(self.prefix, call) if self.keys is not None else callee.name
        return self.spawn(prefix, self.table).run_function(callee, args, ctx.scoped(dims))

    def visit_GridRegionExpr(self, region: GridRegionExpr, ctx: EvaluateContext) -> Value:
        """Run the loop (spec §5): phis start at ``init_args`` and take each iteration's yields."""
        if self.depth >= MAX_NESTING:
            raise messages.nesting_too_deep(region)
        plan = loop_plan(region)
        schedule = loop_schedule(region)
        n = trip_count(region, ctx)
        frontier = {id(f): self.memo[id(f)] for f in plan.frontier}
        carries = [self.memo[id(a)] for a in region.init_args]
        expand = self.table is not None and self.loops == "expand" and self.keys is not None
        loop_key = self.keys.key(self.prefix, region) if expand and self.keys is not None else ""
        child = self.spawn(self.prefix, self.table if expand else None)
        child.keys = loop_keys(region)
        phi_layouts = [self.layouts.of(phi) for phi in region.carried_args]
        last: Value | None = None
        for i in range(n):
            if expand:
                child.prefix = iteration_prefix(loop_key, i)
            env = child.memo = dict(frontier)
            env[id(region.induction_var)] = index_value(i, ctx.device)
            for phi, value, layout in zip(region.carried_args, carries, phi_layouts):
                env[id(phi)] = relabel(value, layout)
            child.run_schedule(schedule, ctx)
            outs = [env[id(r)] for r in plan.roots]
            if region.carried_args:
                carries = outs
            else:
                last = outs[0]
        if not region.carried_args:
            assert last is not None
            return relabel(last, self.layouts.of(region))
        result = carries[0] if len(carries) == 1 else messages.tuple_value(region, carries)
        return relabel(result, self.layouts.of(region))


def _apply_op(plan: CallPlan, values: list[Value], ctx: EvaluateContext) -> Value:
    """The value of an op call from its plan and its operands' values (``call_op``'s body)."""
    if plan.refusal is not None:
        raise plan.refusal
    kernel = plan.kernel
    if kernel is None:
        return apply_handler(plan, ctx, values)
    try:
        operands: Sequence[object]
        if plan.direct and not kernel.host_index:
            try:
                operands = [v.data for v in values]  # type: ignore[union-attr]
            except AttributeError:  # a tuple operand: its raw fields
                operands = [raw(v) for v in values]
        else:  # index arithmetic takes index values as their host ints
            holes = holes_of(plan.views, values, [], host=kernel.host_index)
            operands = holes if plan.assemble is None else plan.assemble(holes)
        data: object = kernel.fn(ctx, *operands) if kernel.needs_ctx else kernel.fn(*operands)
        if type(data) is int:  # an index value, kept as its host int
            return IndexValue(data, ctx.device)
        assert isinstance(data, torch.Tensor)
        return ComputedValue(data, plan.layout)
    except Exception as exc:  # every failure surfaces as EvalError (spec §3)
        raise messages.dispatch_failed(plan.call, exc) from exc


def _function_plans(fn: Function) -> dict[int, CallPlan]:
    plans = _PLANS.get(fn)
    if plans is None:
        plans = _PLANS[fn] = {}
    return plans


_PLANS: "weakref.WeakKeyDictionary[Function, dict[int, CallPlan]]" = weakref.WeakKeyDictionary()


def evaluate_value(
    target: "Function | LoadedModule", inputs: tuple[object, ...], *, table: dict[str, Value] | None = None,
    loops: LoopKeys = "collapse", dims: Mapping[str, int] | None = None,
) -> Value:
    """Evaluate ``target`` on ``inputs`` and return its ``Value`` (filling ``table`` if given)."""
    fn, loaded = resolve_target(target)
    values, device, dims = bind_inputs(fn, inputs, dims)
    ctx = EvaluateContext(loaded_module=loaded, device=device, dim_bindings=dims)
    visitor = EvaluatorVisitor(table=table, prefix=fn.name, loops=loops)
    result = visitor.run_function(fn, values, ctx)
    check_return(fn, result, dims)
    return result


@public
def evaluate(
    target: "Function | LoadedModule", *inputs: object, dims: Mapping[str, int] | None = None
) -> "torch.Tensor | tuple[object, ...]":
    """Evaluate ``target`` on ``inputs`` (spec §2): a tensor, or a tuple for a tuple result.

    Inputs are bound to the parameters in order and cast to their dtypes; the run happens
    on the inputs' device (torch's default when no input is a tensor). ``dims`` sizes dims
    no input axis binds (a dim only the body uses); input axes must agree with it. A result
    that does not fit the function's declared return type is an ``EvalError`` naming the
    function.
    """
    try:
        return to_python(evaluate_value(target, inputs, dims=dims))
    except TfexecError:
        raise
    except RecursionError as exc:
        raise EvalError(
            f"{target_name(target)}: evaluation nests deeper than Python's recursion limit "
            f"({sys.getrecursionlimit()}) allows: function calls, loops or tuple types nest too deeply"
        ) from exc
