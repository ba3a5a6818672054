"""ATen rules: linear algebra (``linear``, ``mm``/``bmm``/``matmul``, ``addmm``/``baddbmm``) and
scaled dot-product attention.

A composition may round differently from torch's fused kernel (``linear`` is ``matmul``
then ``add``); each rule's docstring says so.
"""

import math

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Operand, Result, RuleError
from tfexec.frontends.torch._registry import register
from tfexec.frontends.torch._rule_helpers import repeat_each, transposed
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Expr


# -- linear algebra ---------------------------------------------------------------------------


@register("linear.default")
def _linear(t: NodeContext) -> Result:
    """``matmul(x, transpose(w)) + b`` (torch may fuse the bias into the GEMM: not bitwise)."""
    y = hir.matmul(t.tensor("input"), transposed(t, t.tensor("weight")), span=t.span)
    bias = t.opt_tensor("bias")
    return y if bias is None else hir.add(y, bias, span=t.span)


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
    """``softmax(q @ kᵀ * scale [masked]) @ v``: ``is_causal`` keeps key ``j <= i`` (top-left
    aligned, as torch), a bool ``attn_mask`` keeps where true, a float one is added.
    ``enable_gqa`` repeats each key/value head for its group of query heads. torch's CPU
    kernel blocks the softmax (flash attention), so results agree within rounding."""
    q, k, v = t.tensor("query"), t.tensor("key"), t.tensor("value")
    if t.scalar("dropout_p", 0.0) != 0:
        raise RuleError("attention dropout (dropout_p != 0) is random; pass dropout_p=0.0 in evaluation")
    qt, kt = t.type_of(q), t.type_of(k)
    rank = len(qt.shape)
    if rank < 2 or len(kt.shape) != rank:
        raise RuleError(f"attention needs query and key of one rank >= 2, got {qt} and {kt}")
    if t.arg("enable_gqa"):
        if rank < 3:
            raise RuleError("enable_gqa needs a heads axis")
        hq, hk = qt.shape[-3], kt.shape[-3]
        if not isinstance(hq, int) or not isinstance(hk, int) or hk == 0 or hq % hk:
            raise RuleError(f"enable_gqa needs static head counts with the key heads dividing the query heads ({hq}, {hk})")
        if hq != hk:
            k = repeat_each(t, k, rank - 3, hq // hk)
            v = repeat_each(t, v, len(t.type_of(v).shape) - 3, hq // hk)
    scale = t.arg("scale")
    if scale is None:
        depth = qt.shape[-1]
        if not isinstance(depth, int) or depth <= 0:
            raise RuleError(f"attention over a symbolic head size {depth} needs an explicit scale")
        scale = 1.0 / math.sqrt(depth)
    elif not isinstance(scale, (int, float)):
        raise RuleError(f"attention scale {scale!r} is not a static number")
    perm = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    scores = hir.mul(hir.matmul(q, hir.transpose(k, perm=perm, span=t.span), span=t.span), float(scale), span=t.span)
    mask = t.opt_tensor("attn_mask")
    if t.arg("is_causal"):
        if mask is not None:
            raise RuleError("attention with both attn_mask and is_causal (torch refuses it)")
        length, source = qt.shape[-2], kt.shape[-2]
        rows = hir.reshape(hir.arange(extent=length, span=t.span), shape=(length, 1), span=t.span)
        cols = hir.reshape(hir.arange(extent=source, span=t.span), shape=(1, source), span=t.span)
        scores = hir.where(hir.le(cols, rows, span=t.span), scores, float("-inf"), span=t.span)
    elif mask is not None:
        if t.type_of(mask).dtype is DType.bool:
            scores = hir.where(mask, scores, float("-inf"), span=t.span)
        else:
            scores = hir.add(scores, mask, span=t.span)
    probs = hir.softmax(scores, axis=-1, span=t.span)
    return hir.matmul(probs, v, span=t.span)
