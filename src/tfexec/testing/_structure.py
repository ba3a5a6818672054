"""The structural constructs of ``programs()`` — tuples, function calls, loops — and
``step``, which adds one construct of any kind."""

from collections.abc import Callable

from hypothesis import strategies as st

from tfexec import ops
from tfexec.ir.boundary import boundary_mismatch, substitute_type
from tfexec.ir.dims import DimVar, ShapeDim, dim_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Function, GridRegionExpr, Tuple, Var
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.testing._constructs import OP_CONSTRUCTS
from tfexec.testing._boundary import BOUNDARY_CONSTRUCTS, index_call, index_value, outer_index_read
from tfexec.testing._constructs_v2 import V2_CONSTRUCTS
from tfexec.testing._gen import I64_SCALAR, Callee, Gen, Val, broadcast, deep_ids, draw_dtype, ids
from tfexec.testing._handler_calls import handler_call, probe_call
from tfexec.testing._layouts import laid_out, local, reshard
from tfexec.testing._operands import relaid, small_int, value_of_type
from tfexec.testing._weights import weight


def step(g: Gen) -> None:
    """Add one construct to ``g`` (retrying a few times when the drawn one does not fit its pool)."""
    for _ in range(4 if g.config.ops is None else 16):  # a small op set refuses most constructs
        if g.draw(st.sampled_from(CONSTRUCTS))(g) is not None:
            return


def ensure(g: Gen, name: str, *, required: bool) -> None:
    """Add one of the constructs ``programs(ensure=(name,))`` stands for. When ``required``
    (the entry's top level), make a fresh ``f32[2]`` parameter if the pool fits none, and
    fail if even that does not help; elsewhere (a callee, a loop body) it is a best effort."""
    constructs = ENSURED_CONSTRUCTS[name]
    for attempt in range(16 if required else 4):
        if attempt == 8:
            g.fresh(TensorType((2,), DType.float32))
        if g.draw(st.sampled_from(constructs))(g) is not None:
            return
    if required:
        raise AssertionError(f"programs: could not add any of {[c.__name__ for c in constructs]}")


def _ensure_inside(g: Gen) -> None:
    """The ensured constructs, once each, in a callee or loop body being drawn."""
    for name in sorted(g.config.ensure & set(ENSURED_CONSTRUCTS)):
        ensure(g, name, required=False)


def _tuple(g: Gen) -> Val | None:
    """A ``Tuple`` of pool values (maybe nested) and ``TupleGetItem`` projections of it."""
    if not g.config.tuples:
        return None
    fields = [g.pick() for _ in range(g.draw(st.integers(1, 3)))]
    vals = [v for v in fields if v is not None]
    if not vals:
        return None
    exprs = [v.expr for v in vals]
    types: list[Type] = [v.type for v in vals]
    if len(vals) > 2 and g.draw(st.booleans()):
        exprs, types = [exprs[0], Tuple(tuple(exprs[1:]))], [types[0], TupleType(tuple(types[1:]))]
    node = Tuple(tuple(exprs))
    g.used.update(deep_ids([node]))
    g.project(node, TupleType(tuple(types)), all(v.bounded for v in vals))
    projections = g.scopes[-1][-len(vals):]
    for projection, v in zip(projections, vals):
        projection.computed = v.computed  # a projection is the field's value
    return vals[0]


def _call(g: Gen) -> Val | None:
    """A call of a small callee (made on first use, at most two per program) whose own
    ``DimVar`` is bound afresh at each call site; tuple results are projected."""
    if not g.config.calls or g.is_callee:
        return None
    if not g.callees or (len(g.callees) < 2 and g.draw(st.integers(0, 2)) == 0):
        g.callees.append(_callee(g))
        callee = g.callees[-1]  # a callee made is called at least once
    else:
        callee = g.draw(st.sampled_from(g.callees))
    size = g.size()
    args = [value_of_type(g, _as_tensor_type(substitute_type(p.type, {callee.dim.name: size}))).expr
            for p in callee.function.params]
    bindings: dict[str, ShapeDim] = {}
    for p, a in zip(callee.function.params, args):
        assert boundary_mismatch(p.type, g.type_of(a), bindings) is None
    call = g.named(ops.call(callee.function, *args))
    g.used.update(ids(args))
    result = substitute_type(callee.result, bindings)
    if isinstance(result, TensorType):
        return g.add(Val(call, result, False))
    g.project(call, result, False)
    return g.scopes[-1][-1]


def _as_tensor_type(t: Type) -> TensorType:
    """``t``, which is a tensor type (callee parameters are tensors)."""
    assert isinstance(t, TensorType)
    return t


def _callee(g: Gen) -> Callee:
    """A small function of one or more parameters, the first shaped by its own ``DimVar``
    (sometimes named like one of the caller's: each call binds it afresh)."""
    dim = DimVar(g.draw(st.sampled_from(("M", "B"))))
    cg = Gen(g.draw, g.config, None, {}, (dim,), f"g{len(g.callees)}", g.weights)
    shape = list(cg.shape(1))
    shape.insert(g.draw(st.integers(0, len(shape))), dim)
    cg.fresh(laid_out(cg, TensorType(tuple(shape), g.draw(st.sampled_from((DType.float32, DType.int64))))))
    _ensure_inside(cg)
    for _ in range(g.draw(st.integers(1, 3))):
        step(cg)
    body, result = cg.result()
    g.all_vals.extend(cg.all_vals)
    fn = Function(cg.name, tuple(cg.params), body, result if g.draw(st.booleans()) else None)
    return Callee(fn, dim, result)


def _extent(g: Gen, zero_ok: bool) -> tuple[ShapeDim, int | None]:
    """A loop extent and its trip count when known: static, a ``DimVar``, or ``d // 2`` /
    ``d - 1`` (only where zero trips are fine or the count is known to be positive)."""
    kind = g.draw(st.sampled_from(("static", "dim", "expr")))
    if kind != "static" and g.dim_vars:
        d: ShapeDim = g.draw(st.sampled_from(g.dim_vars))
        if kind == "expr":
            e = dim_expr("floordiv", d, 2) if g.draw(st.booleans()) else dim_expr("sub", d, 1)
            n = g.concrete(e)
            if zero_ok or (n is not None and n > 0):
                return e, n
        return d, g.concrete(d)
    n = g.draw(st.integers(0 if zero_ok else 1, 3))
    return n, n


def _loop(g: Gen) -> Val | None:
    """A ``GridRegionExpr`` with no, one or several carries (nested up to two deep). The
    body draws from the enclosing pools (loop-invariant values) and from its own (the
    index, the phis); each yield has exactly its phi's type."""
    if not g.config.loops or len(g.indices) >= g.config.max_loop_depth:
        return None
    n_carries = g.draw(st.integers(0, 3))
    extent, trips = _extent(g, zero_ok=n_carries > 0)
    j = next(g.counter)
    index = Var(f"k{j}", I64_SCALAR)
    inits = [g.pick() or value_of_type(g, TensorType(g.shape(), draw_dtype(g))) for _ in range(n_carries)]
    if n_carries and g.config.boundaries and g.draw(st.integers(0, 2)) == 0:  # an index-valued carry (a host int)
        index_init = index_value(g)
        if index_init is not None:
            inits[-1] = index_init
    phis = [Var(f"c{j}_{i}", v.type) for i, v in enumerate(inits)]
    g.scopes.append([])
    g.indices.append((index, trips))
    g.add(Val(index, I64_SCALAR, True, computed=False))
    phi_vals = [g.add(Val(phi, v.type, False, computed=False)) for phi, v in zip(phis, inits)]
    _ensure_inside(g)
    for _ in range(g.draw(st.integers(1, 3))):
        step(g)
    if g.config.boundaries and g.draw(st.booleans()):
        outer_index_read(g)  # a tensor kernel on an index made outside the loop (a host int passed in)
    last_call = None
    if g.config.boundaries and g.config.calls and not g.is_callee and g.draw(st.integers(0, 2)) == 0:
        last_call = index_call(g, g.scopes[-1][0])  # a callee of the index, last in the body: nothing after it
    sinks = [v for v in g.scopes[-1] if v.computed and id(v.expr) not in g.used]
    if phi_vals:
        yields = [_yield(g, phi, sinks[i :: len(phi_vals)]).expr for i, phi in enumerate(phi_vals)]
        t: Type = phis[0].type if len(phis) == 1 else TupleType(tuple(p.type for p in phis))
        body = yields[0] if len(yields) == 1 else Tuple(tuple(yields))
    elif last_call is not None:  # the loop's value is the call's: the body ends in it
        yields, t, body = [], last_call.type, last_call.expr
    else:
        last = sinks[0] if sinks else g.pick()
        assert last is not None
        for src in sinks[1:]:
            last = _fold(g, last, src)
        yields, t, body = [], last.type, last.expr
    g.scopes.pop()
    g.indices.pop()
    span = Span("<programs>", next(g.counter) + 1, 1, binding="acc") if g.config.names and g.draw(st.booleans()) else None
    region = GridRegionExpr(extent, index, tuple(v.expr for v in inits), tuple(phis), body, tuple(yields), span=span)
    g.used.update(ids([v.expr for v in inits]))
    if isinstance(t, TensorType):
        return g.add(Val(region, t, False))
    g.project(region, t, False)
    return g.scopes[-1][-1]


def _fold(g: Gen, target: Val, src: Val) -> Val:
    """``target`` updated by ``src`` — ``add``, or ``ne`` for a bool target — with ``src``
    summed to a scalar first if it does not broadcast into ``target``'s shape. The shape
    is ``target``'s; the dtype may promote."""
    if broadcast(target.type.shape, src.type.shape) != target.type.shape:
        summed = g.emit(ops.reduce(src.expr, kind="sum"), bounded=False)
        if summed is None:
            return target
        src = summed
    y = g.emit((ops.ne if target.type.dtype is DType.bool else ops.add)(target.expr, src.expr), bounded=False)
    return target if y is None else y


def _yield(g: Gen, phi: Val, sources: list[Val]) -> Val:
    """The next value of a carry, of exactly the phi's type: the phi updated by the body's
    otherwise unused values (``_fold``, cast back if promotion changed the dtype, resharded
    back to the carry's layout), or, when
    there are none, sometimes another value of that type or the phi itself."""
    if g.config.boundaries and phi.type == I64_SCALAR and g.draw(st.booleans()):  # the carry stays an index value
        index = g.indices[-1][0]
        step_up = g.emit(g.draw(st.sampled_from((ops.dim_add, ops.dim_max)))(phi.expr, index), bounded=True)
        if step_up is not None:
            return step_up
    kind = "update" if sources else g.draw(st.sampled_from(("update", "same", "identity")))
    if kind == "identity":
        return phi
    if kind == "same":
        v = g.pick(lambda v: v.type == phi.type and v is not phi)
        if v is not None:
            return v
    y = phi
    for src in sources or [g.pick(lambda v: v.computed) or phi]:
        y = _fold(g, y, src)
    if y.type.dtype != phi.type.dtype:
        small = small_int(g, y) if phi.type.dtype.is_integral else y
        cast = None if small is None else g.emit(ops.cast(small.expr, dtype=phi.type.dtype), bounded=False)
        y = phi if cast is None else cast
    if y.type.layout != phi.type.layout:  # an op's result carries no layout: reshard back to the carry's
        back = relaid(g, y, phi.type.layout)
        y = phi if back is None else back
    assert y.type == phi.type, f"yield {y.type} for carry {phi.type}"
    return y


CONSTRUCTS: tuple[Callable[[Gen], Val | None], ...] = (
    *OP_CONSTRUCTS, _tuple, _call, _loop, _loop, _call, reshard, local, weight, handler_call,
)
"""What ``step`` draws from (a construct listed twice is drawn twice as often); the last four
return None when their switch is off. The boundary constructs (``_boundary``) are drawn where
``ensure=("boundaries",)`` asks for them, so the default mix stays as it was."""

ENSURED_CONSTRUCTS: dict[str, tuple[Callable[[Gen], Val | None], ...]] = {
    "layouts": (reshard, local), "weights": (weight,), "handlers": (handler_call, probe_call), "v2_ops": V2_CONSTRUCTS,
    "boundaries": BOUNDARY_CONSTRUCTS,
}
"""The constructs each ``programs(ensure=...)`` name stands for (``cast_inputs`` is about
the inputs, not a construct)."""
