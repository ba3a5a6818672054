"""ATen rules: gathers, scatters and writes into windows (what in-place assignment becomes
once functionalised). Indices never wrap around in HIR, so a negative index torch would
wrap is an error at run time unless the rule made it non-negative from a static size."""

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Result, RuleError, is_expr
from tfexec.frontends.torch._registry import register
from tfexec.frontends.torch._rule_helpers import axis_of, normalise_index, start_operand
from tfexec.ir.dims import ShapeDim, dim_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Expr


# -- gathers ----------------------------------------------------------------------------------


@register("index_select.default")
def _index_select(t: NodeContext) -> Result:
    return hir.take(t.tensor("self"), t.tensor("index"), axis=t.integer("dim"), span=t.span)


@register("embedding.default")
def _embedding(t: NodeContext) -> Result:
    """``take(weight, indices, axis=0)`` (``padding_idx`` only affects gradients)."""
    return hir.take(t.tensor("weight"), t.tensor("indices"), axis=0, span=t.span)


@register("index.Tensor")
def _index(t: NodeContext) -> Result:
    """``x[..., idx]`` with one integer index tensor after only full slices: ``take``."""
    x = t.tensor("self")
    indices = t.arg("indices")
    if not isinstance(indices, (list, tuple)):
        raise RuleError("indices is not a list")
    given = [i for i, v in enumerate(indices) if v is not None]
    if len(given) != 1:
        raise RuleError(f"advanced indexing with {len(given)} index tensors (only one is supported)")
    axis = given[0]
    idx = indices[axis]
    if not is_expr(idx):
        raise RuleError("the index is not a tensor")
    if t.type_of(idx).dtype is DType.bool:
        raise RuleError("boolean-mask indexing has a data-dependent shape")
    return hir.take(x, idx, axis=axis, span=t.span)


# -- writes into windows (what in-place assignment becomes once functionalised) ---------------


@register("copy.default", "copy_.default")
def _copy(t: NodeContext) -> Result:
    """``src`` converted to ``self``'s dtype and broadcast to its shape (``self``'s values are
    replaced; ``copy_`` only reaches here through a functionalised graph)."""
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
