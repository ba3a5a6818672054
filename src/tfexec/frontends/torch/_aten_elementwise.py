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
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Expr


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
