"""ATen rules: creation (``full``, ``zeros``, ``ones``, ``arange``…) and triangular masks."""

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Result, RuleError
from tfexec.frontends.torch._registry import register
from tfexec.ir.dims import DimExpr, DimVar
from tfexec.ir.dtypes import DType
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


@register("arange.default", "arange.start", "arange.start_step")
def _arange(t: NodeContext) -> Result:
    """``start + arange(n) * step`` with ``n`` torch's output length."""
    out = t.out
    base: Expr = hir.arange(extent=out.shape[0], dtype=out.dtype, span=t.span)
    step = t.arg("step", 1)
    start = t.arg("start", 0)
    if step is not None and step != 1:
        base = hir.mul(base, t.operand("step"), span=t.span)
    if start is not None and start != 0:
        base = hir.add(base, t.operand("start"), span=t.span)
    return base


def _triangle(t: NodeContext, upper: bool) -> Result:
    """``where(mask, x, 0)`` with ``mask = col - row >= k`` (triu) or ``<= k`` (tril)."""
    x = t.tensor("self")
    xt = t.type_of(x)
    if len(xt.shape) < 2:
        raise RuleError("tril/triu need a matrix")
    rows_n, cols_n = xt.shape[-2], xt.shape[-1]
    rows = hir.reshape(hir.arange(extent=rows_n, span=t.span), shape=(rows_n, 1), span=t.span)
    cols = hir.reshape(hir.arange(extent=cols_n, span=t.span), shape=(1, cols_n), span=t.span)
    diff = hir.sub(cols, rows, span=t.span)
    k = t.integer("diagonal", 0)
    mask = hir.ge(diff, k, span=t.span) if upper else hir.le(diff, k, span=t.span)
    zero: bool | int = False if xt.dtype is DType.bool else 0
    return hir.where(mask, x, zero, span=t.span)


@register("triu.default")
def _triu(t: NodeContext) -> Result:
    return _triangle(t, upper=True)


@register("tril.default")
def _tril(t: NodeContext) -> Result:
    return _triangle(t, upper=False)
