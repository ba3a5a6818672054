"""The failing-program mode of ``programs(failing=True)``: one construct planted at the
entry function's top level that fails at run time, where the type rules cannot see it — a
slice past its axis or from a negative start (at the top level, or in a loop's second
iteration), a ``take`` index out of range, ``local`` of a split value, a zero-trip loop
without carries, a handler that raises, a weight its module's reading lacks or holds in
another shape or dtype.

Every other construct is safe by construction, and every top-level node runs (each value
is read or is an output; a weight read in a loop body is read before the loop), so the
planted error is the run's: both routes must raise it, with the same message.
``plant_failure`` returns its kind and a fragment of that message.
"""

from collections.abc import Callable

import torch
from hypothesis import strategies as st

from tfexec import ops
from tfexec.ir.dims import ShapeDim, dim_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, ConstTensor, GridRegionExpr, Var
from tfexec.ir.types import TensorType
from tfexec.testing._gen import I64_SCALAR, Gen, Val, draw_dtype
from tfexec.testing._layouts import is_split, split_layout
from tfexec.testing.handlers import FAIL_MESSAGE, AlwaysFails


def plant_failure(g: Gen) -> tuple[str, str]:
    """Add a node that fails when run (at the top level: ``g`` has no enclosing loop);
    return the kind of failure (one of ``FAILURE_KINDS``) and a fragment of the
    ``EvalError`` message it raises."""
    assert len(g.scopes) == 1 and not g.is_callee
    switched_on = {"layouts": g.config.layouts, "weights": g.config.weights, "handlers": g.config.handlers}
    planter = g.draw(st.sampled_from([p for p, needs in _PLANTERS if needs is None or switched_on[needs]]))
    return _kind(planter), planter(g)


def _kind(planter: Callable[[Gen], str]) -> str:
    return planter.__name__.lstrip("_").replace("_", " ")


def _emitted(g: Gen, call: Call, bounded: bool = False) -> Val:
    v = g.emit(call, bounded=bounded)
    assert v is not None, f"the type rules refused a planted failure: {call}"
    return v


def _known_axis(g: Gen) -> tuple[Val, int, int]:
    """A value with an axis of known size (a fresh parameter when the pool has none): the
    value, the axis and its size."""
    x = g.pick(lambda v: any(g.concrete(d) is not None for d in v.type.shape))
    if x is None:
        x = g.fresh(TensorType((g.draw(st.integers(1, 4)),), draw_dtype(g)))
    axes = [i for i, d in enumerate(x.type.shape) if g.concrete(d) is not None]
    axis = g.draw(st.sampled_from(axes))
    size = g.concrete(x.type.shape[axis])
    assert size is not None
    return x, axis, size


def _window(g: Gen, x: Val, axis: int, start: ops.Operand, size: int) -> Call:
    """``slice`` of ``x``: ``size`` elements from ``start`` on ``axis``, the other axes whole."""
    starts: list[ops.Operand] = [start if i == axis else 0 for i in range(x.type.rank)]
    sizes: list[ShapeDim] = [size if i == axis else d for i, d in enumerate(x.type.shape)]
    return ops.slice(x.expr, tuple(starts), sizes=tuple(sizes))


def _slice_past_the_end(g: Gen) -> str:
    """A window that ends past its axis (its start a Python int, a constant or dim arithmetic),
    or — now and then — one whose start is negative."""
    x, axis, n = _known_axis(g)
    size = g.draw(st.integers(1, n))
    if g.draw(st.integers(0, 4)) == 0:
        start = _emitted(g, ops.dim_sub(0, g.draw(st.integers(1, 2))), bounded=True)
        _emitted(g, _window(g, x, axis, start.expr, size), x.bounded)
        return f"on axis {axis} is negative (starts never count from the end)"
    first = g.draw(st.integers(n - size + 1, n + 1))
    kind = g.draw(st.sampled_from(("int", "constant", "dim")))
    begin: ops.Operand = first
    if kind == "constant":
        begin = Constant(first, I64_SCALAR)
    elif kind == "dim":
        begin = _emitted(g, ops.dim_add(first - 1, 1), bounded=True).expr
    _emitted(g, _window(g, x, axis, begin, size), x.bounded)
    return f"runs past axis {axis} of length {n}"


def _slice_past_the_end_in_a_loop(g: Gen) -> str:
    """A loop whose first iteration's window fits and whose second runs past the axis."""
    x, axis, n = _known_axis(g)
    size = g.draw(st.integers(1, n))
    trips = g.draw(st.integers(2, 3))
    j = next(g.counter)
    index = Var(f"k{j}", I64_SCALAR)
    g.scopes.append([])
    g.indices.append((index, trips))
    g.add(Val(index, I64_SCALAR, True, computed=False))
    start = _emitted(g, ops.dim_mul(index, n - size + 1), bounded=True)
    window = _emitted(g, _window(g, x, axis, start.expr, size), x.bounded)
    g.scopes.pop()
    g.indices.pop()
    g.add(Val(GridRegionExpr(trips, index, (), (), window.expr, ()), window.type, False))
    return f"runs past axis {axis} of length {n}"


def _take_out_of_range(g: Gen) -> str:
    """``take`` with an index equal to (or past) the axis length: a constant, or ``arange`` one too long."""
    x, axis, n = _known_axis(g)
    if g.draw(st.booleans()):
        _emitted(g, ops.take(x.expr, _emitted(g, ops.arange(extent=n + 1), bounded=True).expr, axis=axis), x.bounded)
        return f"take: index {n} is out of range for axis {axis} of length {n}"
    bad = g.draw(st.integers(n, n + 2))
    values = g.draw(st.lists(st.integers(0, n - 1), max_size=3))
    values.insert(g.draw(st.integers(0, len(values))), bad)
    indices = Constant(torch.tensor(values, dtype=torch.int64), TensorType((len(values),), DType.int64))
    _emitted(g, ops.take(x.expr, indices, axis=axis), x.bounded)
    return f"take: index {bad} is out of range for axis {axis} of length {n}"


def _local_of_a_split_value(g: Gen) -> str:
    """``local`` of a value split over the mesh: resharded so, or a parameter declared so."""
    x = g.pick(lambda v: v.type.rank >= 1)
    layout = None if x is None else x.type.layout if is_split(x.type.layout) else split_layout(g, x.type.shape)
    if x is None or layout is None:
        shape = (2 * g.draw(st.integers(1, 3)),)
        layout = split_layout(g, shape)
        assert layout is not None
        x = g.fresh(TensorType(shape, draw_dtype(g), layout))
    if x.type.layout != layout:
        x = _emitted(g, ops.reshard(x.expr, layout=layout), x.bounded)
    _emitted(g, ops.local(x.expr), x.bounded)
    return "local of a value split over the mesh"


def _zero_trip_loop(g: Gen) -> str:
    """A loop without carries whose extent is zero at run time (static, or ``d // 7``)."""
    extent: ShapeDim = 0
    if len(g.dim_vars) > 0 and g.draw(st.booleans()):
        extent = dim_expr("floordiv", g.draw(st.sampled_from(g.dim_vars)), 7)  # every size is at most 6
    j = next(g.counter)
    index = Var(f"k{j}", I64_SCALAR)
    g.scopes.append([])
    g.indices.append((index, 0))
    g.add(Val(index, I64_SCALAR, True, computed=False))
    body = _emitted(g, ops.cast(index, dtype=g.draw(st.sampled_from((DType.float32, DType.int64)))), bounded=True)
    g.scopes.pop()
    g.indices.pop()
    g.add(Val(GridRegionExpr(extent, index, (), (), body.expr, ()), body.type, False))
    return "the loop runs zero times and has no carried values"


def _handler_raises(g: Gen) -> str:
    """``testing_fail``, whose plain handler raises."""
    x = g.pick() or g.fresh(TensorType((g.draw(st.integers(1, 3)),), DType.float32))
    _emitted(g, ops.apply(AlwaysFails(), x.expr), x.bounded)
    return FAIL_MESSAGE


def _weight_unlike_the_reading(g: Gen) -> str:
    """A weight the module declares but its reading lacks, or holds in another shape or dtype."""
    name = f"w{len(g.weights.types)}"
    shape = tuple(g.draw(st.integers(1, 3)) for _ in range(g.draw(st.integers(0, 2))))
    t = TensorType(shape, g.draw(st.sampled_from((DType.float32, DType.int64))))
    g.weights.types[name] = t
    kind = g.draw(st.sampled_from(("missing", "shape", "dtype")))
    if kind != "missing":
        wrong = (*shape[:-1], shape[-1] + 1) if shape and kind == "shape" else (2,) if kind == "shape" else shape
        dtype = t.dtype.torch if kind == "shape" else torch.float64
        g.weights.data[name] = torch.zeros(wrong, dtype=dtype)
    g.add(Val(ConstTensor(name, t), t, True))
    return f"constant {name} is missing from the reading" if kind == "missing" else f"constant {name}: declared {t}, found"


_PLANTERS: tuple[tuple[Callable[[Gen], str], str | None], ...] = (
    (_slice_past_the_end, None), (_slice_past_the_end_in_a_loop, None), (_take_out_of_range, None),
    (_local_of_a_split_value, "layouts"), (_zero_trip_loop, None), (_handler_raises, "handlers"),
    (_weight_unlike_the_reading, "weights"),
)
"""Each way to fail, and the switch it needs (None: always available)."""
FAILURE_KINDS = tuple(_kind(p) for p, _ in _PLANTERS)
"""The kinds of planted failure, by name."""
