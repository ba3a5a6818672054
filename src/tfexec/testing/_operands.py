"""Operands for the constructs: parameters, broadcasting partners, values of a given
type, guarded inputs (``abs(x) + 0.5``, bounded integers), and in-range slice starts."""

from hypothesis import strategies as st

from tfexec import ops
from tfexec.ir.dims import ShapeDim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Constant, Var
from tfexec.ir.types import Layout, ShardLayout, TensorType, TupleType, Type
from tfexec.testing._gen import I64_SCALAR, SCALARS, Gen, Val, broadcast, draw_dtype, input_for, scalar_for, tensor_for
from tfexec.testing._layouts import laid_out


def initial_params(g: Gen) -> None:
    """One parameter per ``DimVar`` (so each is bound by an input), a few more, and maybe a
    tuple-typed parameter; with ``layouts``, some declared with a layout."""
    for dv in g.dim_vars:
        shape = list(g.shape(2))
        shape.insert(g.draw(st.integers(0, len(shape))), dv)
        g.fresh(laid_out(g, TensorType(tuple(shape), DType.float32)))
    for _ in range(g.draw(st.integers(0 if g.dim_vars else 1, 2))):
        g.fresh(laid_out(g, TensorType(g.shape(), draw_dtype(g))))
    if g.config.tuples and g.draw(st.integers(0, 3)) == 0:
        fields: tuple[Type, ...] = tuple(laid_out(g, TensorType(g.shape(2), draw_dtype(g))) for _ in range(2))
        if g.config.boundaries and g.draw(st.booleans()):  # a nested one: ((a, b), c), read by paths of two
            fields = (TupleType(fields), laid_out(g, TensorType(g.shape(2), draw_dtype(g))))
        t = TupleType(fields)
        var = Var(f"p{len(g.params)}", t)
        g.params.append(var)
        items = [_input_of_type(g, f) for f in fields]
        g.inputs.append(list(items) if g.config.cast_inputs and g.draw(st.integers(0, 3)) == 0 else tuple(items))
        g.project(var, t, True)
        for v in g.scopes[0][-_leaf_count(t):]:
            v.computed = False


def _input_of_type(g: Gen, t: Type) -> object:
    """A concrete input of type ``t`` (a tuple's, field by field)."""
    if isinstance(t, TupleType):
        return tuple(_input_of_type(g, f) for f in t.fields)
    return input_for(g, tensor_for(g, t, None, None))


def _leaf_count(t: Type) -> int:
    return sum(_leaf_count(f) for f in t.fields) if isinstance(t, TupleType) else 1


def shape_of(g: Gen, x: ops.Operand) -> tuple[ShapeDim, ...]:
    """The shape of an operand (``()`` for a Python scalar)."""
    if isinstance(x, (bool, int, float)):
        return ()
    t = g.type_of(x)
    assert isinstance(t, TensorType)
    return t.shape


def partner(g: Gen, shape: tuple[ShapeDim, ...]) -> tuple[ops.Operand, bool]:
    """An operand broadcasting with ``shape`` — a Python scalar (weak), a pool value, or a
    fresh parameter of a broadcast-compatible shape — and whether it is bounded."""
    kind = g.draw(st.sampled_from(("scalar", "pool", "fresh")))
    if kind == "scalar":
        return g.draw(st.sampled_from(SCALARS)), True
    if kind == "pool":
        v = g.pick(lambda v: broadcast(shape, v.type.shape) is not None)
        if v is not None:
            return v.expr, v.bounded
    keep = g.draw(st.integers(0, len(shape)))
    dims: tuple[ShapeDim, ...] = tuple(1 if g.draw(st.integers(0, 3)) == 0 else d for d in shape[len(shape) - keep:])
    if keep == len(shape) < 4 and g.draw(st.integers(0, 3)) == 0:
        dims = (g.size(), *dims)
    v = g.fresh(TensorType(dims, draw_dtype(g)))
    return v.expr, v.bounded


def value_of_type(g: Gen, t: TensorType) -> Val:
    """A value of exactly type ``t``: from the pool, a ``full`` (resharded to ``t``'s
    layout), or a fresh parameter."""
    kind = g.draw(st.sampled_from(("pool", "fresh", "full")))
    if kind == "pool":
        v = g.pick(lambda v: v.type == t)
        if v is not None:
            return v
    if kind == "full":
        v = g.emit(ops.full(shape=t.shape, value=scalar_for(g, t.dtype), dtype=t.dtype), bounded=True)
        v = None if v is None else relaid(g, v, t.layout)
        if v is not None:
            return v
    return g.fresh(t)


def relaid(g: Gen, v: Val, layout: Layout | ShardLayout | None) -> Val | None:
    """``v`` carrying ``layout``: ``v`` itself when it does, else ``reshard`` of it."""
    if v.type.layout == layout:
        return v
    return g.emit(ops.reshard(v.expr, layout=layout), bounded=v.bounded)


def safe_positive(g: Gen, x: Val) -> Val | None:
    """``abs(x) + 0.5``: a value ``log``, ``sqrt`` and a float ``pow`` may read (x not bool)."""
    a = g.emit(ops.abs(x.expr), bounded=x.bounded)
    return None if a is None else g.emit(ops.add(a.expr, 0.5), bounded=x.bounded)


def small_int(g: Gen, x: Val) -> Val | None:
    """``x`` made safe to cast to an integer: ``tanh(x) * 3`` unless it is already bounded."""
    if x.bounded or not x.type.dtype.is_floating:
        return x
    t = g.emit(ops.tanh(x.expr), bounded=True)
    return None if t is None else g.emit(ops.mul(t.expr, 3.0), bounded=True)


def index_operand(g: Gen, max_start: int) -> ops.Operand:
    """A rank-0 integer in ``[0, max_start]`` for a slice start: a constant, or dim
    arithmetic on an enclosing loop's index (tiled ``k * T + c``, wrapped, clamped) or on a
    small integer scalar of the pool, reduced ``dim_mod`` the window's room."""
    kinds = ["static", "constant"] + (["tiled", "wrapped", "clamped"] if g.indices else [])
    scalars = [v for s in g.scopes for v in s if v.type == I64_SCALAR and v.bounded]
    kind = g.draw(st.sampled_from(kinds + (["scalar"] if scalars else [])))
    if kind == "static":
        return g.draw(st.integers(0, max_start))
    if kind == "constant":
        return Constant(g.draw(st.integers(0, max_start)), I64_SCALAR)
    if kind == "scalar":
        v = g.emit(ops.dim_mod(g.draw(st.sampled_from(scalars)).expr, max_start + 1), bounded=True)
        return 0 if v is None else v.expr
    k, trips = g.draw(st.sampled_from(g.indices))
    if kind == "tiled" and trips is not None:
        tile = g.draw(st.integers(0, max_start // max(trips - 1, 1)))
        offset = g.draw(st.integers(0, max_start - max(trips - 1, 0) * tile))
        v = g.emit(ops.dim_mul(k, tile), bounded=True)
        if v is not None and offset:
            v = g.emit(ops.dim_add(v.expr, offset), bounded=True)
        return 0 if v is None else v.expr
    if kind == "clamped":
        v = g.emit(ops.dim_sub(k, 1), bounded=True)
        v = None if v is None else g.emit(ops.dim_max(v.expr, 0), bounded=True)
        v = None if v is None else g.emit(ops.dim_min(v.expr, max_start), bounded=True)
        return 0 if v is None else v.expr
    v = g.emit(ops.dim_mul(k, g.draw(st.integers(1, 3))), bounded=True)
    v = None if v is None else g.emit(ops.dim_add(v.expr, g.draw(st.integers(0, 2))), bounded=True)
    v = None if v is None else g.emit(ops.dim_mod(v.expr, max_start + 1), bounded=True)
    return 0 if v is None else v.expr

