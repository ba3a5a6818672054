"""ATen rules: linear algebra (``linear``, ``mm``/``bmm``/``matmul``, ``addmm``/``baddbmm``) and
scaled dot-product attention.

A composition may round differently from torch's fused kernel (``addmm`` is ``matmul``
then ``add``); each rule's docstring says so.
"""

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Operand, Result, RuleError
from tfexec.frontends.torch._registry import register
from tfexec.frontends.torch._rule_helpers import transposed
from tfexec.ir.expr import Expr
from tfexec.ir.ops.base import Operand as Typed
from tfexec.ir.ops.base import TypeRuleError
from tfexec.ir.ops.linalg import Linear


# -- linear algebra ---------------------------------------------------------------------------


@register("linear.default")
def _linear(t: NodeContext) -> Result:
    """``linear(x, w, b)``, torch's one fused call (bitwise what eager computes). What ``linear``
    refuses and torch takes (a 1-D weight, a bias that only broadcasts, integer operands) is
    ``matmul(x, transpose(w)) + b`` instead, which may round differently from torch's GEMM."""
    x, w, bias = t.tensor("input"), t.tensor("weight"), t.opt_tensor("bias")
    operands = (x, w) if bias is None else (x, w, bias)
    try:
        Linear().infer(tuple(Typed(t.type_of(o)) for o in operands))
    except TypeRuleError:
        y = hir.matmul(x, transposed(t, w), span=t.span)
        return y if bias is None else hir.add(y, bias, span=t.span)
    return hir.linear(*operands, span=t.span)


@register("mm.default", "bmm.default", "matmul.default")
def _matmul(t: NodeContext) -> Result:
    return hir.matmul(t.tensor("self"), t.tensor("other" if t.has("other") else "mat2"), span=t.span)


@register("t.default", "numpy_T.default")
def _t(t: NodeContext) -> Result:
    return transposed(t, t.tensor("self"))


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


# -- attention --------------------------------------------------------------------------------


@register("scaled_dot_product_attention.default")
def _sdpa(t: NodeContext) -> Result:
    """``attention`` (torch's fused kernel, so bitwise what eager computes); dropout is refused."""
    q, k, v = t.tensor("query"), t.tensor("key"), t.tensor("value")
    if t.scalar("dropout_p", 0.0) != 0:
        raise RuleError("attention dropout (dropout_p != 0) is random; pass dropout_p=0.0 in evaluation")
    scale = t.arg("scale")
    if scale is not None and not isinstance(scale, (int, float)):
        raise RuleError(f"attention scale {scale!r} is not a static number")
    return hir.attention(
        q, k, v, t.opt_tensor("attn_mask"), scale=None if scale is None else float(scale), is_causal=bool(t.arg("is_causal")),
        enable_gqa=bool(t.arg("enable_gqa")), span=t.span,
    )
