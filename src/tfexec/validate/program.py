"""The program's denotation, from the HIR alone: the direct route's semantics, symbolically.

The walk is the direct route's (``tfexec.evaluator``), with terms for values: parameters
are input leaves; an op call is its kernel (or plain handler) applied to its operands'
denotations, weak scalars as the Python values the kernel receives; tuples and projections
are structure; a function call opens the callee's dim scope and denotes the callee body
with its parameters *substituted* by the arguments' denotations (a fresh environment); a
loop denotes its variant schedule once, over bound terms for the induction variable and
the carries, with its invariant nodes standing for their values outside; a weight is its
name. The static facts come from the shared rules (``plan_call``, ``StaticLayouts``,
``operand_view``, node keys) — nothing here looks at a lowered graph.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.graph import MAX_NESTING, function_order, loop_plan
from tfexec.ir.ops.base import Op
from tfexec.ir.types import TupleType
from tfexec.ir.weak import weak_source
from tfexec.semantics import messages
from tfexec.semantics.dispatch import CallPlan, plan_call
from tfexec.semantics.keys import ScopeKeys, function_keys, iteration_prefix, loop_keys, template
from tfexec.semantics.layouts import StaticLayouts, function_layouts
from tfexec.validate import heads
from tfexec.validate.terms import Den, Denotation, Terms, leaves, numbered, of_type


_REPORTED = (Call, GridRegionExpr)
"""The nodes whose value goes in the table (``tfexec.semantics.keys.is_reported``)."""


@dataclass(frozen=True, slots=True)
class _Scope:
    """Where a node is denoted: its key prefix and keys, static layouts, dim scope term,
    loop level, the functions being called around it, how deep calls and loops nest, and
    the step list of its node list."""

    prefix: str
    keys: ScopeKeys
    layouts: StaticLayouts
    dims: int
    level: int
    active: frozenset[int]
    depth: int
    steps: list[tuple[int, object]]


class ProgramDenotation:
    """``denote()`` walks ``fn`` once; ``nodes`` maps each key template to its HIR node."""

    def __init__(self, terms: Terms, fn: Function) -> None:
        self.terms = terms
        self.fn = fn
        self.out = Denotation()
        self.nodes: dict[str, Expr] = {}
        self.plans: dict[int, CallPlan] = {}
        """Each op call's dispatch plan, made once (a callee called twice is planned once)."""

    def denote(self) -> Denotation:
        fn, terms = self.fn, self.terms
        env: dict[int, Den] = {id(p): heads.parameter(terms, i, p.type) for i, p in enumerate(fn.params)}
        steps = self.out.steps[fn.name] = []
        scope = _Scope(fn.name, function_keys(fn), function_layouts(fn), heads.entry_scope(terms), 0, frozenset({id(fn)}), 0, steps)
        self.scope(function_order(fn), env, scope)
        self.out.outputs = env[id(fn.body)]
        return self.out

    def scope(self, order: Sequence[Expr], env: dict[int, Den], scope: _Scope) -> None:
        table, nodes = self.out.table, self.nodes
        for node in order:
            if id(node) in env:
                continue
            den = env[id(node)] = self.node(node, env, scope)
            if isinstance(node, _REPORTED):  # is_reported
                key = scope.keys.key(scope.prefix, node)
                table.append((key, den))
                nodes[key] = node

    def fail(self, error: Exception, scope: _Scope) -> int:
        term = heads.failure(self.terms, error)
        scope.steps.append((term, None))
        return term

    def node(self, node: Expr, env: dict[int, Den], scope: _Scope) -> Den:
        terms = self.terms
        if type(node) is Call and isinstance(node.target, Op):  # the common case first
            return self.op_call(node, node.target, env, scope)
        match node:
            case Call(target=Function() as callee):
                return self.call(node, callee, env, scope)
            case Call(target=Op() as op):
                return self.op_call(node, op, env, scope)
            case Var():
                return self.fail(messages.unbound_var(node), scope)
            case Constant():
                term = heads.constant(terms, node)
                if weak_source(node) is not node:  # a weak scalar is made where read, and cannot fail
                    scope.steps.append((term, node))
                return term
            case ConstTensor():
                term = heads.weight(terms, node)
                scope.steps.append((term, node))
                return term
            case Tuple():
                return tuple(env[id(f)] for f in node.fields)
            case TupleGetItem():
                inner = env[id(node.tuple)]
                if isinstance(inner, int):
                    return self.fail(messages.projection_of_tensor(node), scope)
                if node.index >= len(inner):
                    return self.fail(messages.projection_out_of_range(node, len(inner)), scope)
                return inner[node.index]
            case GridRegionExpr():
                return self.loop(node, env, scope)
        raise TypeError(f"not an HIR node: {type(node).__name__}")

    def op_call(self, call: Call, op: Op, env: dict[int, Den], scope: _Scope) -> Den:
        terms = self.terms
        plan = self.plans.get(id(call))
        if plan is None:
            plan = self.plans[id(call)] = plan_call(call, op, [scope.layouts.of(a) for a in call.args])
        values = [env[id(a)] for a in call.args]
        if plan.refusal is not None:
            return self.fail(plan.refusal, scope)
        if plan.kernel is None:
            term, den = heads.apply_handler(
                terms, op, plan.views, plan.operand_layouts, plan.layout, call.checked_type, call.checked_type, values,
                scope.dims,
            )
            scope.steps.append((term, call))
            return den
        operands = [heads.kernel_operand(terms, v, d) for v, d in zip(plan.views, values)]
        term = heads.apply_op(terms, op, plan.args, operands, scope.dims if plan.kernel.needs_ctx else None)
        scope.steps.append((term, call))
        return term

    def call(self, call: Call, callee: Function, env: dict[int, Den], scope: _Scope) -> Den:
        if id(callee) in scope.active:
            return self.fail(messages.recursive_call(call, callee), scope)
        if scope.depth >= MAX_NESTING:
            return self.fail(messages.nesting_too_deep(call), scope)
        args = [env[id(a)] for a in call.args]
        layouts = tuple(scope.layouts.of(a) for a in call.args)
        dims = heads.call_scope(self.terms, callee, layouts, args)
        scope.steps.append((dims, call))
        inner_env: dict[int, Den] = {id(p): a for p, a in zip(callee.params, args)}
        inner = _Scope(
            scope.keys.callee_prefix(scope.prefix, call), function_keys(callee), function_layouts(callee), dims,
            scope.level, scope.active | {id(callee)}, scope.depth + 1, scope.steps,
        )
        self.scope(function_order(callee), inner_env, inner)
        return inner_env[id(callee.body)]

    def loop(self, region: GridRegionExpr, env: dict[int, Den], scope: _Scope) -> Den:
        terms = self.terms
        if scope.depth >= MAX_NESTING:
            return self.fail(messages.nesting_too_deep(region), scope)
        plan = loop_plan(region)
        level = scope.level + 1
        key = scope.keys.key(scope.prefix, region)
        body_env: dict[int, Den] = {}
        frontier: list[tuple[int, str]] = []
        for f in plan.frontier:
            body_env[id(f)] = env[id(f)]
            label = describe_expr(f)
            frontier.extend((t, label) for t in leaves(env[id(f)]) if not heads.is_weak_constant(terms, t))
        body_env[id(region.induction_var)] = heads.bound(terms, level, heads.INDEX)
        count = [0]

        def carry(path: tuple[int, ...]) -> int:
            count[0] += 1
            return heads.bound(terms, level, count[0] - 1)

        for phi in region.carried_args:
            body_env[id(phi)] = of_type(phi.type, carry)
        inits = [t for a in region.init_args for t in leaves(env[id(a)])]
        steps = self.out.steps[key] = []
        body = _Scope(
            template(iteration_prefix(key, 0)), loop_keys(region), scope.layouts, scope.dims, level, scope.active,
            scope.depth + 1, steps,
        )
        self.scope(plan.schedule, body_env, body)
        self.out.frontiers[key] = frontier
        roots = [t for r in plan.roots for t in leaves(body_env[id(r)])]
        carried = bool(region.carried_args)
        symbolic = not isinstance(region.extent, int)
        term = heads.loop(terms, region.extent, carried, scope.dims if symbolic else None, inits, roots)
        scope.steps.append((term, region))
        if carried:
            types = [phi.type for phi in region.carried_args]
            value: Den = of_type(types[0] if len(types) == 1 else TupleType(tuple(types)), lambda path: 0)
        else:
            value = body_env[id(region.body)]
        return numbered(value, lambda m: heads.loop_out(terms, term, m))


def denote_program(terms: Terms, fn: Function) -> tuple[Denotation, dict[str, Expr]]:
    """``fn``'s denotation (type inference must have run), and the HIR node of every key."""
    walk = ProgramDenotation(terms, fn)
    return walk.denote(), walk.nodes


__all__ = ["denote_program"]
