"""The builder of ``attention`` (re-exported by ``tfexec.ops``)."""

from tfexec.builders.operands import Operand, apply
from tfexec.ir.expr import Call
from tfexec.ir.ops.attention import Attention
from tfexec.ir.span import Span


def attention(
    q: Operand, k: Operand, v: Operand, mask: Operand | None = None, *, scale: float | None = None,
    is_causal: bool = False, enable_gqa: bool = False, span: Span | None = None,
) -> Call:
    """``F.scaled_dot_product_attention(q, k, v, mask, is_causal, scale, enable_gqa)`` (no dropout)."""
    operands = (q, k, v) if mask is None else (q, k, v, mask)
    return apply(Attention(scale, is_causal, enable_gqa), *operands, span=span)


__all__ = ["attention"]
