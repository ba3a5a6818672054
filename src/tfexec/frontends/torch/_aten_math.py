"""ATen rules: reductions, variance, softmax and the normalisations.

Each rule computes what the ATen op computes, with the catalogue ops whose value rules are
the same torch functions (``aten.rms_norm`` → ``rms_norm``) or a composition its docstring
states; a composition may round differently from torch's fused kernel.
"""

from collections.abc import Callable
from typing import Literal

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Result, RuleError
from tfexec.frontends.torch._registry import register
from tfexec.frontends.torch._rule_helpers import axes_arg, flattened, to_dtype
from tfexec.ir.dims import ShapeDim, dim_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Expr


# -- reductions -------------------------------------------------------------------------------


def _reduce(kind: str) -> Callable[[NodeContext], Result]:
    def rule(t: NodeContext) -> Result:
        x = to_dtype(t, t.tensor("self"), t.dtype("dtype"))
        return hir.reduce(x, kind=kind, axes=axes_arg(t, "dim"), keepdims=bool(t.arg("keepdim", False)), span=t.span)  # type: ignore[arg-type]

    return rule


register("sum.dim_IntList", "sum.default")(_reduce("sum"))
register("mean.dim", "mean.default")(_reduce("mean"))
register("amax.default", "max.default")(_reduce("max"))
register("amin.default", "min.default")(_reduce("min"))
register("prod.dim_int", "prod.default")(_reduce("prod"))


def _argmax_of(t: NodeContext, x: Expr, negate: bool) -> Expr:
    if negate:
        dtype = t.type_of(x).dtype
        if dtype is DType.bool or dtype is DType.uint8:
            raise RuleError(f"argmin of {dtype} has no HIR spelling (argmax of the negation needs a signed dtype)")
        x = hir.neg(x, span=t.span)
    dim = t.arg("dim")
    keepdim = bool(t.arg("keepdim", False))
    if dim is None:
        flat = hir.argmax(flattened(t, x), axis=0, span=t.span)
        return hir.reshape(flat, shape=t.out.shape, span=t.span) if keepdim else flat
    return hir.argmax(x, axis=t.integer("dim"), keepdims=keepdim, span=t.span)


@register("argmax.default")
def _argmax(t: NodeContext) -> Result:
    """``argmax``: the first maximal index."""
    return _argmax_of(t, t.tensor("self"), negate=False)


@register("argmin.default")
def _argmin(t: NodeContext) -> Result:
    """``argmax(-x)``: the first minimal index (signed and floating dtypes)."""
    return _argmax_of(t, t.tensor("self"), negate=True)


@register("max.dim", "min.dim")
def _max_dim(t: NodeContext) -> Result:
    """``(reduce max|min, first arg-extremum)``."""
    kind: Literal["max", "min"] = "max" if t.op.startswith("aten.max") else "min"
    x = t.tensor("self")
    axis, keepdim = t.integer("dim"), bool(t.arg("keepdim", False))
    values = hir.reduce(x, kind=kind, axes=(axis,), keepdims=keepdim, span=t.span)
    try:
        indices: Expr | None = _argmax_of(t, x, negate=kind == "min")
    except RuleError:
        indices = None
    return (values, indices)


def _count(t: NodeContext, x: Expr, axes: tuple[int, ...] | None) -> ShapeDim:
    shape = t.type_of(x).shape
    chosen = range(len(shape)) if axes is None else sorted({a % len(shape) for a in axes})
    n: ShapeDim = 1
    for a in chosen:
        n = dim_expr("mul", n, shape[a])
    return n


def _variance(t: NodeContext) -> tuple[Expr, Expr]:
    """``(var, mean)``: ``sum((x - mean)^2) / max(0, N - correction)`` (two passes; torch's
    kernel accumulates differently, equal within rounding)."""
    x = t.tensor("self")
    axes = axes_arg(t, "dim")
    keepdim = bool(t.arg("keepdim", False))
    if t.has("correction"):
        correction = t.scalar("correction", 1)
    else:
        correction = 1 if t.arg("unbiased", True) else 0
    mean = hir.reduce(x, kind="mean", axes=axes, keepdims=True, span=t.span)
    centred = hir.sub(x, mean, span=t.span)
    total = hir.reduce(hir.mul(centred, centred, span=t.span), kind="sum", axes=axes, keepdims=keepdim, span=t.span)
    n = _count(t, x, axes)
    if not isinstance(n, int):
        raise RuleError(f"variance over a symbolic count of elements ({n}) is not supported")
    var = hir.div(total, max(0, n - correction) if isinstance(correction, int) else max(0.0, n - correction), span=t.span)
    out_mean = mean if keepdim else hir.reduce(x, kind="mean", axes=axes, keepdims=False, span=t.span)
    return var, out_mean


@register("var.correction", "var.dim", "var.default")
def _var(t: NodeContext) -> Result:
    return _variance(t)[0]


@register("std.correction", "std.dim", "std.default")
def _std(t: NodeContext) -> Result:
    return hir.sqrt(_variance(t)[0], span=t.span)


@register("var_mean.correction", "var_mean.dim")
def _var_mean(t: NodeContext) -> Result:
    return _variance(t)


# -- normalisation ----------------------------------------------------------------------------


@register("softmax.int", "_softmax.default", "_safe_softmax.default")
def _softmax(t: NodeContext) -> Result:
    x = to_dtype(t, t.tensor("self"), t.dtype("dtype"))
    if t.arg("half_to_float"):
        x = to_dtype(t, x, DType.float32)
    return hir.softmax(x, axis=t.integer("dim"), span=t.span)


@register("log_softmax.int", "_log_softmax.default")
def _log_softmax(t: NodeContext) -> Result:
    """``(x - max) - log(sum(exp(x - max)))`` (torch's kernel is the same formula, fused)."""
    x = to_dtype(t, t.tensor("self"), t.dtype("dtype"))
    if t.arg("half_to_float"):
        x = to_dtype(t, x, DType.float32)
    axis = (t.integer("dim"),)
    shifted = hir.sub(x, hir.reduce(x, kind="max", axes=axis, keepdims=True, span=t.span), span=t.span)
    total = hir.reduce(hir.exp(shifted, span=t.span), kind="sum", axes=axis, keepdims=True, span=t.span)
    return hir.sub(shifted, hir.log(total, span=t.span), span=t.span)


def _trailing(t: NodeContext) -> tuple[int, ...]:
    shape = t.arg("normalized_shape")
    if not isinstance(shape, (list, tuple)) or not shape:
        raise RuleError(f"normalized_shape {shape!r} is not a non-empty list of sizes")
    return tuple(range(-len(shape), 0))


@register("rms_norm.default")
def _rms_norm(t: NodeContext) -> Result:
    """``F.rms_norm`` over the trailing ``normalized_shape`` axes."""
    eps = t.arg("eps")
    return hir.rms_norm(
        t.tensor("input"), t.opt_tensor("weight"), axes=_trailing(t),
        eps=None if eps is None else float(t.scalar("eps")), span=t.span,
    )


@register("layer_norm.default", "native_layer_norm.default")
def _layer_norm(t: NodeContext) -> Result:
    """``F.layer_norm``; ``native_layer_norm``'s mean and rstd outputs are not provided."""
    x = t.tensor("input")
    weight, bias = t.opt_tensor("weight"), t.opt_tensor("bias")
    axes = _trailing(t)
    if bias is not None and weight is None:
        xt = t.type_of(x)
        weight = hir.full(shape=xt.shape[len(xt.shape) - len(axes):], value=1.0, dtype=xt.dtype, span=t.span)
    out = hir.layer_norm(x, weight, bias, axes=axes, eps=float(t.scalar("eps", 1e-5)), span=t.span)
    if "native" in t.op:
        return (out, None, None)
    return out
