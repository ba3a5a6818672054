"""ATen rules: elementwise ops, selection, conversions and identities.

Each rule computes what the ATen op computes, with the catalogue op whose value rule is
the same torch function (``aten.silu`` → ``silu``, ``aten.floor`` → ``floor``), or a
composition its docstring states.
"""

from collections.abc import Callable

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Operand, Result, RuleError
from tfexec.frontends.torch._registry import register
from tfexec.frontends.torch._rule_helpers import to_dtype, typed_scalar
from tfexec.ir.expr import Expr


# -- elementwise ----------------------------------------------------------------------------

_UNARY: dict[str, Callable[..., Expr]] = {
    "neg": hir.neg, "abs": hir.abs, "exp": hir.exp, "log": hir.log, "sqrt": hir.sqrt, "rsqrt": hir.rsqrt,
    "tanh": hir.tanh, "sigmoid": hir.sigmoid, "relu": hir.relu, "silu": hir.silu, "erf": hir.erf,
    "sin": hir.sin, "cos": hir.cos,
    # catalogue v2
    "floor": hir.floor, "ceil": hir.ceil, "trunc": hir.trunc, "sign": hir.sign, "sgn": hir.sign, "log1p": hir.log1p,
    "expm1": hir.expm1, "log2": hir.log2, "log10": hir.log10, "tan": hir.tan, "atan": hir.atan,
    "reciprocal": hir.reciprocal, "isnan": hir.isnan, "isinf": hir.isinf, "isfinite": hir.isfinite,
    "logical_not": hir.logical_not, "bitwise_not": hir.bitwise_not, "selu": hir.selu, "hardsigmoid": hir.hardsigmoid,
    "hardswish": hir.hardswish, "mish": hir.mish,
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
    # catalogue v2
    "floor_divide": hir.floor_divide, "remainder": hir.remainder, "fmod": hir.fmod, "bitwise_and": hir.bitwise_and,
    "bitwise_or": hir.bitwise_or, "bitwise_xor": hir.bitwise_xor, "__and__": hir.bitwise_and, "__or__": hir.bitwise_or,
    "__xor__": hir.bitwise_xor, "logical_xor": hir.logical_xor,
}
_TENSOR_DEFAULT = ("maximum", "minimum", "logical_and", "logical_or", "logical_xor", "floor_divide")
"""The ops whose ``.default`` overload is the tensor one (for the others it is the
Python-number form, which never reaches a tensor graph)."""


def _binary(build: Callable[..., Expr]) -> Callable[[NodeContext], Result]:
    def rule(t: NodeContext) -> Result:
        return build(t.operand("self"), t.operand("other"), span=t.span)

    return rule


for _name, _build in _BINARY.items():
    _default = (f"{_name}.default",) if _name in _TENSOR_DEFAULT else ()
    register(f"{_name}.Tensor", f"{_name}.Scalar", f"{_name}.Scalar_Tensor", *_default)(_binary(_build))


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
    """``div`` (no rounding), ``floor_divide`` (``rounding_mode="floor"``, torch's same kernel)
    or ``trunc_divide`` (``"trunc"``)."""
    build = {None: hir.div, "floor": hir.floor_divide, "trunc": hir.trunc_divide}.get(t.arg("rounding_mode"))  # type: ignore[call-overload]
    if build is None:
        raise RuleError(f"division with rounding_mode={t.arg('rounding_mode')!r} (expected None, 'floor' or 'trunc')")
    return build(t.operand("self"), t.operand("other"), span=t.span)  # type: ignore[no-any-return]


@register("pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar")
def _pow(t: NodeContext) -> Result:
    return hir.pow(t.operand("self"), t.operand("exponent"), span=t.span)


@register("gelu.default")
def _gelu(t: NodeContext) -> Result:
    approximate = t.arg("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise RuleError(f"gelu approximate={approximate!r} is neither 'none' nor 'tanh'")
    return hir.gelu(t.tensor("self"), approximate="tanh" if approximate == "tanh" else "none", span=t.span)


@register("square.default")
def _square(t: NodeContext) -> Result:
    """``x ** 2`` (torch.square is torch.pow(x, 2))."""
    return hir.pow(t.tensor("self"), 2, span=t.span)


@register("round.default", "round.decimals")
def _round(t: NodeContext) -> Result:
    """``round`` (halves to even), to ``decimals`` places when given."""
    return hir.round(t.tensor("self"), decimals=t.integer("decimals", 0), span=t.span)


@register("clamp.default", "clamp.Tensor", "clamp_min.default", "clamp_max.default", "clamp_min.Tensor", "clamp_max.Tensor")
def _clamp(t: NodeContext) -> Result:
    """``clamp`` with both bounds; one bound alone is ``maximum`` (``clamp_min``) or
    ``minimum`` (``clamp_max``), which is what torch computes then (NaN propagates)."""
    x = t.tensor("self")
    low, high = t.arg("min"), t.arg("max")
    if low is not None and high is not None:
        return hir.clamp(x, t.operand("min"), t.operand("max"), span=t.span)
    if low is not None:
        return hir.maximum(x, t.operand("min"), span=t.span)
    if high is not None:
        return hir.minimum(x, t.operand("max"), span=t.span)
    raise RuleError("clamp without min or max")


@register("hardtanh.default", "relu6.default")
def _hardtanh(t: NodeContext) -> Result:
    """``clamp(x, min_val, max_val)`` (``relu6``: ``clamp(x, 0, 6)``), which torch's kernel computes."""
    if t.op.startswith("aten.relu6"):
        return hir.clamp(t.tensor("self"), 0, 6, span=t.span)
    return hir.clamp(t.tensor("self"), t.scalar("min_val", -1.0), t.scalar("max_val", 1.0), span=t.span)


@register("leaky_relu.default")
def _leaky_relu(t: NodeContext) -> Result:
    return hir.leaky_relu(t.tensor("self"), negative_slope=float(t.scalar("negative_slope", 0.01)), span=t.span)


@register("elu.default")
def _elu(t: NodeContext) -> Result:
    """``elu(x, alpha)``; torch's extra ``scale`` and ``input_scale`` (other than 1) are refused."""
    if t.scalar("scale", 1) != 1 or t.scalar("input_scale", 1) != 1:
        raise RuleError("elu with scale or input_scale other than 1 has no HIR op")
    return hir.elu(t.tensor("self"), alpha=float(t.scalar("alpha", 1.0)), span=t.span)


@register("celu.default")
def _celu(t: NodeContext) -> Result:
    return hir.celu(t.tensor("self"), alpha=float(t.scalar("alpha", 1.0)), span=t.span)


@register("softplus.default")
def _softplus(t: NodeContext) -> Result:
    beta, threshold = float(t.scalar("beta", 1.0)), float(t.scalar("threshold", 20.0))
    return hir.softplus(t.tensor("self"), beta=beta, threshold=threshold, span=t.span)


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


@register("_to_copy.default", "to.dtype", "to.dtype_layout", "to.device", "_to_dtype.default")
def _to_copy(t: NodeContext) -> Result:
    """``cast`` when the dtype changes; a device or layout change is no value change (the
    evaluator computes where its inputs are)."""
    return to_dtype(t, t.tensor("self"), t.dtype("dtype"))


@register("to.other", "type_as.default")
def _type_as(t: NodeContext) -> Result:
    return to_dtype(t, t.tensor("self"), t.type_of(t.tensor("other")).dtype)


@register(
    "clone.default", "contiguous.default", "alias.default", "detach.default", "lift_fresh_copy.default",
    "lift_fresh.default",
)
def _identity(t: NodeContext) -> Result:
    """The operand itself: these copy or re-wrap a value without changing it."""
    return t.tensor("self")


@register("dropout.default", "feature_dropout.default", "alpha_dropout.default")
def _dropout(t: NodeContext) -> Result:
    """The identity in evaluation (``train=False`` or ``p == 0``); random in training, refused."""
    if t.arg("train") and t.scalar("p", 0.0) != 0:
        raise RuleError("dropout in training mode is random; call module.eval() before importing")
    return t.tensor("input")
