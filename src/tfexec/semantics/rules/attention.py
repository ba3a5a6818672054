"""Value rule of ``attention``: ``torch.nn.functional.scaled_dot_product_attention``, after
the op's type rule has checked the operands."""

import torch
import torch.nn.functional as F

from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import as_tensor
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.ir.ops.attention import Attention


@value_rule(Attention)
def _attention(op: Attention, args: tuple[Arg, ...]) -> Kernel:
    rule = TypeRule(op)
    scale = None if op.scale is None else float(op.scale)

    def scaled_dot_product_attention(ctx: EvaluateContext, q: object, k: object, v: object, *mask: object) -> torch.Tensor:
        rule.check(q, k, v, *mask)
        return F.scaled_dot_product_attention(
            as_tensor(ctx, q), as_tensor(ctx, k), as_tensor(ctx, v), attn_mask=as_tensor(ctx, mask[0]) if mask else None,
            is_causal=op.is_causal, scale=scale, enable_gqa=op.enable_gqa,
        )

    return Kernel(scaled_dot_product_attention, needs_ctx=True)
