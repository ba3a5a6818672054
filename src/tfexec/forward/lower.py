"""``lower``: translate a typed function into a ``ForwardGraph`` (Lean ``lowerToForwardGraph``).

Static work happens once, here: each op call's dispatch plan (``tfexec.semantics.dispatch``),
tuples and projections become references into slots, function calls are inlined (a
boundary node checks the arguments and opens the callee's dim scope, then the callee's
nodes read the boundary's value), constants become nodes that make them on the run's
device — a weak Python scalar only where something reads it as a tensor — and loop bodies
become nested node lists run once per iteration, their invariant frontier lowered in the
enclosing list (hoisted). Dynamic work — dim sizes, trip counts, slice starts, weights —
happens at run time through the same rules the direct route uses.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias, Union

from tfexec.api_checks import public
from tfexec.errors import EvalError, LoweringError
from tfexec.forward.check import CheckMode
from tfexec.forward.data import ForwardData
from tfexec.forward.graph import ForwardGraph
from tfexec.forward.kinds import (
    EnterCall,
    Fail,
    HandlerCall,
    MakeConstant,
    NodeKind,
    OpApply,
    ReadWeight,
    RunLoop,
    Shape,
    shape_of_type,
)
from tfexec.forward.node import ForwardNode, Read
from tfexec.forward.run import Body, Ref, leaves
from tfexec.infer import infer_types
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.graph import MAX_NESTING, function_order, loop_plan
from tfexec.ir.ops.base import Op
from tfexec.ir.types import TupleType, Type
from tfexec.ir.weak import OperandView, Weak, weak_source
from tfexec.loading import LoadedModule
from tfexec.semantics import messages
from tfexec.semantics.dispatch import Fill, plan_call
from tfexec.semantics.keys import ScopeKeys, function_keys, is_reported, loop_keys
from tfexec.semantics.layouts import StaticLayouts, function_layouts
from tfexec.semantics.targets import resolve_target
from tfexec.semantics.values import may_hold_index


@dataclass(frozen=True, slots=True)
class Pending:
    """A weak Python-scalar constant no node has read as a tensor yet (so it has no slot)."""

    constant: Constant


LRef: TypeAlias = Union[Read, Pending, tuple["LRef", ...]]
"""A reference while lowering: a read, a pending weak constant, or a tuple of references."""


@public
def lower(target: "Function | LoadedModule", *, check: CheckMode = "boundary") -> ForwardGraph:
    """Lower ``target`` (a function, or a loaded module's selected function) to a ``ForwardGraph``.

    Type inference runs first: a function that does not type-check does not lower
    (``TypeInferenceError``). ``check`` is the graph's default runtime-checking mode.
    """
    fn, loaded = resolve_target(target)
    try:
        infer_types(fn)
        return _lower_function(fn, loaded, check)
    except RecursionError as exc:
        raise LoweringError(f"{describe_expr(fn)}: function calls or loops nest too deeply to lower") from exc


def _lower_function(fn: Function, loaded: "LoadedModule | None", check: CheckMode) -> ForwardGraph:
    builder = _Builder(len(fn.params), [1])
    params: dict[int, LRef] = {id(p): slot_ref(i, p.type) for i, p in enumerate(fn.params)}
    scope = _Scope(builder, params, fn.name, function_keys(fn), function_layouts(fn), 0, frozenset({id(fn)}), 0)
    _lower_nodes(function_order(fn), scope)
    body = builder.finish(scope.env[id(fn.body)])
    return ForwardGraph(function=fn, body=body, loaded=loaded, check=check, scope_count=builder.scopes[0])


def slot_ref(slot: int, t: Type, path: tuple[int, ...] = ()) -> Ref:
    """The reference to a value of type ``t`` held in ``slot`` (field ``path`` of it)."""
    if isinstance(t, TupleType):
        return tuple(slot_ref(slot, f, path + (i,)) for i, f in enumerate(t.fields))
    return Read(slot, path)


class _Builder:
    """One node list under construction (a graph or a loop body) and its keyed references."""

    def __init__(self, n_inputs: int, scopes: list[int]) -> None:
        self.data = ForwardData.nil(n_inputs)
        self.keyed: list[tuple[str, Ref]] = []
        self.scopes = scopes
        """``[count]``: how many dim scopes the whole lowering has opened (shared with loop bodies)."""
        self.made: dict[int, Read] = {}
        """The slot of each weak constant this list made, by ``id`` of the constant."""
        self.host_ints: set[int] = set()
        """Slots that may hold a host-int index value (an index kernel's result, a loop's index)."""

    def conversions(self, reads: Sequence[Read]) -> tuple[int, ...]:
        """The positions of ``reads`` that may hold a host-int index value."""
        return tuple(p for p, r in enumerate(reads) if r.slot in self.host_ints)

    def emit(self, what: NodeKind, reads: Sequence[Read], type: Type | None, key: str | None, source: Expr, scope: int) -> int:
        index = self.data.next_index
        self.data = self.data.snoc(ForwardNode(what, tuple(reads), type, key, source, scope))
        return index

    def demand(self, ref: LRef, scope: int) -> Ref:
        """``ref`` with every pending weak constant made (as a node of this list, once)."""
        if isinstance(ref, Read):
            return ref
        if isinstance(ref, Pending):
            const = ref.constant
            hit = self.made.get(id(const))
            if hit is None:
                hit = self.made[id(const)] = Read(self.emit(MakeConstant(const), (), const.type, None, const, scope))
            return hit
        return tuple(self.demand(r, scope) for r in ref)

    def finish(self, outputs: LRef, scope: int = 0) -> Body:
        made = self.demand(outputs, scope)  # may append nodes: before the list is taken
        return Body(self.data, made, tuple(self.keyed))


class _Scope:
    """A function body or loop body being lowered into a builder: its environment of
    references, key prefix and keys, static layouts, dim scope, the functions being
    inlined around it and how deep calls and loops nest there."""

    __slots__ = ("builder", "env", "prefix", "keys", "layouts", "scope_id", "active", "depth")

    def __init__(
        self, builder: _Builder, env: dict[int, LRef], prefix: str, keys: ScopeKeys, layouts: StaticLayouts,
        scope_id: int, active: frozenset[int], depth: int,
    ) -> None:
        self.builder, self.env, self.prefix, self.keys = builder, env, prefix, keys
        self.layouts, self.scope_id, self.active, self.depth = layouts, scope_id, active, depth

    def emit(self, what: NodeKind, reads: Sequence[Read], type: Type | None, node: Expr, keyed: bool) -> Read:
        key = self.keys.key(self.prefix, node) if keyed else None
        return Read(self.builder.emit(what, reads, type, key, node, self.scope_id))

    def fail(self, node: Expr, error: EvalError) -> Read:
        """A node that raises ``error`` when reached (the direct route raises it at the same point)."""
        return self.emit(Fail(error), (), None, node, keyed=False)

    def demand(self, ref: LRef) -> Ref:
        return self.builder.demand(ref, self.scope_id)


def _lower_nodes(order: Sequence[Expr], scope: _Scope) -> None:
    env = scope.env
    for node in order:
        if id(node) in env:
            continue
        ref = env[id(node)] = _lower_node(node, scope)
        if is_reported(node):
            scope.builder.keyed.append((scope.keys.key(scope.prefix, node), scope.demand(ref)))


def _lower_node(node: Expr, scope: _Scope) -> LRef:
    match node:
        case Call(target=Function() as callee):
            return _lower_function_call(node, callee, scope)
        case Call(target=Op() as op):
            return _lower_op_call(node, op, scope)
        case Var():
            return scope.fail(node, messages.unbound_var(node))
        case Constant():
            if weak_source(node) is node:
                return Pending(node)
            return scope.emit(MakeConstant(node), (), node.type, node, keyed=False)
        case ConstTensor():
            return scope.emit(ReadWeight(node), (), node.type, node, keyed=False)
        case Tuple():
            return tuple(scope.env[id(f)] for f in node.fields)
        case TupleGetItem():
            inner = scope.env[id(node.tuple)]
            if not isinstance(inner, tuple):
                return scope.fail(node, messages.projection_of_tensor(node))
            if node.index >= len(inner):
                return scope.fail(node, messages.projection_out_of_range(node, len(inner)))
            return inner[node.index]
        case GridRegionExpr():
            return _lower_loop(node, scope)
    raise LoweringError(f"not an HIR node: {type(node).__name__}")


def _lower_op_call(call: Call, op: Op, scope: _Scope) -> LRef:
    plan = plan_call(call, op, [scope.layouts.of(a) for a in call.args])
    if plan.refusal is not None:
        return scope.fail(call, plan.refusal)
    refs = [scope.env[id(a)] for a in call.args]
    reads: list[Read] = []
    builder = scope.builder
    if plan.kernel is None:
        shapes = tuple(_positions(scope.demand(r), reads) for r in refs)
        assert call.checked_type is not None
        what = HandlerCall(plan, shapes, call.checked_type, builder.conversions(reads))
        slot = scope.emit(what, reads, call.checked_type, call, keyed=True)
        return slot_ref(slot.slot, call.checked_type)
    fills = tuple(_fill(view, ref, scope, reads) for view, ref in zip(plan.views, refs))
    index = plan.kernel.host_index  # an index kernel takes host ints, and may make them
    out = scope.emit(OpApply(plan, fills, () if index else builder.conversions(reads)), reads, call.checked_type, call, keyed=True)
    if index and may_hold_index(call.checked_type):
        builder.host_ints.add(out.slot)
    return out


def _fill(view: OperandView, ref: LRef, scope: _Scope, reads: list[Read]) -> Fill:
    """How one kernel operand is assembled from reads (appended to ``reads``) and weak scalars."""
    if isinstance(view, Weak):
        return view
    if view is None:
        made = scope.demand(ref)
        if isinstance(made, Read):
            reads.append(made)
            return None
        return tuple(_fill(None, r, scope, reads) for r in made)
    assert isinstance(ref, tuple), "a tuple operand's view and reference agree"
    return tuple(_fill(v, r, scope, reads) for v, r in zip(view, ref))


def _positions(ref: Ref, reads: list[Read]) -> Shape:
    """``ref``'s shape over ``reads``, appending its reads."""
    if isinstance(ref, Read):
        reads.append(ref)
        return len(reads) - 1
    return tuple(_positions(r, reads) for r in ref)


def _lower_function_call(call: Call, callee: Function, scope: _Scope) -> LRef:
    if id(callee) in scope.active:
        return scope.fail(call, messages.recursive_call(call, callee))
    if scope.depth >= MAX_NESTING:
        return scope.fail(call, messages.nesting_too_deep(call))
    reads: list[Read] = []
    shapes = tuple(_positions(scope.demand(scope.env[id(a)]), reads) for a in call.args)
    builder = scope.builder
    callee_scope = builder.scopes[0]
    builder.scopes[0] += 1
    layouts = tuple(scope.layouts.of(a) for a in call.args)
    args_type = TupleType(tuple(a.checked_type for a in call.args if a.checked_type is not None))
    conv = builder.conversions(reads)
    enter = scope.emit(EnterCall(call, callee, shapes, layouts, callee_scope, conv), reads, args_type, call, keyed=False)
    env: dict[int, LRef] = {id(p): slot_ref(enter.slot, p.type, (i,)) for i, p in enumerate(callee.params)}
    inner = _Scope(
        builder, env, scope.keys.callee_prefix(scope.prefix, call), function_keys(callee), function_layouts(callee),
        callee_scope, scope.active | {id(callee)}, scope.depth + 1,
    )
    _lower_nodes(function_order(callee), inner)
    return env[id(callee.body)]


def _lower_loop(region: GridRegionExpr, scope: _Scope) -> LRef:
    if scope.depth >= MAX_NESTING:
        return scope.fail(region, messages.nesting_too_deep(region))
    plan = loop_plan(region)
    outer: list[Read] = []
    env: dict[int, LRef] = {}
    for expr in plan.frontier:  # the body's inputs: the frontier's reads, the index, the carries
        env[id(expr)] = _remap(scope.env[id(expr)], outer)
    n_front = len(outer)
    env[id(region.induction_var)] = Read(n_front)
    for phi, init in zip(region.carried_args, region.init_args):
        env[id(phi)] = _remap(scope.demand(scope.env[id(init)]), outer, offset=1)
    builder = _Builder(len(outer) + 1, scope.builder.scopes)
    builder.host_ints = {n_front} | {k for k, r in enumerate(outer[:n_front]) if r.slot in scope.builder.host_ints}
    body_scope = _Scope(builder, env, "", loop_keys(region), scope.layouts, scope.scope_id, scope.active, scope.depth + 1)
    _lower_nodes(plan.schedule, body_scope)
    body = builder.finish(tuple(env[id(r)] for r in plan.roots), scope.scope_id)
    if region.carried_args:
        types = [phi.type for phi in region.carried_args]
        result, _ = shape_of_type(types[0] if len(types) == 1 else TupleType(tuple(types)))
    else:
        roots = _positions(body.outputs, [])  # over the body's output leaves, as RunLoop reads them
        assert isinstance(roots, tuple)
        result = roots[0]
    assert region.checked_type is not None
    loop = RunLoop(region, body, n_front, result, scope.keys.key(scope.prefix, region))
    slot = scope.emit(loop, outer, region.checked_type, region, keyed=True)
    return slot_ref(slot.slot, region.checked_type)


def _remap(ref: LRef, outer: list[Read], offset: int = 0) -> LRef:
    """``ref`` as a loop body sees it: each read becomes the body input it is passed as
    (inputs after the index are shifted by ``offset``); pending constants stay pending."""
    if isinstance(ref, Read):
        outer.append(ref)
        return Read(len(outer) - 1 + offset)
    if isinstance(ref, Pending):
        return ref
    return tuple(_remap(r, outer, offset) for r in ref)


__all__ = ["lower", "leaves", "slot_ref"]
