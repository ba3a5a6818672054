"""ATen rules: gathers, scatters and writes into windows (what in-place assignment becomes
once functionalised). Indices never wrap around in HIR, so a negative index torch would
wrap is an error at run time unless the rule made it non-negative from a static size."""

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Result, RuleError, is_expr
from tfexec.frontends.torch._registry import register
from tfexec.frontends.torch._rule_helpers import axis_of, normalise_index, start_operand
from tfexec.ir.dims import ShapeDim, dim_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, Expr


# -- gathers ----------------------------------------------------------------------------------


@register("index_select.default")
def _index_select(t: NodeContext) -> Result:
    return hir.take(t.tensor("self"), t.tensor("index"), axis=t.integer("dim"), span=t.span)


@register("embedding.default")
def _embedding(t: NodeContext) -> Result:
    """``take(weight, indices, axis=0)`` (``padding_idx`` only affects gradients)."""
    return hir.take(t.tensor("weight"), t.tensor("indices"), axis=0, span=t.span)


def _non_negative(t: NodeContext, index: Expr) -> bool:
    """Whether ``index`` is known to hold no negative value: a constant without one, or an
    ``arange`` (possibly shifted up, reshaped, broadcast or cast)."""
    value = t.constant_value(index)
    if value is not None:
        return value.numel() == 0 or int(value.min()) >= 0
    while isinstance(index, Call) and index.target.name in ("reshape", "broadcast_to", "cast", "transpose", "add"):
        if index.target.name == "add":
            shift = index.args[1]
            if not (isinstance(shift, Constant) and isinstance(shift.value, int) and shift.value >= 0):
                return False
        index = index.args[0]
    return isinstance(index, Call) and index.target.name == "arange"


def _wrapped(t: NodeContext, index: Expr, size: ShapeDim) -> Expr:
    """``index`` with a negative entry counted from the end of an axis of ``size`` (what
    ``aten.index`` does; the HIR ops never wrap), unless it is known non-negative."""
    if _non_negative(t, index):
        return index
    negative = hir.lt(index, 0, span=t.span)
    return hir.where(negative, hir.add(index, start_operand(t, size), span=t.span), index, span=t.span)


@register("index.Tensor")
def _index(t: NodeContext) -> Result:
    """``x[..., i0, ..., i1, ...]``: one integer index tensor after full slices is ``take``;
    several are ``index`` (broadcast together, placed as torch places them). A negative index
    counts from the end, as in torch (``where(i < 0, i + size, i)``, left out where the index is
    known non-negative); beyond that, out of range is an ``EvalError``. A ``b1`` mask selects a
    data-dependent number of elements and is refused."""
    x = t.tensor("self")
    indices = t.arg("indices")
    if not isinstance(indices, (list, tuple)):
        raise RuleError("indices is not a list")
    axes = [i for i, v in enumerate(indices) if v is not None]
    given: list[Expr] = []
    for axis in axes:
        idx = indices[axis]
        if not is_expr(idx):
            raise RuleError("an index is not a tensor")
        dtype = t.type_of(idx).dtype
        if dtype in (DType.bool, DType.uint8):
            raise RuleError("boolean-mask indexing has a data-dependent shape (use torch.where, or index with integers)")
        given.append(_wrapped(t, idx, t.type_of(x).shape[axis]))
    if not given:
        return x
    if len(given) == 1:
        return hir.take(x, given[0], axis=axes[0], span=t.span)
    return hir.index(x, *given, axes=tuple(axes), span=t.span)


@register("gather.default")
def _gather(t: NodeContext) -> Result:
    return hir.gather(t.tensor("self"), t.tensor("index"), axis=t.integer("dim"), span=t.span)


def _source(t: NodeContext, x: Expr, index: Expr) -> Expr:
    """``src``, or the scalar ``value`` filled to ``index``'s shape in ``x``'s dtype."""
    if t.has("src"):
        return t.tensor("src")
    xt = t.type_of(x)
    value = t.arg("value")
    if not isinstance(value, (bool, int, float)):
        raise RuleError(f"scatter value {value!r} is not a static number")
    return hir.full(shape=t.type_of(index).shape, value=value, dtype=xt.dtype, span=t.span)


@register("scatter.src", "scatter.value", "scatter.reduce", "scatter.value_reduce", "scatter_add.default")
def _scatter(t: NodeContext) -> Result:
    """``scatter`` (two writes to one position are refused at run time: torch leaves that
    result open) or, for ``scatter_add`` and ``reduce="add"``, ``scatter_add``."""
    x, index = t.tensor("self"), t.tensor("index")
    src, axis = _source(t, x, index), t.integer("dim")
    reduce = "add" if t.op.startswith("aten.scatter_add") else t.arg("reduce")
    if reduce is None:
        return hir.scatter(x, index, src, axis=axis, span=t.span)
    if reduce in ("add", "sum"):
        return hir.scatter_add(x, index, src, axis=axis, span=t.span)
    raise RuleError(f"scatter with reduce={reduce!r} has no HIR op (only a plain scatter and 'add')")


@register("scatter_reduce.two")
def _scatter_reduce(t: NodeContext) -> Result:
    """``reduce="sum"`` with ``include_self`` is ``scatter_add``; other reductions are refused."""
    if t.arg("reduce") != "sum" or not t.arg("include_self", True):
        raise RuleError(f"scatter_reduce with reduce={t.arg('reduce')!r}, include_self={t.arg('include_self')!r} has no HIR op")
    return hir.scatter_add(t.tensor("self"), t.tensor("index"), t.tensor("src"), axis=t.integer("dim"), span=t.span)


@register("index_put.default")
def _index_put(t: NodeContext) -> Result:
    """``x[idx] = values`` with one integer index tensor at one axis (full slices elsewhere):
    a ``scatter`` along that axis (``accumulate``: ``scatter_add``), the index and the values
    broadcast to the written block. A ``b1`` mask of ``x``'s shape is a ``where``."""
    x, values = t.tensor("self"), t.tensor("values")
    xt = t.type_of(x)
    indices = t.arg("indices")
    axes = [i for i, v in enumerate(indices) if v is not None] if isinstance(indices, (list, tuple)) else []
    if len(axes) != 1 or not is_expr(indices[axes[0]]):  # type: ignore[index]
        raise RuleError("index_put with other than one index tensor has no HIR translation")
    axis, idx = axes[0], indices[axes[0]]  # type: ignore[index]
    assert is_expr(idx)
    it = t.type_of(idx)
    if t.type_of(values).dtype is not xt.dtype:
        values = hir.cast(values, dtype=xt.dtype, span=t.span)
    if it.dtype is DType.bool:
        if it.shape != xt.shape or t.arg("accumulate"):
            raise RuleError("index_put with a bool mask needs a mask of the value's shape, without accumulate")
        return hir.where(idx, values, x, span=t.span)
    count: ShapeDim = 1
    for d in it.shape:
        count = dim_expr("mul", count, d)
    block = xt.shape[:axis] + (count,) + xt.shape[axis + 1:]
    flat = hir.reshape(idx, shape=(count,), span=t.span)
    lifted = hir.reshape(flat, shape=(1,) * axis + (count,) + (1,) * (len(xt.shape) - axis - 1), span=t.span)
    index = hir.cast(hir.broadcast_to(lifted, shape=block, span=t.span), dtype=DType.int64, span=t.span)
    wide = xt.shape[:axis] + it.shape + xt.shape[axis + 1:]
    src = hir.reshape(hir.broadcast_to(values, shape=wide, span=t.span), shape=block, span=t.span)
    build = hir.scatter_add if t.arg("accumulate") else hir.scatter
    return build(x, index, src, axis=axis, span=t.span)


# -- writes into windows (what in-place assignment becomes once functionalised) ---------------


@register("copy.default")
def _copy(t: NodeContext) -> Result:
    """``src`` converted to ``self``'s dtype and broadcast to its shape (``self``'s values are
    replaced: the functional ``copy`` that functionalization makes of ``copy_``)."""
    xt = t.type_of(t.tensor("self"))
    src = t.tensor("src")
    if t.type_of(src).dtype is not xt.dtype:
        src = hir.cast(src, dtype=xt.dtype, span=t.span)
    if t.type_of(src).shape != xt.shape:
        src = hir.broadcast_to(src, shape=xt.shape, span=t.span)
    return src


def scatter_window(t: NodeContext, x: Expr, src: Expr, axis: int, start: ShapeDim, step: int) -> Expr:
    """``x`` with the window ``start, start+step, …`` along ``axis`` replaced by ``src``:
    position ``p`` takes ``src[(p - start) / step]`` where it is in the window, else ``x[p]``
    (``take`` gathers, ``where`` selects: exact, whatever the dtype)."""
    xt, st = t.type_of(x), t.type_of(src)
    count = st.shape[axis]
    if count == 0:
        return x
    rank = len(xt.shape)
    rel = hir.sub(hir.arange(extent=xt.shape[axis], span=t.span), start_operand(t, start), span=t.span)
    k: Expr = rel if step == 1 else hir.cast(hir.div(rel, step, span=t.span), dtype=DType.int64, span=t.span)
    inside = hir.logical_and(hir.ge(rel, 0, span=t.span), hir.lt(k, start_operand(t, count), span=t.span), span=t.span)
    if step != 1:
        inside = hir.logical_and(inside, hir.eq(hir.mul(k, step, span=t.span), rel, span=t.span), span=t.span)
    last = start_operand(t, dim_expr("sub", count, 1))
    index = hir.minimum(hir.maximum(k, 0, span=t.span), last, span=t.span)
    gathered = hir.take(src, index, axis=axis, span=t.span)
    mask_shape = (xt.shape[axis],) + (1,) * (rank - axis - 1)
    mask = hir.reshape(inside, shape=mask_shape, span=t.span) if len(mask_shape) > 1 else inside
    return hir.where(mask, gathered, x, span=t.span)


@register("slice_scatter.default")
def _slice_scatter(t: NodeContext) -> Result:
    x, src = t.tensor("self"), t.tensor("src")
    xt = t.type_of(x)
    axis = axis_of(t, t.integer("dim", 0), len(xt.shape))
    step = t.integer("step", 1)
    if step < 1:
        raise RuleError(f"slice_scatter step {step} must be positive")
    raw = t.arg("start")
    start = normalise_index(t, 0 if raw is None else t.size("start"), xt.shape[axis], clamp=True)
    return scatter_window(t, x, src, axis, start, step)


@register("select_scatter.default")
def _select_scatter(t: NodeContext) -> Result:
    x, src = t.tensor("self"), t.tensor("src")
    xt = t.type_of(x)
    axis = axis_of(t, t.integer("dim"), len(xt.shape))
    index = normalise_index(t, t.size("index"), xt.shape[axis], clamp=False)
    st = t.type_of(src).shape
    lifted = hir.reshape(src, shape=st[:axis] + (1,) + st[axis:], span=t.span)
    return scatter_window(t, x, lifted, axis, index, 1)
