"""The op constructs of ``programs()``: one small function per op group.

Each takes the generator, draws operands from its pool (or fresh parameters), builds one
or a few calls with the ``tfexec.ops`` builders, and returns the value it added — or
``None`` when the pool has nothing it fits (the generator then draws another construct).
"""

from collections.abc import Callable

import torch
from hypothesis import strategies as st

from tfexec import ops
from tfexec.ir.dims import ShapeDim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant
from tfexec.ir.ops.reduction import ReduceKind
from tfexec.ir.types import TensorType
from tfexec.testing._constructs_v2 import v2_op
from tfexec.testing._gen import I64_SCALAR, SCALARS, Gen, Val, broadcast, draw_dtype, regroup, scalar_for
from tfexec.testing._operands import index_operand, partner, safe_positive, shape_of, small_int, value_of_type

Build2 = Callable[[ops.Operand, ops.Operand], Call]
"""A two-operand builder such as ``ops.add``."""

_ARITH: dict[str, Build2] = {
    "add": ops.add, "sub": ops.sub, "mul": ops.mul, "div": ops.div, "maximum": ops.maximum, "minimum": ops.minimum,
}
_COMPARE: dict[str, Build2] = {
    "eq": ops.eq, "ne": ops.ne, "lt": ops.lt, "le": ops.le, "gt": ops.gt, "ge": ops.ge,
    "logical_and": ops.logical_and, "logical_or": ops.logical_or,
}
_UNARY: dict[str, Callable[[ops.Operand], Call]] = {
    "neg": ops.neg, "abs": ops.abs, "relu": ops.relu, "exp": ops.exp, "tanh": ops.tanh, "sigmoid": ops.sigmoid,
    "sin": ops.sin, "cos": ops.cos, "erf": ops.erf, "silu": ops.silu, "gelu": ops.gelu, "log": ops.log,
    "sqrt": ops.sqrt, "rsqrt": ops.rsqrt,
}
_DIM: dict[str, Build2] = {
    "dim_add": ops.dim_add, "dim_sub": ops.dim_sub, "dim_mul": ops.dim_mul, "dim_min": ops.dim_min,
    "dim_max": ops.dim_max, "dim_floordiv": ops.dim_floordiv, "dim_mod": ops.dim_mod,
}


def _binary(g: Gen) -> Val | None:
    """``add sub mul div maximum minimum`` with broadcasting, Python scalars on either side."""
    name = g.op_name((*_ARITH, "pow"))
    if name is None:
        return None
    a = g.pick()
    if a is None:
        return None
    if name == "pow":
        return _pow(g, a)
    b, b_bounded = partner(g, a.type.shape)
    lhs, rhs = (b, a.expr) if g.draw(st.booleans()) else (a.expr, b)
    return g.emit(_ARITH[name](lhs, rhs), bounded=a.bounded and b_bounded and name != "div")


def _pow(g: Gen, a: Val) -> Val | None:
    """``pow`` with a positive float base, or an integer base and a non-negative scalar exponent."""
    if a.type.dtype is DType.bool:
        return None
    if g.draw(st.booleans()):
        return g.emit(ops.pow(g.draw(st.sampled_from((2.0, 0.5))), a.expr), bounded=False)
    if a.type.dtype.is_floating:
        base = safe_positive(g, a)
        exponent, _ = partner(g, a.type.shape)
        return None if base is None else g.emit(ops.pow(base.expr, exponent), bounded=False)
    return g.emit(ops.pow(a.expr, g.draw(st.sampled_from((0, 1, 2, 3, 0.5)))), bounded=False)


def _compare(g: Gen) -> Val | None:
    """Comparisons and logical ops (→ bool), broadcasting, Python scalars on either side."""
    name = g.op_name(tuple(_COMPARE))
    if name is None:
        return None
    a = g.pick()
    if a is None:
        return None
    b, _ = partner(g, a.type.shape)
    lhs, rhs = (b, a.expr) if g.draw(st.booleans()) else (a.expr, b)
    return g.emit(_COMPARE[name](lhs, rhs), bounded=True)


def _where(g: Gen) -> Val | None:
    """``where(cond, a, b)``: a bool condition (made by a comparison if the pool has none)."""
    cond = g.pick(lambda v: v.type.dtype is DType.bool)
    if cond is None:
        x = g.pick()
        cond = None if x is None else g.emit(ops.gt(x.expr, 0.0), bounded=True)
    if cond is None:
        return None
    a, a_bounded = partner(g, cond.type.shape)
    shape = broadcast(cond.type.shape, shape_of(g, a))
    assert shape is not None
    b, b_bounded = partner(g, shape)
    return g.emit(ops.where(cond.expr, a, b), bounded=a_bounded and b_bounded)


def _unary(g: Gen) -> Val | None:
    """The elementwise unary ops; ``log``/``sqrt``/``rsqrt`` read ``abs(x) + 0.5``."""
    name = g.op_name(tuple(_UNARY))
    if name is None:
        return None
    x = g.pick(lambda v: v.type.dtype is not DType.bool)
    if x is not None and name in ("silu", "gelu") and not x.type.dtype.is_floating:
        x = g.emit(ops.cast(x.expr, dtype=DType.float32), bounded=x.bounded)
    if x is not None and name in ("log", "sqrt", "rsqrt"):
        x = safe_positive(g, x)
    if x is None:
        return None
    call = ops.gelu(x.expr, approximate=g.draw(st.sampled_from(("none", "tanh")))) if name == "gelu" else _UNARY[name](x.expr)
    squashing = name in ("tanh", "sigmoid", "sin", "cos", "erf", "rsqrt")
    return g.emit(call, bounded=squashing or (x.bounded and name != "exp"))


def _cast(g: Gen) -> Val | None:
    """``cast`` between f32, f64, i32, i64 and bool (a float cast to an integer is bounded first)."""
    dtype = g.draw(st.sampled_from((DType.float32, DType.int64, DType.bool, DType.float64, DType.int32)))
    x = g.pick()
    if x is not None and dtype.is_integral and dtype is not DType.bool:
        x = small_int(g, x)
    if x is None:
        return None
    return g.emit(ops.cast(x.expr, dtype=dtype), bounded=x.bounded or dtype is DType.bool)


def _matmul(g: Gen) -> Val | None:
    """``matmul``: matrix·vector, matrix·matrix and batched, on f32, f64 or i64."""
    a = g.pick(lambda v: v.type.rank >= 1 and v.type.dtype in (DType.float32, DType.float64, DType.int64))
    if a is None:
        return None
    k = a.type.shape[-1]
    form = g.draw(st.sampled_from(("matrix", "vector", "batched", "pool")))
    if form == "pool":
        b = g.pick(lambda v: v.type.dtype == a.type.dtype and v.type.rank >= 1 and v.type.shape[-2 if v.type.rank > 1 else 0] == k)
        if b is not None:
            return g.emit(ops.matmul(a.expr, b.expr), bounded=a.bounded and b.bounded)
    shape: tuple[ShapeDim, ...] = (k,) if form == "vector" else (k, g.size())
    if form == "batched":
        shape = (*(a.type.shape[:-2] if a.type.rank >= 3 else (g.size(),)), *shape)
    b = g.fresh(TensorType(shape, a.type.dtype))
    return g.emit(ops.matmul(a.expr, b.expr), bounded=a.bounded)


def _reduce(g: Gen) -> Val | None:
    """``reduce`` over all axes (``None``), none (``()``) or some (negative ones too), and ``argmax``."""
    x = g.pick()
    if x is None:
        return None
    rank = x.type.rank
    if g.draw(st.booleans()) and rank and x.type.dtype is not DType.bool:
        axis = g.draw(st.integers(-rank, rank - 1))
        return g.emit(ops.argmax(x.expr, axis=axis, keepdims=g.draw(st.booleans())), bounded=True)
    kinds: tuple[ReduceKind, ...] = ("sum", "max", "min", "prod", "mean")
    kind = g.draw(st.sampled_from(kinds))
    if kind == "mean" and not x.type.dtype.is_floating:
        kind = "sum"
    axes: tuple[int, ...] | None = g.draw(st.sampled_from((None, ())))
    if rank and g.draw(st.booleans()):
        some = g.draw(st.lists(st.integers(0, rank - 1), unique=True, min_size=1))
        axes = tuple(a - rank if g.draw(st.booleans()) else a for a in some)
    call = ops.reduce(x.expr, kind=kind, axes=axes, keepdims=g.draw(st.booleans()))
    return g.emit(call, bounded=x.bounded and kind != "prod")


def _normalise(g: Gen) -> Val | None:
    """``softmax``, ``rms_norm`` and ``layer_norm`` over trailing axes, with or without weights."""
    x = g.pick(lambda v: v.type.rank >= 1)
    if x is not None and not x.type.dtype.is_floating:
        x = g.emit(ops.cast(x.expr, dtype=DType.float32), bounded=x.bounded)
    if x is None:
        return None
    rank = x.type.rank
    kind = g.draw(st.sampled_from(("softmax", "rms_norm", "layer_norm")))
    if kind == "softmax":
        return g.emit(ops.softmax(x.expr, axis=g.draw(st.integers(-rank, rank - 1))), bounded=True)
    n = g.draw(st.integers(1, rank))
    axes = tuple(range(-n, 0)) if g.draw(st.booleans()) else tuple(range(rank - n, rank))
    weight_type = TensorType(x.type.shape[rank - n:], x.type.dtype)
    weights = [value_of_type(g, weight_type).expr for _ in range(g.draw(st.integers(0, 2 if kind == "layer_norm" else 1)))]
    if kind == "rms_norm":
        eps = g.draw(st.sampled_from((None, 1e-6)))
        return g.emit(ops.rms_norm(x.expr, *weights, axes=axes, eps=eps), bounded=x.bounded)
    return g.emit(ops.layer_norm(x.expr, *weights, axes=axes), bounded=x.bounded)


def _reshape(g: Gen) -> Val | None:
    """``reshape``: the shape's factors (primes and symbolic dims) regrouped in any order."""
    x = g.pick()
    if x is None:
        return None
    return g.emit(ops.reshape(x.expr, shape=regroup(g, x.type.shape)), bounded=x.bounded)


def _transpose(g: Gen) -> Val | None:
    """``transpose`` by a random permutation (some axes written negative)."""
    x = g.pick(lambda v: v.type.rank >= 1)
    if x is None:
        return None
    rank = x.type.rank
    perm = tuple(p - rank if g.draw(st.integers(0, 3)) == 0 else p for p in g.draw(st.permutations(range(rank))))
    return g.emit(ops.transpose(x.expr, perm=perm), bounded=x.bounded)


def _broadcast_to(g: Gen) -> Val | None:
    """``broadcast_to``: size-1 axes widened, leading axes added."""
    x = g.pick(lambda v: v.type.rank <= 3)
    if x is None:
        return None
    shape = [g.size() if d == 1 and g.draw(st.booleans()) else d for d in x.type.shape]
    lead = [g.size() for _ in range(g.draw(st.integers(0, 3 - x.type.rank)))]
    return g.emit(ops.broadcast_to(x.expr, shape=(*lead, *shape)), bounded=x.bounded)


def _concat(g: Gen) -> Val | None:
    """``concat`` of a value with itself, pool values and fresh parameters (dtypes promote)."""
    x = g.pick(lambda v: v.type.rank >= 1)
    if x is None:
        return None
    rank, shape = x.type.rank, x.type.shape
    axis = g.draw(st.integers(0, rank - 1))
    parts, bounded = [x.expr], x.bounded

    def fits(v: Val) -> bool:
        return v.type.rank == rank and all(a == b for i, (a, b) in enumerate(zip(shape, v.type.shape)) if i != axis)

    for _ in range(g.draw(st.integers(1, 2))):
        kind = g.draw(st.sampled_from(("same", "pool", "fresh")))
        v = x if kind == "same" else g.pick(fits) if kind == "pool" else None
        if v is None:
            v = g.fresh(TensorType((*shape[:axis], g.size(), *shape[axis + 1:]), draw_dtype(g)))
        parts.append(v.expr)
        bounded = bounded and v.bounded
    return g.emit(ops.concat(*parts, axis=axis - rank if g.draw(st.booleans()) else axis), bounded=bounded)


def _slice(g: Gen) -> Val | None:
    """``slice`` with in-range windows (strides 1 or 2); starts are constants or dim
    arithmetic (on loop indices inside loops). Axes of unknown size are kept whole."""
    x = g.pick()
    if x is None:
        return None
    starts: list[ops.Operand] = []
    sizes: list[ShapeDim] = []
    strides: list[ShapeDim] = []
    for d in x.type.shape:
        n = g.concrete(d)
        if n is None or g.draw(st.integers(0, 5)) == 0:
            starts.append(0)
            sizes.append(d)
            strides.append(1)
            continue
        stride = g.draw(st.sampled_from((1, 1, 2)))
        size = g.draw(st.integers(1, (n - 1) // stride + 1))
        starts.append(index_operand(g, n - (size - 1) * stride - 1))
        sizes.append(size)
        strides.append(stride)
    explicit = any(s != 1 for s in strides) or g.draw(st.booleans())
    call = ops.slice(x.expr, tuple(starts), sizes=tuple(sizes), strides=tuple(strides) if explicit else None)
    return g.emit(call, bounded=x.bounded)


def _take(g: Gen) -> Val | None:
    """``take`` with in-range int64 indices: ``arange``, a constant, ``argmax`` results, or
    an input drawn in range (along a callee's own dims, ``arange`` of that dim only)."""
    x = g.pick(lambda v: v.type.rank >= 1)
    if x is None:
        return None
    rank = x.type.rank
    axis = g.draw(st.integers(0, rank - 1))
    dim = x.type.shape[axis]
    n = g.concrete(dim)
    kinds = ["arange"] if n is None else ["arange", "constant", "argmax"] + ([] if g.is_callee else ["fresh"])
    kind = g.draw(st.sampled_from(kinds))
    indices: ops.Operand | None = None
    if kind == "fresh" and n is not None:
        indices = g.fresh(TensorType(g.shape(2), DType.int64), low=0, high=n).expr
    elif kind == "constant" and n is not None:
        shape = tuple(g.draw(st.integers(1, 3)) for _ in range(g.draw(st.integers(0, 2))))
        count = 1
        for s in shape:
            count *= s
        values = g.draw(st.lists(st.integers(0, n - 1), min_size=count, max_size=count))
        indices = Constant(torch.tensor(values, dtype=torch.int64).reshape(shape), TensorType(shape, DType.int64))
    elif kind == "argmax" and n is not None:
        bound = n

        def fits(d: ShapeDim) -> bool:  # argmax along an axis no longer than x's gives indices < n
            size = g.concrete(d)
            return size is not None and size <= bound

        y = g.pick(lambda v: v.type.dtype is not DType.bool and any(fits(d) for d in v.type.shape))
        if y is not None:
            j = g.draw(st.sampled_from([i for i, d in enumerate(y.type.shape) if fits(d)]))
            am = g.emit(ops.argmax(y.expr, axis=j), bounded=True)
            indices = None if am is None else am.expr
    if indices is None:
        extent = dim if n is None or g.draw(st.booleans()) else g.draw(st.integers(1, n))
        ar = g.emit(ops.arange(extent=extent), bounded=True)
        if ar is None:
            return None
        indices = ar.expr
    return g.emit(ops.take(x.expr, indices, axis=axis - rank if g.draw(st.booleans()) else axis), bounded=x.bounded)


def _create(g: Gen) -> Val | None:
    """``full`` and ``arange`` (sizes may be symbolic), tensor-valued ``Constant``s, and
    (with ``weak_values``; else a tensor constant) weak Python-scalar ``Constant``s as
    values of their own."""
    kind = g.draw(st.sampled_from(("full", "arange", "constant", "weak")))
    if kind == "weak" and g.config.weak_values:
        weak = ops.as_expr(g.draw(st.sampled_from(SCALARS)))
        assert isinstance(weak, Constant)
        return g.add(Val(weak, weak.type, True, computed=False))
    if kind == "full":
        dtype = draw_dtype(g)
        return g.emit(ops.full(shape=g.shape(), value=scalar_for(g, dtype), dtype=dtype), bounded=True)
    if kind == "arange":
        dtype = g.draw(st.sampled_from((DType.int64, DType.float32)))
        return g.emit(ops.arange(extent=g.size(), dtype=dtype), bounded=True)
    shape = tuple(g.draw(st.integers(1, 3)) for _ in range(g.draw(st.integers(1, 2))))
    count = shape[0] * (shape[1] if len(shape) > 1 else 1)
    values = g.draw(st.lists(st.integers(-8, 8), min_size=count, max_size=count))
    const = Constant(torch.tensor(values, dtype=torch.float32).reshape(shape) / 4, TensorType(shape, DType.float32))
    return g.add(Val(const, const.type, True, computed=False))


def _dim_scalar(g: Gen) -> Val | None:
    """``dim_*`` arithmetic on small rank-0 integers (loop indices, argmax results, earlier
    dim values, Python ints); division and modulo by a positive constant."""
    name = g.op_name(tuple(_DIM))
    if name is None:
        return None
    sources = [v.expr for s in g.scopes for v in s if v.type == I64_SCALAR and v.bounded]

    def operand() -> ops.Operand:
        if len(sources) > 0 and g.draw(st.booleans()):
            return g.draw(st.sampled_from(sources))
        return g.draw(st.integers(0, 5))

    a = operand()
    b = g.draw(st.integers(1, 4)) if name in ("dim_floordiv", "dim_mod") else operand()
    return g.emit(_DIM[name](a, b), bounded=True)


OP_CONSTRUCTS: tuple[Callable[[Gen], Val | None], ...] = (
    _binary, _unary, _compare, _where, _cast, _reduce, _matmul, _normalise, _reshape, _transpose, _broadcast_to,
    _concat, _slice, _take, _create, _dim_scalar, _slice, v2_op,
)
"""What ``step`` draws its ops from (``_slice`` twice; ``v2_op`` is one entry that picks among
the catalogue-v2 constructs, so that the v1 constructs keep their rate)."""
