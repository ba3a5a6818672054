"""ATen rules: creation (``full``, ``zeros``, ``ones``, ``arange``…) and triangular masks."""

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Result, RuleError, is_expr
from tfexec.frontends.torch._registry import register
from tfexec.ir.dims import DimExpr, DimVar
from tfexec.ir.expr import Expr


# -- creation ---------------------------------------------------------------------------------


def _fill(t: NodeContext, value: object) -> Result:
    out = t.out
    if isinstance(value, (bool, int, float)):
        return hir.full(shape=out.shape, value=value, dtype=out.dtype, span=t.span)
    if isinstance(value, (DimVar, DimExpr)):
        size = hir.cast(t.tensor_of_dim(value), dtype=out.dtype, span=t.span)
        return hir.broadcast_to(size, shape=out.shape, span=t.span)
    raise RuleError(f"fill value {value!r} is not a static number")


@register("full.default", "full_like.default", "new_full.default")
def _full(t: NodeContext) -> Result:
    return _fill(t, t.arg("fill_value"))


@register("scalar_tensor.default")
def _scalar_tensor(t: NodeContext) -> Result:
    return _fill(t, t.arg("s"))


@register("zeros.default", "zeros_like.default", "new_zeros.default", "empty.memory_format", "empty_like.default",
          "new_empty.default", "empty_strided.default")
def _zeros(t: NodeContext) -> Result:
    """Zeros (an ``empty`` tensor's contents are unspecified; zeros are one choice of them)."""
    return _fill(t, 0)


@register("ones.default", "ones_like.default", "new_ones.default")
def _ones(t: NodeContext) -> Result:
    return _fill(t, 1)


@register("fill.Scalar", "fill.Tensor")
def _fill_value(t: NodeContext) -> Result:
    """``self``'s shape and dtype, every element ``value`` (the functional ``fill_``)."""
    value = t.arg("value")
    if not is_expr(value):
        return _fill(t, value)
    out = t.out
    if t.type_of(value).dtype is not out.dtype:
        value = hir.cast(value, dtype=out.dtype, span=t.span)
    return hir.broadcast_to(value, shape=out.shape, span=t.span)


@register("arange.default", "arange.start", "arange.start_step")
def _arange(t: NodeContext) -> Result:
    """``start + arange(n) * step`` with ``n`` torch's output length. For an integer result
    torch truncates a float ``start`` and ``step`` to integers first (``arange(0.5, 4, 1.5,
    dtype=int64)`` is ``0, 1, 2``), and so does this rule: the arithmetic stays integral."""
    out = t.out
    base: Expr = hir.arange(extent=out.shape[0], dtype=out.dtype, span=t.span)
    step = t.arg("step", 1)
    start = t.arg("start", 0)
    integral = out.dtype.is_integral
    if step is not None and step != 1:
        if integral and isinstance(step, float):
            base = hir.mul(base, int(step), span=t.span)
        else:
            base = hir.mul(base, t.operand("step"), span=t.span)
    if start is not None and start != 0:
        if integral and isinstance(start, float):
            base = hir.add(base, int(start), span=t.span) if int(start) != 0 else base
        else:
            base = hir.add(base, t.operand("start"), span=t.span)
    return base


@register("triu.default")
def _triu(t: NodeContext) -> Result:
    return hir.triu(t.tensor("self"), diagonal=t.integer("diagonal", 0), span=t.span)


@register("tril.default")
def _tril(t: NodeContext) -> Result:
    return hir.tril(t.tensor("self"), diagonal=t.integer("diagonal", 0), span=t.span)
