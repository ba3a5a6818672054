"""``lower``: translate a typed function into a ``ForwardGraph`` (Lean ``lowerToForwardGraph``).

Static work happens once, here: each op's value rule is specialised with its attributes
and operand layouts, tuples and projections become references, function calls are
inlined (a boundary node checks the arguments and opens the callee's dim scope, then the
callee's nodes read the argument slots), constants become nodes that make them on the
run's device, and loop bodies become nested node lists run once per iteration, their
invariant frontier lowered in the enclosing list (hoisted). Dynamic work — dim sizes,
trip counts, slice starts, weights — happens at run time through the same runtime rules
the visitor uses (``tfexec.evaluator.runtime``).
"""

import gc
from collections.abc import Callable, Sequence
from operator import itemgetter

import torch

from tfexec.api_checks import public
from tfexec.errors import EvalError, LoweringError
from tfexec.evaluator.context import EvaluateContext
from tfexec.evaluator.registry import (
    Kernel,
    eval_registry,
    lookup_value_rule,
    missing_handler_error,
)
from tfexec.evaluator.runtime import (
    call_bindings,
    const_tensor_value,
    index_tensor,
    materialize_constant,
    trip_count,
    unbound_var_error,
)
from tfexec.evaluator.value import TensorValue, TupleValue, Value
from tfexec.evaluator.visitor import dispatch, resolve_target
from tfexec.forward.check import Annotation, CheckMode, DimNames, is_tensor_type
from tfexec.forward.data import ForwardData
from tfexec.forward.graph import (
    Body,
    ForwardGraph,
    RunContext,
    as_value,
    input_refs_for,
    read,
    record,
)
from tfexec.forward.node import ForwardNode, NodeFn
from tfexec.forward.refs import (
    Ref,
    TensorRef,
    TupleRef,
    bound_to,
    layouts_of,
    leaves,
    plain,
    rebuild,
)
from tfexec.infer import infer_types
from tfexec.ir.describe import describe_expr, op_label
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
from tfexec.ir.graph import function_order, loop_plan
from tfexec.ir.ops.base import Op
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.keys import ScopeKeys, function_keys, is_reported, loop_keys
from tfexec.loading import LoadedModule

Getter = Callable[[list[object]], object]


@public
def lower(target: "Function | LoadedModule", *, check: CheckMode = "boundary") -> ForwardGraph:
    """Lower ``target`` (a function, or a loaded module's selected function) to a ``ForwardGraph``.

    Type inference runs first: a function that does not type-check does not lower
    (``TypeInferenceError``). ``check`` is the graph's default runtime-checking mode.
    """
    fn, loaded = resolve_target(target)
    # Lowering allocates many small objects that live as long as the graph; the cyclic
    # collector would rescan them again and again (measured: 2.5x the cost on a 1e5-node
    # chain). Nothing here makes cycles worth collecting mid-way.
    collecting = gc.isenabled()
    gc.disable()
    try:
        infer_types(fn)
        return _lower_function(fn, loaded, check)
    except RecursionError as exc:
        raise LoweringError(f"{describe_expr(fn)}: function calls or loops nest too deeply to lower") from exc
    finally:
        if collecting:
            gc.enable()


def _lower_function(fn: Function, loaded: "LoadedModule | None", check: CheckMode) -> ForwardGraph:
    names = DimNames()
    refs, n_inputs = input_refs_for(fn)
    builder = _Builder(n_inputs, names)
    order = function_order(fn)
    scope = _Scope(
        builder, {id(p): bound_to(r, p.type) for p, r in zip(fn.params, refs)}, None, fn.name,
        function_keys(fn, order), 0, frozenset({id(fn)}),
    )
    out = _lower_scope(order, scope)
    body = builder.finish(out)
    return ForwardGraph(
        function=fn,
        body=body,
        input_refs=tuple(refs),
        input_annotations=tuple(Annotation(p.type, names, 0) for p in fn.params),
        output_annotation=Annotation(fn.body.checked_type, names, 0) if is_tensor_type(fn.body.checked_type) else None,  # type: ignore[arg-type]
        loaded=loaded,
        check=check,
        scope_count=builder.scopes,
    )


class _Builder:
    """One node list under construction (a graph or a loop body) and its keyed references."""

    def __init__(self, n_inputs: int, names: DimNames, scopes: list[int] | None = None) -> None:
        self.data = ForwardData.nil(n_inputs)
        self.keyed: list[tuple[str, Ref]] = []
        self.annotations: list[Annotation | None] = []
        self.names = names
        self._scopes = scopes if scopes is not None else [1]
        self._annotation_cache: dict[tuple[Type, int], Annotation] = {}
        self.scalar_constants: set[int] = set()
        """Nodes that make a weak Python-scalar constant (which ops read as the scalar itself)."""

    @property
    def scopes(self) -> int:
        """How many dim scopes the whole lowering has opened (shared with loop-body builders)."""
        return self._scopes[0]

    def new_scope(self) -> int:
        """A fresh dim-scope id (an inlined call opens one)."""
        self._scopes[0] += 1
        return self._scopes[0] - 1

    def nested(self, n_inputs: int) -> "_Builder":
        """A builder for a loop body of this lowering (same dim names, same scope counter)."""
        return _Builder(n_inputs, self.names, self._scopes)

    def annotation(self, t: Type, scope_id: int) -> Annotation:
        """The (cached) runtime-check annotation of ``t`` in dim scope ``scope_id``."""
        cached = self._annotation_cache.get((t, scope_id))
        if cached is None:
            cached = self._annotation_cache[(t, scope_id)] = Annotation(t, self.names, scope_id)
        return cached

    def emit(
        self, fn: NodeFn, reads: Sequence[int], type: Type | None, key: str | None, source: Expr | None,
        scope_id: int, dispatch: bool = False, body: Body | None = None,
        plain: "tuple[Callable[..., object], tuple[int, ...]] | None" = None,
    ) -> int:
        node = ForwardNode(
            fn, tuple(self.data.slot(i) for i in reads), type, key, source, dispatch,
            key or (op_label(source) if source is not None else "plumbing"), body, plain,
        )
        index = self.data.next_index
        self.data = self.data.snoc(node)
        self.annotations.append(self._annotation(type, scope_id))
        return index

    def _annotation(self, t: Type | None, scope_id: int) -> Annotation | None:
        if t is None or not is_tensor_type(t):
            return None
        return self.annotation(t, scope_id)

    def finish(self, outputs: Ref) -> Body:
        nodes = self.data.nodes
        last: dict[int, int] = {}
        for i, node in enumerate(nodes):
            for s in node.reads:
                last[s.index] = i
        for ref in leaves(outputs):
            last.pop(ref.slot, None)
        frees: list[list[int]] = [[] for _ in nodes]
        for slot, i in last.items():
            frees[i].append(slot)
        # A weak scalar constant that no node reads as a tensor (ops take the scalar) and that
        # is no output is never made: its slot stays None.
        n_inputs = self.data.n_inputs
        read = {s.index for node in nodes for s in node.reads} | {r.slot for r in leaves(outputs)}
        read |= {r.slot for _, ref in self.keyed for r in leaves(ref)}  # the value table reads them
        unread = frozenset(i for i in self.scalar_constants if n_inputs + i not in read)
        annotations = tuple(None if i in unread else a for i, a in enumerate(self.annotations))
        return Body(self.data, outputs, tuple(self.keyed), tuple(tuple(f) for f in frees), annotations, unread)


class _Scope:
    """A function body or loop body being lowered into a builder: its environment of
    references, where its context lives, its key prefix and keys."""

    __slots__ = ("builder", "env", "ctx_slot", "prefix", "keys", "scope_id", "active")

    def __init__(
        self, builder: _Builder, env: dict[int, Ref], ctx_slot: int | None, prefix: str, keys: ScopeKeys,
        scope_id: int, active: frozenset[int],
    ) -> None:
        self.builder = builder
        self.env = env
        self.ctx_slot = ctx_slot
        self.prefix = prefix
        self.keys = keys
        self.scope_id = scope_id
        self.active = active

    def key(self, node: Expr) -> str:
        return f"{self.prefix}/{self.keys.local[id(node)]}"

    def emit(
        self, fn: NodeFn, reads: Sequence[int], type: Type | None, node: Expr | None, *, keyed: bool,
        dispatch: bool = False, body: Body | None = None,
        plain: "tuple[Callable[..., object], tuple[int, ...]] | None" = None,
    ) -> int:
        key = self.key(node) if keyed and node is not None else None
        return self.builder.emit(fn, reads, type, key, node, self.scope_id, dispatch, body, plain)

    def emit_error(self, node: Expr, error: EvalError) -> Ref:
        """A node that raises ``error`` when reached (the visitor raises it at the same point)."""

        def fail(v: list[object], c: EvaluateContext) -> object:
            raise error

        return TensorRef(self.emit(fail, (), None, node, keyed=False))

    def ctx_reader(self) -> Callable[[list[object], EvaluateContext], EvaluateContext]:
        slot = self.ctx_slot
        if slot is None:
            return lambda v, c: c
        return lambda v, c: v[slot]  # type: ignore[return-value]


def _lower_scope(order: Sequence[Expr], scope: _Scope) -> Ref:
    """Lower a function body's post-order and return the reference of its last node (the body)."""
    _lower_nodes(order, scope)
    return scope.env[id(order[-1])]


def _lower_nodes(order: Sequence[Expr], scope: _Scope) -> None:
    env = scope.env
    for node in order:
        if id(node) in env:
            continue
        ref = _lower_node(node, scope)
        env[id(node)] = ref
        if is_reported(node):
            scope.builder.keyed.append((scope.key(node), ref))


def _lower_node(node: Expr, scope: _Scope) -> Ref:
    if isinstance(node, Call):  # the common case first
        if isinstance(node.target, Function):
            return _lower_function_call(node, node.target, scope)
        return _lower_op_call(node, node.target, scope)
    if isinstance(node, Var):
        return scope.emit_error(node, unbound_var_error(node))
    if isinstance(node, Constant):
        return _lower_constant(node, scope)
    if isinstance(node, ConstTensor):
        return TensorRef(scope.emit(lambda v, c: const_tensor_value(node, c).data, (), node.type, node, keyed=False), node.type.layout)
    if isinstance(node, Tuple):
        return TupleRef(tuple(scope.env[id(f)] for f in node.fields))
    if isinstance(node, TupleGetItem):
        inner = scope.env[id(node.tuple)]
        if not isinstance(inner, TupleRef):
            return scope.emit_error(node, EvalError(f"{describe_expr(node)}: projection [{node.index}] of a tensor, not a tuple"))
        if node.index >= len(inner.fields):
            return scope.emit_error(
                node, EvalError(f"{describe_expr(node)}: index {node.index} is out of range for a {len(inner.fields)}-tuple")
            )
        return inner.fields[node.index]
    return _lower_loop(node, scope)


def _lower_constant(node: Constant, scope: _Scope) -> Ref:
    slot = scope.emit(lambda v, c: materialize_constant(node, c.device).data, (), node.type, node, keyed=False)
    scalar = node.value if node.weak and not isinstance(node.value, torch.Tensor) else None
    if scalar is not None and _materializes(node):
        scope.builder.scalar_constants.add(slot - scope.builder.data.n_inputs)
    return TensorRef(slot, node.type.layout, scalar)


def _materializes(node: Constant) -> bool:
    """Whether making ``node`` a tensor succeeds (it does not depend on the device): only
    then may a run skip making it when no node reads it as a tensor."""
    try:
        materialize_constant(node, "cpu")
    except EvalError:
        return False
    return True


def _getter(ref: Ref) -> Getter:
    """How a closure reads one operand: a slot, a weak scalar, or a tuple of those."""
    if isinstance(ref, TensorRef):
        if ref.scalar is not None:
            scalar = ref.scalar
            return lambda v: scalar
        return itemgetter(ref.slot)
    parts = [_getter(f) for f in ref.fields]
    return lambda v: tuple(g(v) for g in parts)


def _op_closure(kernel: Kernel, refs: tuple[Ref, ...], scope: _Scope) -> NodeFn:
    """The node closure applying ``kernel`` to the operands, specialised for the common shapes."""
    plain_slots = [r.slot for r in refs if isinstance(r, TensorRef) and r.scalar is None]
    if kernel.tensor_fn is not None and len(plain_slots) == len(refs):
        f = kernel.tensor_fn
        if len(refs) == 1:
            (a,) = plain_slots
            return lambda v, c: f(v[a])
        if len(refs) == 2:
            a, b = plain_slots
            return lambda v, c: f(v[a], v[b])
        if len(refs) == 3:
            a, b, d = plain_slots
            return lambda v, c: f(v[a], v[b], v[d])
    getters = [_getter(r) for r in refs]
    fn = kernel.fn
    if not kernel.needs_ctx:
        return lambda v, c: fn(*[g(v) for g in getters])
    ctx_of = scope.ctx_reader()
    return lambda v, c: fn(ctx_of(v, c), *[g(v) for g in getters])


def _lower_op_call(call: Call, op: Op, scope: _Scope) -> Ref:
    refs = tuple(scope.env[id(a)] for a in call.args)
    reads = [r.slot for ref in refs for r in leaves(ref) if r.scalar is None]
    handler = eval_registry.lookup(type(op))
    if handler is None:
        return scope.emit_error(call, missing_handler_error(call))
    arity = op.arity_error(len(refs))
    if arity is not None:
        return scope.emit_error(call, EvalError(f"{describe_expr(call)}: {arity}"))
    layouts = layouts_of(refs)
    rule = lookup_value_rule(type(op))
    if rule is None:
        # A plain handler receives every operand as a Value, weak constants' slots included.
        all_reads = [r.slot for ref in refs for r in leaves(ref)]
        return _lower_handler_call(call, op, refs, all_reads, scope)
    kernel = rule(op, layouts)
    plain_slots = [r.slot for r in refs if isinstance(r, TensorRef) and r.scalar is None]
    plain = (kernel.tensor_fn, tuple(plain_slots)) if kernel.tensor_fn is not None and len(plain_slots) == len(refs) and refs else None
    slot = scope.emit(_op_closure(kernel, refs, scope), reads, call.checked_type, call, keyed=True, dispatch=True, plain=plain)
    return TensorRef(slot, op.value_layout(layouts))


def _lower_handler_call(call: Call, op: Op, refs: tuple[Ref, ...], reads: list[int], scope: _Scope) -> Ref:
    """A call to an op with a plain ``register_eval`` handler: dispatched as the visitor does."""
    ctx_of = scope.ctx_reader()

    def run(v: list[object], c: EvaluateContext) -> object:
        return _unwrap(dispatch(call, op, tuple(as_value(r, v) for r in refs), ctx_of(v, c)))

    slot = scope.emit(run, reads, call.checked_type, call, keyed=True)
    layout = op.value_layout(layouts_of(refs))
    if isinstance(call.checked_type, TupleType):
        return _project(slot, _shape_of_type(call.checked_type, layout), call, scope)
    return TensorRef(slot, layout)


def _unwrap(value: Value) -> object:
    if isinstance(value, TensorValue):
        return value.data
    assert isinstance(value, TupleValue)
    return tuple(_flat_data(value))


def _flat_data(value: Value) -> list[object]:
    if isinstance(value, TensorValue):
        return [value.data]
    assert isinstance(value, TupleValue)
    out: list[object] = []
    for v in value.elements:
        out.extend(_flat_data(v))
    return out


def _shape_of_type(t: Type, layout: object = None) -> Ref:
    if isinstance(t, TupleType):
        return TupleRef(tuple(_shape_of_type(f) for f in t.fields))
    return TensorRef(-1, t.layout)


def _project(slot: int, shape: Ref, source: Expr, scope: _Scope) -> Ref:
    """Plumbing nodes taking each tensor leaf out of a node that produced a flat tuple."""
    out: list[TensorRef] = []
    for j, leaf in enumerate(leaves(shape)):
        def take(v: list[object], c: EvaluateContext, s: int = slot, k: int = j) -> object:
            return v[s][k]  # type: ignore[index]

        out.append(TensorRef(scope.emit(take, (slot,), None, source, keyed=False), leaf.layout))
    return rebuild(shape, out)


def _lower_function_call(call: Call, callee: Function, scope: _Scope) -> Ref:
    if id(callee) in scope.active:
        return scope.emit_error(call, EvalError(f"{describe_expr(call)}: recursive call of {callee.name} is not supported"))
    arg_refs = tuple(scope.env[id(a)] for a in call.args)
    reads = [r.slot for ref in arg_refs for r in leaves(ref)]
    ctx_of = scope.ctx_reader()
    builder = scope.builder
    callee_scope = builder.new_scope()
    # In "full" mode the arguments are checked against the parameters in the callee's dim
    # scope (plain dims first), which binds the callee's names before its nodes are checked.
    arg_checks = sorted(
        ((p, r, builder.annotation(p.type, callee_scope)) for p, r in zip(callee.params, arg_refs)),
        key=lambda c: c[2].has_dim_exprs,
    )

    def enter(v: list[object], c: EvaluateContext) -> object:
        dims = call_bindings(call, callee, [as_value(r, v) for r in arg_refs])
        outer = ctx_of(v, c)
        if isinstance(outer, RunContext):
            if outer.full_check:
                for param, ref, ann in arg_checks:
                    ann.check(read(ref, v), call, f"argument {param.name} of {callee.name}")
            return outer.scoped(dims)
        return RunContext(loaded_module=outer.loaded_module, device=outer.device, dim_bindings=dims)

    ctx_slot = scope.emit(enter, reads, None, call, keyed=False)
    order = function_order(callee)
    inner = _Scope(
        builder,
        {id(p): bound_to(r, p.type) for p, r in zip(callee.params, arg_refs)},
        ctx_slot,
        f"{scope.prefix}/{scope.keys.callee_path[id(call)]}",
        function_keys(callee, order),
        callee_scope,
        scope.active | {id(callee)},
    )
    return _lower_scope(order, inner)


def _lower_loop(region: GridRegionExpr, scope: _Scope) -> Ref:
    plan = loop_plan(region)
    frontier_refs = [scope.env[id(f)] for f in plan.frontier]
    init_refs = [scope.env[id(a)] for a in region.init_args]
    frontier_slots = [r.slot for ref in frontier_refs for r in leaves(ref)]
    init_slots = [r.slot for ref in init_refs for r in leaves(ref)]

    # The body: inputs are the frontier leaves, the index, then the carry leaves.
    n_front = len(frontier_slots)
    n_inputs = n_front + 1 + len(init_slots)
    body_builder = scope.builder.nested(n_inputs)
    env: dict[int, Ref] = {}
    cursor = [0]

    def remap(ref: Ref) -> Ref:
        if isinstance(ref, TensorRef):
            slot = cursor[0]
            cursor[0] += 1
            return TensorRef(slot, ref.layout, ref.scalar)
        return TupleRef(tuple(remap(f) for f in ref.fields))

    for expr, ref in zip(plan.frontier, frontier_refs):
        env[id(expr)] = remap(ref)
    iv = region.induction_var
    env[id(iv)] = TensorRef(n_front, iv.type.layout if isinstance(iv.type, TensorType) else None)
    cursor[0] = n_front + 1
    for phi, ref in zip(region.carried_args, init_refs):
        env[id(phi)] = bound_to(remap(ref), phi.type)
    body_scope = _Scope(body_builder, env, None, "", loop_keys(region, plan.schedule), scope.scope_id, scope.active)
    _lower_nodes(plan.schedule, body_scope)
    root_refs = tuple(env[id(r)] for r in plan.roots)
    body = body_builder.finish(TupleRef(root_refs))
    out_leaves = leaves(body.outputs)
    carried = bool(region.carried_args)
    loop_key = scope.key(region)
    ctx_of = scope.ctx_reader()

    def run_loop(v: list[object], c: EvaluateContext) -> object:
        ctx = ctx_of(v, c)
        n = trip_count(region, ctx)
        front = [v[s] for s in frontier_slots]
        carries = [v[s] for s in init_slots]
        last: list[object] = []
        trace = ctx.trace if isinstance(ctx, RunContext) else None
        checked = isinstance(ctx, RunContext) and ctx.full_check
        for i in range(n):
            index = index_tensor(i, ctx.device)
            if checked and trace is None:
                values = body.eval(front + [index] + carries, ctx, check=True)
            elif trace is None:
                values = body.run(front + [index] + carries, ctx)
            else:
                assert isinstance(ctx, RunContext)
                nested: dict[str, object] = {}
                ictx = ctx.iteration(f"{ctx.trace_prefix}{loop_key}[{i}]", nested)
                values = body.eval(front + [index] + carries, ictx, check=checked)
                record(body.keyed, values, ictx.trace_prefix, nested, trace)
            outs = [values[r.slot] for r in out_leaves]
            if carried:
                carries = outs
            else:
                last = outs
        return tuple(carries if carried else last)

    reads = frontier_slots + init_slots
    slot = scope.emit(run_loop, reads, region.checked_type, region, keyed=True, body=body)
    if carried:
        shapes = [bound_to(plain(r), phi.type) for r, phi in zip(init_refs, region.carried_args)]
        shape: Ref = shapes[0] if len(shapes) == 1 else TupleRef(tuple(shapes))
    else:
        shape = plain(root_refs[0])
    return _project(slot, shape, region, scope)
