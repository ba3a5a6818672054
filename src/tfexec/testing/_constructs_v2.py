"""The catalogue-v2 op constructs of ``programs()``, drawn as one entry (``v2_op``) of the
op constructs, so the v1 constructs keep their rate.

Each construct, as in ``_constructs``, draws operands from the pool (or fresh parameters),
builds one or a few calls with the ``tfexec.ops`` builders and returns the value it added,
or ``None`` when nothing fits. What the type rules cannot see is kept true by
construction: ``gather`` indices are in range (an ``argmax``/``argsort`` along the axis,
or, where the axis's size is known in every run, a constant or an input drawn in range),
integer divisions divide by a positive Python scalar, and conv and pool windows fit their
axes (along an axis whose size varies per call, a window of 1).
"""

from collections.abc import Callable

import torch
from hypothesis import strategies as st

from tfexec import ops
from tfexec.ir.dims import ShapeDim, dim_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, Expr
from tfexec.ir.types import TensorType
from tfexec.testing._gen import SCALARS, Gen, Val, broadcast
from tfexec.testing._operands import partner, shape_of, value_of_type
from tfexec.testing._weights import new_weight

_INDEX_DTYPES = (DType.int64, DType.int32)


def _linear(g: Gen) -> Val | None:
    """``linear(x, w[, b])``: a float ``x [..., K]``, a weight ``[N, K]`` (usually a fresh
    parameter, with ``weights`` sometimes a module weight) and maybe a bias ``[N]``, all of
    ``x``'s dtype."""
    x = g.pick(lambda v: v.type.rank >= 1 and v.type.dtype is not DType.bool)
    if x is not None and not x.type.dtype.is_floating:
        x = g.emit(ops.cast(x.expr, dtype=DType.float32), bounded=x.bounded)
    if x is None:
        return None
    dtype = x.type.dtype
    w_type = TensorType((g.size(), x.type.shape[-1]), dtype)
    kind = g.draw(st.sampled_from(("fresh", "fresh", "weight", "value")))
    if kind == "weight" and g.config.weights and (not g.is_callee or w_type.is_static):
        w = new_weight(g, w_type)
    else:
        w = g.fresh(w_type) if kind != "value" else value_of_type(g, w_type)
    args: list[Expr] = [x.expr, w.expr]
    bounded = x.bounded and w.bounded
    if g.draw(st.booleans()):
        b = value_of_type(g, TensorType((w_type.shape[0],), dtype))
        args.append(b.expr)
        bounded = bounded and b.bounded
    return g.emit(ops.linear(*args), bounded=bounded)


def _scan(g: Gen) -> Val | None:
    """``cumsum`` (a bool mask's is its running count) and ``cumprod`` along an axis, negative
    axes too, rank 0 included; sometimes with an explicit accumulation dtype."""
    x = g.pick()
    if x is None:
        return None
    rank = max(x.type.rank, 1)
    axis = g.draw(st.integers(-rank, rank - 1))
    dtype: DType | None = None
    if g.draw(st.integers(0, 3)) == 0:
        dtype = g.draw(st.sampled_from((DType.float32, DType.float64) if x.type.dtype.is_floating else (DType.int64, DType.float32)))
    if g.draw(st.integers(0, 3)) == 0:
        return g.emit(ops.cumprod(x.expr, axis=axis, dtype=dtype), bounded=False)
    return g.emit(ops.cumsum(x.expr, axis=axis, dtype=dtype), bounded=x.bounded)


def _clamp(g: Gen) -> Val | None:
    """``clamp(x, low, high)``: Python-scalar bounds (``low > high`` now and then), or a
    broadcasting partner for one of them."""
    x = g.pick(lambda v: v.type.dtype is not DType.bool)
    if x is None:
        return None
    integral = not x.type.dtype.is_floating
    lows: tuple[int | float, ...] = (-1, 0, 1) if integral and g.draw(st.booleans()) else (-1.0, -0.5, 0.0, 0.25)
    highs: tuple[int | float, ...] = (0, 1, 2) if isinstance(lows[0], int) else (0.5, 1.0, 1.5, -1.0)
    low: ops.Operand = g.draw(st.sampled_from(lows))
    high: ops.Operand = g.draw(st.sampled_from(highs))
    bounded = x.bounded
    which = g.draw(st.sampled_from(("scalars", "scalars", "low", "high")))
    if which != "scalars":
        other, other_bounded = partner(g, x.type.shape)
        bounded = bounded and other_bounded
        low, high = (other, high) if which == "low" else (low, other)
    return g.emit(ops.clamp(x.expr, low, high), bounded=bounded)


_ROUNDING: dict[str, Callable[[ops.Operand], Call]] = {
    "floor": ops.floor, "ceil": ops.ceil, "trunc": ops.trunc, "sign": ops.sign,
}


def _rounding(g: Gen) -> Val | None:
    """``floor``, ``ceil``, ``trunc``, ``sign`` and ``round`` (to 0 or 1 decimals, halves to
    even), on floats mostly (on integers they are the identity)."""
    x = g.pick(lambda v: v.type.dtype is not DType.bool)
    if x is None:
        return None
    name = g.draw(st.sampled_from((*_ROUNDING, "round", "round")))
    if name != "round":
        return g.emit(_ROUNDING[name](x.expr), bounded=x.bounded)
    decimals = g.draw(st.sampled_from((0, 1))) if x.type.dtype.is_floating else 0
    return g.emit(ops.round(x.expr, decimals=decimals), bounded=x.bounded)


def _triangle(g: Gen) -> Val | None:
    """``tril`` / ``triu`` of a matrix or a batch of them, the diagonal shifted -2..2."""
    x = g.pick(lambda v: v.type.rank >= 2)
    if x is None:
        return None
    build = ops.triu if g.draw(st.booleans()) else ops.tril
    return g.emit(build(x.expr, diagonal=g.draw(st.integers(-2, 2))), bounded=x.bounded)


def _gather(g: Gen) -> Val | None:
    """``gather`` along an axis with in-range ``i64``/``i32`` indices: ``argmax`` of a value
    of ``x``'s shape (keepdims: the max-picking pattern), ``argsort`` (sorting ``x`` by a
    key), or — where the axis's size is known in every run — a constant or (outside a
    callee) an input drawn in range, no longer than ``x`` on the other axes."""
    x = g.pick(lambda v: v.type.rank >= 1)
    if x is None:
        return None
    rank = x.type.rank
    axis = g.draw(st.integers(0, rank - 1))
    n = g.concrete(x.type.shape[axis])
    kinds = ["argmax", "argsort"] + ([] if n is None else ["constant"] + ([] if g.is_callee else ["fresh"]))
    kind = g.draw(st.sampled_from(kinds))
    index: Val | None = None
    if kind in ("argmax", "argsort"):
        key = g.pick(lambda v: v.type.shape == x.type.shape and v.type.dtype is not DType.bool)
        if key is None:
            key = g.emit(ops.cast(x.expr, dtype=DType.int64), bounded=True) if x.type.dtype is DType.bool else x
        if key is not None and kind == "argmax":
            index = g.emit(ops.argmax(key.expr, axis=axis, keepdims=True), bounded=True)
        elif key is not None:
            index = g.emit(ops.argsort(key.expr, axis=axis, descending=g.draw(st.booleans())), bounded=True)
    elif n is not None:
        shape = tuple(g.draw(st.integers(1, 4)) if i == axis else _no_longer(g, d) for i, d in enumerate(x.type.shape))
        dtype = g.draw(st.sampled_from(_INDEX_DTYPES))
        if kind == "fresh":
            index = g.fresh(TensorType(shape, dtype), low=0, high=n)
        else:
            sizes = [g.concrete(s) or 1 for s in shape]
            count = 1
            for s in sizes:
                count *= s
            values = g.draw(st.lists(st.integers(0, n - 1), min_size=count, max_size=count))
            t = TensorType(tuple(sizes), dtype)
            index = g.add(Val(Constant(torch.tensor(values, dtype=dtype.torch).reshape(sizes), t), t, True, computed=False))
    if index is None:
        return None
    if index.type.dtype not in _INDEX_DTYPES or (index.type.dtype is DType.int64 and g.draw(st.integers(0, 3)) == 0):
        index = g.emit(ops.cast(index.expr, dtype=DType.int32), bounded=True)
        if index is None:
            return None
    return g.emit(ops.gather(x.expr, index.expr, axis=axis - rank if g.draw(st.booleans()) else axis), bounded=x.bounded)


def _no_longer(g: Gen, d: ShapeDim) -> ShapeDim:
    """An index size for an axis of size ``d`` that is not ``gather``'s: ``d`` itself, or a
    static size no longer than ``d`` in every run (1 when ``d`` varies per call)."""
    n = g.concrete(d)
    if n is None:
        return 1
    return d if g.draw(st.booleans()) else g.draw(st.integers(1, n))


def _any_all(g: Gen) -> Val | None:
    """``any`` / ``all`` over all axes, none (``()``) or some, maybe keeping them (any dtype:
    nonzero is true)."""
    x = g.pick()
    if x is None:
        return None
    rank = x.type.rank
    axes: tuple[int, ...] | None = g.draw(st.sampled_from((None, ())))
    if rank and g.draw(st.booleans()):
        some = g.draw(st.lists(st.integers(0, rank - 1), unique=True, min_size=1))
        axes = tuple(a - rank if g.draw(st.booleans()) else a for a in some)
    build = ops.any if g.draw(st.booleans()) else ops.all
    return g.emit(build(x.expr, axes=axes, keepdims=g.draw(st.booleans())), bounded=True)


def _logical(g: Gen) -> Val | None:
    """``logical_not`` and ``logical_xor`` (with a broadcasting partner) of any dtypes."""
    x = g.pick()
    if x is None:
        return None
    if g.draw(st.booleans()):
        return g.emit(ops.logical_not(x.expr), bounded=True)
    other, _ = partner(g, x.type.shape)
    return g.emit(ops.logical_xor(x.expr, other), bounded=True)


_BITWISE: dict[str, Callable[[ops.Operand, ops.Operand], Call]] = {
    "bitwise_and": ops.bitwise_and, "bitwise_or": ops.bitwise_or, "bitwise_xor": ops.bitwise_xor,
}
_INTEGRAL = (DType.int64, DType.int32, DType.bool)


def _bitwise(g: Gen) -> Val | None:
    """Bitwise ``not`` and ``and``/``or``/``xor`` on integer and bool operands (a partner of
    an integral dtype or a Python int/bool)."""
    a = g.pick(lambda v: v.type.dtype in _INTEGRAL)
    if a is None:
        return None
    name = g.draw(st.sampled_from(("bitwise_not", *_BITWISE)))
    if name == "bitwise_not":
        return g.emit(ops.bitwise_not(a.expr), bounded=a.bounded)
    b, b_bounded = _integral_partner(g, a.type.shape)
    lhs, rhs = (b, a.expr) if g.draw(st.booleans()) else (a.expr, b)
    return g.emit(_BITWISE[name](lhs, rhs), bounded=a.bounded and b_bounded)


def _divide(g: Gen) -> Val | None:
    """``remainder`` and ``floor_divide`` of an integer or a float by a positive Python
    scalar (an integer division never meets a zero)."""
    x = g.pick(lambda v: v.type.dtype is not DType.bool)
    if x is None:
        return None
    build = ops.remainder if g.draw(st.booleans()) else ops.floor_divide
    divisor = g.draw(st.sampled_from((2, 3, 1.5) if x.type.dtype.is_floating else (2, 3)))
    return g.emit(build(x.expr, divisor), bounded=x.bounded)


def _integral_partner(g: Gen, shape: tuple[ShapeDim, ...]) -> tuple[ops.Operand, bool]:
    """An integer or bool operand broadcasting with ``shape``: a Python int/bool, a pool
    value or a fresh parameter of the trailing axes (some widened from 1)."""
    kind = g.draw(st.sampled_from(("scalar", "pool", "fresh")))
    if kind == "scalar":
        return g.draw(st.sampled_from([s for s in SCALARS if isinstance(s, int)])), True
    if kind == "pool":
        v = g.pick(lambda v: v.type.dtype in _INTEGRAL and broadcast(shape, v.type.shape) is not None)
        if v is not None:
            return v.expr, v.bounded
    keep = g.draw(st.integers(0, len(shape)))
    dims = tuple(1 if g.draw(st.integers(0, 3)) == 0 else d for d in shape[len(shape) - keep:])
    v = g.fresh(TensorType(dims, g.draw(st.sampled_from(_INTEGRAL))))
    assert broadcast(shape, shape_of(g, v.expr)) is not None
    return v.expr, v.bounded


def _window(g: Gen, d: ShapeDim, *, pool: bool) -> tuple[int, int, int, int]:
    """A kernel size, padding, stride and dilation for a spatial axis of size ``d`` whose
    windows fit (padding at most half the kernel for a pool); all 1/0 when ``d`` varies."""
    n = g.concrete(d)
    if n is None:
        return 1, 0, 1, 1
    kernel = g.draw(st.integers(1, min(3, n)))
    padding = g.draw(st.integers(0, kernel // 2 if pool else 1))
    dilation = 2 if not pool and 2 * (kernel - 1) + 1 <= n + 2 * padding and g.draw(st.booleans()) else 1
    return kernel, padding, g.draw(st.integers(1, 2)), dilation


def _vision(g: Gen) -> Val | None:
    """``conv`` (1-D or 2-D, a fresh weight, maybe grouped, maybe a bias), ``max_pool`` /
    ``avg_pool`` and ``adaptive_avg_pool`` of a float value, with windows that fit."""
    kind = g.draw(st.sampled_from(("conv", "max_pool", "avg_pool", "adaptive_avg_pool")))
    x = g.pick(lambda v: (3 if kind == "conv" else 2) <= v.type.rank <= 4 and v.type.dtype is not DType.bool)
    if x is not None and not x.type.dtype.is_floating:
        x = g.emit(ops.cast(x.expr, dtype=DType.float32), bounded=x.bounded)
    if x is None:
        return None
    shape, dtype = x.type.shape, x.type.dtype
    # x is (N, C, *spatial) or, for a pool, maybe (C, *spatial)
    first = 2 if kind == "conv" or x.type.rank == 4 or (x.type.rank == 3 and g.draw(st.booleans())) else 1
    windows = [_window(g, d, pool=kind != "conv") for d in shape[first:]]
    kernel, padding, stride, dilation = (tuple(w[i] for w in windows) for i in range(4))
    if kind == "adaptive_avg_pool":
        sizes = tuple(g.draw(st.integers(1, 3)) for _ in windows)
        return g.emit(ops.adaptive_avg_pool(x.expr, output_size=sizes), bounded=x.bounded)
    if kind == "max_pool":
        return g.emit(ops.max_pool(x.expr, kernel=kernel, stride=stride, padding=padding), bounded=x.bounded)
    if kind == "avg_pool":
        call = ops.avg_pool(x.expr, kernel=kernel, stride=stride, padding=padding, count_include_pad=g.draw(st.booleans()))
        return g.emit(call, bounded=x.bounded)
    channels = shape[1]
    groups = g.draw(st.sampled_from([k for k in (1, 2, 3) if isinstance(channels, int) and channels % k == 0] or [1]))
    out = groups * g.draw(st.integers(1, 2))
    in_per_group = channels if groups == 1 else dim_expr("floordiv", channels, groups)
    w = g.fresh(TensorType((out, in_per_group, *kernel), dtype))
    args: list[Expr] = [x.expr, w.expr]
    bounded = x.bounded and w.bounded
    if g.draw(st.booleans()):
        b = value_of_type(g, TensorType((out,), dtype))
        args.append(b.expr)
        bounded = bounded and b.bounded
    return g.emit(ops.conv(*args, stride=stride, padding=padding, dilation=dilation, groups=groups), bounded=bounded)


V2_CONSTRUCTS: tuple[Callable[[Gen], Val | None], ...] = (
    _linear, _linear, _scan, _clamp, _rounding, _triangle, _gather, _gather, _any_all, _logical, _bitwise, _divide,
    _vision,
)
"""The catalogue-v2 constructs ``v2_op`` draws from (``linear`` and ``gather``, the ones real
models lean on most, twice as often)."""


def v2_op(g: Gen) -> Val | None:
    """One catalogue-v2 construct (None with ``v2_ops`` off, or when the drawn one does not fit)."""
    if not g.config.v2_ops:
        return None
    return g.draw(st.sampled_from(V2_CONSTRUCTS))(g)
