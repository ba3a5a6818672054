"""ATen rules: elementwise ops, conversions, linear algebra, reductions, normalisation.

Each rule computes what the ATen op computes, with the catalogue ops whose value rules are
the same torch functions (``aten.silu`` → ``silu``, ``aten.rms_norm`` → ``rms_norm``) or,
where the catalogue has no such op, a composition stated in the rule's docstring
(``linear`` → ``matmul`` with the transposed weight, then ``add``). A composition may round
differently from torch's fused kernel; the docstring says so.
"""

import math
from collections.abc import Callable
from typing import Literal

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Operand, Result, RuleError
from tfexec.frontends.torch._registry import register
from tfexec.ir.dims import ShapeDim, dim_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Constant, Expr
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType

# -- elementwise ----------------------------------------------------------------------------

_UNARY: dict[str, Callable[..., Expr]] = {
    "neg": hir.neg, "abs": hir.abs, "exp": hir.exp, "log": hir.log, "sqrt": hir.sqrt, "rsqrt": hir.rsqrt,
    "tanh": hir.tanh, "sigmoid": hir.sigmoid, "relu": hir.relu, "silu": hir.silu, "erf": hir.erf,
    "sin": hir.sin, "cos": hir.cos,
}


def _unary(build: Callable[..., Expr]) -> Callable[[NodeContext], Result]:
    def rule(t: NodeContext) -> Result:
        return build(t.tensor("self"), span=t.span)

    return rule


for _name, _build in _UNARY.items():
    register(f"{_name}.default")(_unary(_build))

_BINARY: dict[str, Callable[..., Expr]] = {
    "mul": hir.mul, "div": hir.div, "maximum": hir.maximum, "minimum": hir.minimum,
    "eq": hir.eq, "ne": hir.ne, "lt": hir.lt, "le": hir.le, "gt": hir.gt, "ge": hir.ge,
    "logical_and": hir.logical_and, "logical_or": hir.logical_or,
}


def _binary(build: Callable[..., Expr]) -> Callable[[NodeContext], Result]:
    def rule(t: NodeContext) -> Result:
        return build(t.operand("self"), t.operand("other"), span=t.span)

    return rule


for _name, _build in _BINARY.items():
    # ``.default`` is the tensor overload only for these four; ``aten.mul.default`` & co. are
    # the Python-number forms (Scalar a, Scalar b), which never reach a tensor graph.
    _default = (f"{_name}.default",) if _name in ("maximum", "minimum", "logical_and", "logical_or") else ()
    register(f"{_name}.Tensor", f"{_name}.Scalar", *_default)(_binary(_build))


def _scaled(t: NodeContext, value: Operand, alpha: bool | int | float) -> Operand:
    return value if alpha == 1 else hir.mul(value, alpha, span=t.span)


@register("add.Tensor", "add.Scalar")
def _add(t: NodeContext) -> Result:
    """``self + alpha * other`` (torch fuses the two; with ``alpha != 1`` it may round once less)."""
    return hir.add(t.operand("self"), _scaled(t, t.operand("other"), t.scalar("alpha", 1)), span=t.span)


@register("sub.Tensor", "sub.Scalar")
def _sub(t: NodeContext) -> Result:
    """``self - alpha * other``."""
    return hir.sub(t.operand("self"), _scaled(t, t.operand("other"), t.scalar("alpha", 1)), span=t.span)


@register("rsub.Tensor", "rsub.Scalar")
def _rsub(t: NodeContext) -> Result:
    """``other - alpha * self``."""
    return hir.sub(t.operand("other"), _scaled(t, t.operand("self"), t.scalar("alpha", 1)), span=t.span)


@register("div.Tensor_mode", "div.Scalar_mode")
def _div_mode(t: NodeContext) -> Result:
    """True division only: HIR has no floor or trunc division of tensors."""
    mode = t.arg("rounding_mode")
    if mode is not None:
        raise RuleError(f"division with rounding_mode={mode!r} has no HIR op (only true division)")
    return hir.div(t.operand("self"), t.operand("other"), span=t.span)


@register("pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar")
def _pow(t: NodeContext) -> Result:
    return hir.pow(t.operand("self"), t.operand("exponent"), span=t.span)


@register("gelu.default")
def _gelu(t: NodeContext) -> Result:
    approximate = t.arg("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise RuleError(f"gelu approximate={approximate!r} is neither 'none' nor 'tanh'")
    return hir.gelu(t.tensor("self"), approximate="tanh" if approximate == "tanh" else "none", span=t.span)


@register("reciprocal.default")
def _reciprocal(t: NodeContext) -> Result:
    """``1 / x``."""
    return hir.div(1.0, t.tensor("self"), span=t.span)


@register("square.default")
def _square(t: NodeContext) -> Result:
    """``x ** 2`` (torch.square is torch.pow(x, 2))."""
    return hir.pow(t.tensor("self"), 2, span=t.span)


@register("logical_not.default", "bitwise_not.default")
def _logical_not(t: NodeContext) -> Result:
    """``x == 0`` (``bitwise_not`` only on bool, where it is the logical not)."""
    x = t.tensor("self")
    dtype = t.type_of(x).dtype
    if t.op.startswith("aten.bitwise") and dtype is not DType.bool:
        raise RuleError(f"bitwise_not of {dtype} has no HIR op (only of bool)")
    return hir.eq(x, False if dtype is DType.bool else 0, span=t.span)


@register("bitwise_and.Tensor", "bitwise_or.Tensor", "__and__.Tensor", "__or__.Tensor")
def _bitwise(t: NodeContext) -> Result:
    """``logical_and`` / ``logical_or`` of two bool tensors."""
    a, b = t.tensor("self"), t.tensor("other")
    if t.type_of(a).dtype is not DType.bool or t.type_of(b).dtype is not DType.bool:
        raise RuleError("bitwise and/or of non-bool tensors has no HIR op (only of bool)")
    build = hir.logical_and if "and" in t.op else hir.logical_or
    return build(a, b, span=t.span)


@register("clamp.default", "clamp.Tensor", "clamp_min.default", "clamp_max.default", "clamp_min.Tensor", "clamp_max.Tensor")
def _clamp(t: NodeContext) -> Result:
    """``minimum(maximum(x, min), max)`` (NaN propagates as in torch.clamp)."""
    out: Expr = t.tensor("self")
    low, high = t.arg("min"), t.arg("max")
    if low is not None:
        out = hir.maximum(out, t.operand("min"), span=t.span)
    if high is not None:
        out = hir.minimum(out, t.operand("max"), span=t.span)
    if low is None and high is None:
        raise RuleError("clamp without min or max")
    return out


@register("hardtanh.default")
def _hardtanh(t: NodeContext) -> Result:
    """``minimum(maximum(x, min_val), max_val)``."""
    low, high = t.scalar("min_val", -1.0), t.scalar("max_val", 1.0)
    return hir.minimum(hir.maximum(t.tensor("self"), low, span=t.span), high, span=t.span)


@register("leaky_relu.default")
def _leaky_relu(t: NodeContext) -> Result:
    """``where(x > 0, x, x * negative_slope)``."""
    x = t.tensor("self")
    slope = t.scalar("negative_slope", 0.01)
    return hir.where(hir.gt(x, 0, span=t.span), x, hir.mul(x, slope, span=t.span), span=t.span)


def typed_scalar(value: bool | int | float, dtype: DType, span: Span | None) -> Constant:
    """A strong rank-0 constant of ``dtype`` holding ``value`` converted as torch converts it."""
    converted: bool | int | float
    if dtype is DType.bool:
        converted = bool(value)
    elif dtype.is_floating:
        converted = float(value)
    else:
        if isinstance(value, float) and not math.isfinite(value):
            raise RuleError(f"value {value} does not fit {dtype}")
        converted = int(value)
    return Constant(converted, TensorType((), dtype), span=span)


@register("where.self", "where.ScalarSelf", "where.ScalarOther", "where.Scalar")
def _where(t: NodeContext) -> Result:
    return hir.where(t.tensor("condition"), t.operand("self"), t.operand("other"), span=t.span)


@register("masked_fill.Scalar", "masked_fill.Tensor")
def _masked_fill(t: NodeContext) -> Result:
    """``where(mask, value, x)`` with ``value`` converted to ``x``'s dtype (as masked_fill does)."""
    x, mask = t.tensor("self"), t.tensor("mask")
    dtype = t.type_of(x).dtype
    value = t.arg("value")
    fill: Expr
    if isinstance(value, (bool, int, float)):
        fill = typed_scalar(value, dtype, t.span)
    else:
        fill = t.tensor("value")
        if t.type_of(fill).dtype is not dtype:
            fill = hir.cast(fill, dtype=dtype, span=t.span)
    return hir.where(mask, fill, x, span=t.span)


# -- conversions and identities -------------------------------------------------------------


def _to(t: NodeContext, x: Expr, dtype: DType | None) -> Expr:
    if dtype is None or dtype is t.type_of(x).dtype:
        return x
    return hir.cast(x, dtype=dtype, span=t.span)


@register("_to_copy.default", "to.dtype", "to.dtype_layout", "to.device", "_to_dtype.default")
def _to_copy(t: NodeContext) -> Result:
    """``cast`` when the dtype changes; a device or layout change is no value change (the
    evaluator computes where its inputs are)."""
    return _to(t, t.tensor("self"), t.dtype("dtype"))


@register("to.other", "type_as.default")
def _type_as(t: NodeContext) -> Result:
    return _to(t, t.tensor("self"), t.type_of(t.tensor("other")).dtype)


@register(
    "clone.default", "contiguous.default", "alias.default", "detach.default", "lift_fresh_copy.default",
    "lift_fresh.default", "detach_.default",
)
def _identity(t: NodeContext) -> Result:
    """The operand itself: these copy or re-wrap a value without changing it (``detach_``
    changes no value either, in place or not)."""
    return t.tensor("self")


@register("dropout.default", "feature_dropout.default", "alpha_dropout.default")
def _dropout(t: NodeContext) -> Result:
    """The identity in evaluation (``train=False`` or ``p == 0``); random in training, refused."""
    if t.arg("train") and t.scalar("p", 0.0) != 0:
        raise RuleError("dropout in training mode is random; call module.eval() before importing")
    return t.tensor("input")


# -- linear algebra ---------------------------------------------------------------------------


def _transposed(t: NodeContext, x: Expr) -> Expr:
    rank = len(t.type_of(x).shape)
    if rank < 2:
        return x
    perm = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    return hir.transpose(x, perm=perm, span=t.span)


@register("linear.default")
def _linear(t: NodeContext) -> Result:
    """``matmul(x, transpose(w)) + b`` (torch may fuse the bias into the GEMM: not bitwise)."""
    y = hir.matmul(t.tensor("input"), _transposed(t, t.tensor("weight")), span=t.span)
    bias = t.opt_tensor("bias")
    return y if bias is None else hir.add(y, bias, span=t.span)


@register("mm.default", "bmm.default", "matmul.default")
def _matmul(t: NodeContext) -> Result:
    return hir.matmul(t.tensor("self"), t.tensor("other" if t.has("other") else "mat2"), span=t.span)


@register("t.default", "numpy_T.default")
def _t(t: NodeContext) -> Result:
    return _transposed(t, t.tensor("self"))


@register("addmm.default", "baddbmm.default")
def _addmm(t: NodeContext) -> Result:
    """``beta * self + alpha * (m1 @ m2)`` (torch fuses the add into the GEMM: not bitwise)."""
    prod: Expr = hir.matmul(t.tensor("mat1" if t.has("mat1") else "batch1"), t.tensor("mat2" if t.has("mat2") else "batch2"), span=t.span)
    alpha, beta = t.scalar("alpha", 1), t.scalar("beta", 1)
    if alpha != 1:
        prod = hir.mul(prod, alpha, span=t.span)
    if beta == 0:
        return prod
    bias: Operand = t.tensor("self")
    if beta != 1:
        bias = hir.mul(bias, beta, span=t.span)
    return hir.add(bias, prod, span=t.span)


# -- reductions -------------------------------------------------------------------------------


def _axes(t: NodeContext, name: str) -> tuple[int, ...] | None:
    """The reduced axes; ``None`` or ``[]`` reduce every axis (torch's convention for ``dim``)."""
    dims = t.ints(name)
    return dims if dims else None


def _reduce(kind: str) -> Callable[[NodeContext], Result]:
    def rule(t: NodeContext) -> Result:
        x = _to(t, t.tensor("self"), t.dtype("dtype"))
        return hir.reduce(x, kind=kind, axes=_axes(t, "dim"), keepdims=bool(t.arg("keepdim", False)), span=t.span)  # type: ignore[arg-type]

    return rule


register("sum.dim_IntList", "sum.default")(_reduce("sum"))
register("mean.dim", "mean.default")(_reduce("mean"))
register("amax.default", "max.default")(_reduce("max"))
register("amin.default", "min.default")(_reduce("min"))
register("prod.dim_int", "prod.default")(_reduce("prod"))


def _flat(t: NodeContext, x: Expr) -> Expr:
    count: ShapeDim = 1
    for d in t.type_of(x).shape:
        count = dim_expr("mul", count, d)
    return hir.reshape(x, shape=(count,), span=t.span)


def _argmax_of(t: NodeContext, x: Expr, negate: bool) -> Expr:
    if negate:
        dtype = t.type_of(x).dtype
        if dtype is DType.bool or dtype is DType.uint8:
            raise RuleError(f"argmin of {dtype} has no HIR spelling (argmax of the negation needs a signed dtype)")
        x = hir.neg(x, span=t.span)
    dim = t.arg("dim")
    keepdim = bool(t.arg("keepdim", False))
    if dim is None:
        flat = hir.argmax(_flat(t, x), axis=0, span=t.span)
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
    axes = _axes(t, "dim")
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
    x = _to(t, t.tensor("self"), t.dtype("dtype"))
    if t.arg("half_to_float"):
        x = _to(t, x, DType.float32)
    return hir.softmax(x, axis=t.integer("dim"), span=t.span)


@register("log_softmax.int", "_log_softmax.default")
def _log_softmax(t: NodeContext) -> Result:
    """``(x - max) - log(sum(exp(x - max)))`` (torch's kernel is the same formula, fused)."""
    x = _to(t, t.tensor("self"), t.dtype("dtype"))
    if t.arg("half_to_float"):
        x = _to(t, x, DType.float32)
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
