"""Attention: ``attention``, scaled dot-product attention as one op (torch's fused kernel).

``softmax(q @ kᵀ * scale + mask) @ v`` over the last two axes, with torch's causal masking
and grouped-query heads; what ``F.scaled_dot_product_attention`` computes, so an imported
model's attention is bitwise its eager value instead of a composition that rounds
differently.
"""

import math
from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dims import ShapeDim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.attrs import check_bool, check_optional_number
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite
from tfexec.ir.ops.promotion import broadcast_shapes, tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class Attention(Op):
    """Scaled dot-product attention of ``q`` (``..., L, E``) over ``k`` (``..., S, E``) and ``v`` (``..., S, Ev``), with an optional ``mask``.

    ``mask`` (broadcasting to ``L, S``) keeps the scores where it is true (``b1``) or is added
    to them (floating); ``is_causal`` keeps key ``j <= i`` for query ``i`` (top-left aligned, as
    torch); ``scale`` defaults to ``1 / sqrt(E)``. With ``enable_gqa``, each key/value head
    (axis -3) serves a group of query heads.

    Type rule: ``q``'s shape with the last axis ``Ev``; ``q``'s dtype.
    Value rule: ``torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask,
    is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)`` on the run's device (no
    dropout). A query row that every key is masked from is what torch's kernel makes of it,
    shown by the last example's first row as computed on the CPU (torch 2.13's CPU kernels,
    fused and math, give 0 there, where ``softmax`` of the masked scores would be NaN).
    torch's CPU kernel is blocked (flash attention): bitwise reproducible at a fixed thread count.
    Constraints:
        (C1) ``q``, ``k`` and ``v`` are floating, of one dtype and one rank of at least 2.
        (C2) ``k`` and ``v`` have one length ``S`` (axis -2); ``q`` and ``k`` one depth ``E``
        (axis -1).
        (C3) the batch axes of ``k`` and ``v`` are ``q``'s or 1 (broadcast, as for one shared
        key/value head); with ``enable_gqa``, their heads (axis -3) may be fewer, dividing
        ``q``'s.
        (C4) ``mask`` is ``b1`` or ``q``'s dtype and broadcasts to ``q``'s batch axes and ``L, S``.
        (C5) a ``mask`` is not given together with ``is_causal`` (torch refuses both).
    Example: def example(q: f32[1, 2, 3], k: f32[1, 4, 3], v: f32[1, 4, 2]): return attention(q, k, v)
    Example: def example(q: f32[2, 3, 4]): return attention(q, q, q, is_causal=True, scale=0.5)
    Example: def example(q: f32[2, 3], k: f32[4, 3], v: f32[4, 2], s: f32[2, 4]): return attention(q, k, v, gt(s, 0.25))
    Refused (C1): def example(q: f32[2, 3], k: f16[2, 3]): return attention(q, k, k)
    Refused (C2): def example(q: f32[2, 3], k: f32[4, 2]): return attention(q, k, k)
    Refused (C3): def example(q: f32[4, 2, 3], k: f32[3, 2, 3]): return attention(q, k, k, enable_gqa=True)
    Refused (C4): def example(q: f32[2, 3], m: i64[2, 2]): return attention(q, q, q, m)
    Refused (C5): def example(q: f32[2, 3], m: b1[2, 2]): return attention(q, q, q, m, is_causal=True)
    """

    name: ClassVar[str] = "attention"
    min_args: ClassVar[int] = 3
    max_args: ClassVar[int | None] = 4
    scale: float | None = None
    is_causal: bool = False
    enable_gqa: bool = False

    def __post_init__(self) -> None:
        check_optional_number("attention", "scale", self.scale)
        if self.scale is not None and not math.isfinite(self.scale):
            raise TypeError(f"attention scale must be finite, got {self.scale!r}")
        check_bool("attention", "is_causal", self.is_causal)
        check_bool("attention", "enable_gqa", self.enable_gqa)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        q, k, v, *mask = tensor_args(self.name, args)
        if len({q.dtype, k.dtype, v.dtype}) != 1 or not q.dtype.is_floating or not q.rank == k.rank == v.rank >= 2:
            raise TypeRuleError(f"attention needs q, k, v floating, of one dtype and one rank >= 2, found {q}, {k}, {v}{cite(self.name, 'C1')}")
        if k.shape[-2] != v.shape[-2] or q.shape[-1] != k.shape[-1]:
            raise TypeRuleError(
                f"attention needs k and v of one length and q and k of one depth, found {q}, {k}, {v}{cite(self.name, 'C2')}"
            )
        self._check_batch(q, k, v)
        if mask:
            m = mask[0]
            if m.dtype is not DType.bool and m.dtype is not q.dtype:
                raise TypeRuleError(f"attention mask {m} must be b1 or {q.dtype} like q{cite(self.name, 'C4')}")
            want: tuple[ShapeDim, ...] = q.shape[:-1] + (k.shape[-2],)
            if m.rank > len(want) or broadcast_shapes(self.name, m.shape, want, label="C4") != want:
                raise TypeRuleError(f"attention mask {m} does not broadcast to {want}{cite(self.name, 'C4')}")
            if self.is_causal:
                raise TypeRuleError(f"attention takes a mask or is_causal, not both{cite(self.name, 'C5')}")
        return TensorType(q.shape[:-1] + (v.shape[-1],), q.dtype)

    def _check_batch(self, q: TensorType, k: TensorType, v: TensorType) -> None:
        for t in (k, v):
            batch, qbatch = t.shape[:-2], q.shape[:-2]
            fits = all(b == a or b == 1 for a, b in zip(qbatch, batch))
            if not fits and self.enable_gqa and len(batch) >= 1:
                heads, qheads = batch[-1], qbatch[-1]
                grouped = isinstance(heads, int) and isinstance(qheads, int) and heads > 0 and qheads % heads == 0
                fits = grouped and all(b == a or b == 1 for a, b in zip(qbatch[:-1], batch[:-1]))
            if not fits:
                raise TypeRuleError(
                    f"attention needs the batch axes of k and v to be q's or 1"
                    f"{' (or fewer heads, dividing its own)' if self.enable_gqa else ''}, found {q} and {t}{cite(self.name, 'C3')}"
                )


ATTENTION_OPS: tuple[type[Op], ...] = (Attention,)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def attention(
    q: ExprLike, k: ExprLike, v: ExprLike, mask: ExprLike | None = None, *, scale: float | None = None,
    is_causal: bool = False, enable_gqa: bool = False, span: Span | None = None,
) -> Call:
    """``F.scaled_dot_product_attention(q, k, v, mask, is_causal, scale, enable_gqa)`` (no dropout)."""
    operands = (q, k, v) if mask is None else (q, k, v, mask)
    return apply(Attention(scale, is_causal, enable_gqa), *operands, span=span)
