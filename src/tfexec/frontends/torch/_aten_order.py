"""ATen rules: scans (``cumsum``, ``cumprod``), sorting (``sort``, ``argsort``, ``topk``), the
logical reductions (``any``, ``all``), vector norms and ``histc``.

torch returns a sort's values and indices from one node; here they are two ops (``sort``
and ``argsort``, ``topk`` and ``argtopk``) over the same operand, each stable: equal
elements keep their order, where torch's unstable sort and ``topk`` leave it open.
"""

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Result, RuleError
from tfexec.frontends.torch._registry import register
from tfexec.frontends.torch._rule_helpers import axes_arg, to_dtype

# -- scans ------------------------------------------------------------------------------------


@register("cumsum.default")
def _cumsum(t: NodeContext) -> Result:
    return hir.cumsum(t.tensor("self"), axis=t.integer("dim"), dtype=t.dtype("dtype"), span=t.span)


@register("cumprod.default")
def _cumprod(t: NodeContext) -> Result:
    return hir.cumprod(t.tensor("self"), axis=t.integer("dim"), dtype=t.dtype("dtype"), span=t.span)


# -- sorting ----------------------------------------------------------------------------------


@register("sort.default", "sort.stable")
def _sort(t: NodeContext) -> Result:
    """``(sort, argsort)`` of ``self``, stable (``stable=False`` leaves the order of equal
    elements open in torch; the stable one is one of its answers)."""
    x = t.tensor("self")
    axis, descending = t.integer("dim", -1), bool(t.arg("descending", False))
    return (
        hir.sort(x, axis=axis, descending=descending, span=t.span),
        hir.argsort(x, axis=axis, descending=descending, span=t.span),
    )


@register("argsort.default", "argsort.stable")
def _argsort(t: NodeContext) -> Result:
    return hir.argsort(t.tensor("self"), axis=t.integer("dim", -1), descending=bool(t.arg("descending", False)), span=t.span)


@register("topk.default")
def _topk(t: NodeContext) -> Result:
    """``(topk, argtopk)``, largest (or smallest) first; ``sorted=False`` lets torch return any
    order, of which this is one."""
    x = t.tensor("self")
    k, axis, largest = t.integer("k"), t.integer("dim", -1), bool(t.arg("largest", True))
    return (
        hir.topk(x, k=k, axis=axis, largest=largest, span=t.span),
        hir.argtopk(x, k=k, axis=axis, largest=largest, span=t.span),
    )


# -- logical reductions and norms -----------------------------------------------------------


def _logical(t: NodeContext, every: bool) -> Result:
    """``any``/``all`` over ``dim`` (one axis, a list, or every axis when absent)."""
    x = t.tensor("self")
    dims = t.arg("dim")
    axes = None if dims is None else (t.ints("dim") or None)
    if dims is not None and axes is None:
        raise RuleError("any/all over an empty list of dims reduces every axis in torch; pass the axes explicitly")
    build = hir.all if every else hir.any
    return build(x, axes=axes, keepdims=bool(t.arg("keepdim", False)), span=t.span)


@register("any.default", "any.dim", "any.dims")
def _any(t: NodeContext) -> Result:
    return _logical(t, every=False)


@register("all.default", "all.dim", "all.dims")
def _all(t: NodeContext) -> Result:
    return _logical(t, every=True)


@register("linalg_vector_norm.default")
def _vector_norm(t: NodeContext) -> Result:
    """``vector_norm`` (``dtype`` converts first, as torch does)."""
    x = to_dtype(t, t.tensor("self"), t.dtype("dtype"))
    order = t.scalar("ord", 2)
    return hir.vector_norm(x, ord=float(order), axes=axes_arg(t, "dim"), keepdims=bool(t.arg("keepdim", False)), span=t.span)


@register("norm.ScalarOpt_dim", "norm.Scalar", "norm.ScalarOpt_dim_dtype")
def _norm(t: NodeContext) -> Result:
    """``torch.norm`` of a vector kind: ``vector_norm`` with ``p`` (default 2)."""
    x = to_dtype(t, t.tensor("self"), t.dtype("dtype"))
    order = t.arg("p")
    p = 2.0 if order is None else float(t.scalar("p"))
    return hir.vector_norm(x, ord=p, axes=axes_arg(t, "dim"), keepdims=bool(t.arg("keepdim", False)), span=t.span)


@register("histc.default")
def _histc(t: NodeContext) -> Result:
    """``histc`` (mixture-of-experts routers count tokens per expert with it)."""
    return hir.histc(
        t.tensor("self"), bins=t.integer("bins", 100), min=float(t.scalar("min", 0)), max=float(t.scalar("max", 0)),
        span=t.span,
    )
