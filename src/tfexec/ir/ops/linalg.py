"""Linear algebra: ``matmul`` (``torch.matmul``, 1-D operands and batch broadcasting included) and
``linear`` (``torch.nn.functional.linear``, catalogue v2)."""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite
from tfexec.ir.ops.promotion import broadcast_shapes, tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class MatMul(Op):
    """Matrix product of ``a`` and ``b``, batched, with 1-D operands as torch treats them.

    Type rule: ``a``'s dtype. The shape contracts ``a``'s last axis with ``b``'s second-to-last
    (its only axis when 1-D): two 1-D operands give a rank-0 result; a 1-D ``b`` drops the
    last axis of ``a``; a 1-D ``a`` drops the second-to-last axis of ``b``; otherwise the
    broadcast batch axes (C2) followed by ``a.shape[-2], b.shape[-1]``.
    Value rule: ``torch.matmul(a, b)`` on the run's device. Float kernels (MKL, oneDNN,
    cuBLAS) may differ in rounding across backends and thread counts.
    Constraints:
        (C1) the contracted sizes agree: ``a.shape[-1] == b.shape[-2]`` (``b.shape[0]`` for a
        1-D ``b``).
        (C2) the batch axes (all but the last two of each operand) broadcast.
        (C3) both operands have the same dtype (cast one).
        (C4) the dtype is not ``b1`` (torch refuses it).
        (C5) both operands have rank at least 1.
    Example: def example(a: f32[2, 3], b: f32[3, 2]): return matmul(a, b)
    Example: def example(a: i64[2, 2, 2], b: i64[2]): return matmul(a, b)
    Refused (C1): def example(a: f32[2, 3], b: f32[2, 3]): return matmul(a, b)
    Refused (C2): def example(a: f32[2, 1, 3], b: f32[3, 3, 1]): return matmul(a, b)
    Refused (C3): def example(a: f32[2, 3], b: f16[3, 2]): return matmul(a, b)
    Refused (C4): def example(a: b1[2, 2], b: b1[2, 2]): return matmul(a, b)
    Refused (C5): def example(a: f32[()], b: f32[3]): return matmul(a, b)
    """

    name: ClassVar[str] = "matmul"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2

    def infer(self, args: tuple[Operand, ...]) -> Type:
        a, b = tensor_args(self.name, args)
        if a.dtype != b.dtype:
            raise TypeRuleError(f"matmul operands must share a dtype, found {a} and {b} (cast one){cite(self.name, 'C3')}")
        if a.dtype is DType.bool:
            raise TypeRuleError(
                f"matmul is not defined for bool operands (torch rejects it), found {a} and {b}{cite(self.name, 'C4')}"
            )
        if a.rank == 0 or b.rank == 0:
            raise TypeRuleError(f"matmul operands must have rank >= 1, found {a} and {b}{cite(self.name, 'C5')}")
        k_a = a.shape[-1]
        k_b = b.shape[0] if b.rank == 1 else b.shape[-2]
        if k_a != k_b:
            raise TypeRuleError(f"matmul (C1): contracted sizes differ: {a} @ {b} ({k_a} vs {k_b})")
        if a.rank == 1 and b.rank == 1:
            return TensorType((), a.dtype)
        if b.rank == 1:
            return TensorType(a.shape[:-1], a.dtype)
        if a.rank == 1:
            return TensorType(b.shape[:-2] + b.shape[-1:], a.dtype)
        batch = broadcast_shapes(self.name, a.shape[:-2], b.shape[:-2], label="C2")
        return TensorType(batch + (a.shape[-2], b.shape[-1]), a.dtype)


@dataclass(frozen=True, slots=True)
class Linear(Op):
    """``x @ weight.T`` (plus ``bias``): ``torch.nn.functional.linear``, one fused call.

    ``x`` is ``[..., in]``, ``weight`` ``[out, in]`` and the optional ``bias`` ``[out]``. Torch
    rounds this as one GEMM (``addmm`` with the bias folded in), not as ``matmul`` then
    ``add``, so an imported ``nn.Linear`` computes what eager computes, bit for bit.

    Type rule: ``x.shape[:-1] + (weight.shape[0],)`` (a 1-D ``x`` gives ``[out]``); ``x``'s dtype.
    Value rule: ``torch.nn.functional.linear(x, weight, bias)`` on the run's device (MKL,
    oneDNN or cuBLAS: rounding may differ across backends and thread counts).
    Constraints:
        (C1) the contracted sizes agree: ``x.shape[-1] == weight.shape[1]``.
        (C2) ``weight`` has rank 2 and ``x`` rank at least 1 (torch's 1-D ``weight`` is
        ``matmul(x, weight)``: write that).
        (C3) ``x``, ``weight`` and ``bias`` have one dtype (torch's CPU kernels refuse a mix).
        (C4) the dtype is floating (kept stricter than torch, whose CPU kernels take integers
        and CUDA's do not; an integer product is ``matmul``).
        (C5) ``bias`` is ``[out]``, one element per output feature (torch also adds a bias that
        broadcasts to the result without growing it; write that as ``add``).
    Example: def example(x: f32[2, 3], w: f32[2, 3]): return linear(x, w)
    Example: def example(x: f32[2, 1, 3], w: f32[2, 3], b: f32[2]): return linear(x, w, b)
    Example: def example(x: f32[3], w: f32[2, 3], b: f32[2]): return linear(x, w, b)
    Refused (C1): def example(x: f32[2, 3], w: f32[2, 4]): return linear(x, w)
    Refused (C2): def example(x: f32[2, 3], w: f32[3]): return linear(x, w)
    Refused (C3): def example(x: f32[2, 3], w: f16[2, 3]): return linear(x, w)
    Refused (C4): def example(x: i64[2, 3], w: i64[2, 3]): return linear(x, w)
    Refused (C5): def example(x: f32[2, 3], w: f32[2, 3], b: f32[2, 2]): return linear(x, w, b)
    """

    name: ClassVar[str] = "linear"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 3

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x, w, *rest = tensor_args(self.name, args)
        shown = ", ".join(str(t) for t in (x, w, *rest))
        if w.rank != 2 or x.rank == 0:
            raise TypeRuleError(f"linear needs x of rank >= 1 and a weight [out, in] of rank 2, found {shown}{cite(self.name, 'C2')}")
        if len({t.dtype for t in (x, w, *rest)}) != 1:
            raise TypeRuleError(f"linear operands must share a dtype, found {shown} (cast one){cite(self.name, 'C3')}")
        if not x.dtype.is_floating:
            raise TypeRuleError(
                f"linear needs floating operands, found {shown} (use matmul for an integer product){cite(self.name, 'C4')}"
            )
        if x.shape[-1] != w.shape[1]:
            raise TypeRuleError(
                f"linear contracts x's last axis with the weight's in axis: {x} and {w} ({x.shape[-1]} vs {w.shape[1]})"
                f"{cite(self.name, 'C1')}"
            )
        if rest and rest[0].shape != (w.shape[0],):
            raise TypeRuleError(f"linear bias {rest[0]} must be [{w.shape[0]}], one element per output feature of {w}{cite(self.name, 'C5')}")
        return TensorType(x.shape[:-1] + (w.shape[0],), x.dtype)


LINALG_V2_OPS: tuple[type[Op], ...] = (Linear,)
"""The linear-algebra op catalogue v2 adds."""


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def matmul(a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.matmul(a, b)`` (1-D operands and batch broadcasting included)."""
    return apply(MatMul(), a, b, span=span)


def linear(x: ExprLike, weight: ExprLike, bias: ExprLike | None = None, *, span: Span | None = None) -> Call:
    """``F.linear(x, weight, bias)``: ``x [..., in]`` times ``weight [out, in]`` transposed, plus
    ``bias [out]``, in torch's one fused call."""
    operands = (x, weight) if bias is None else (x, weight, bias)
    return apply(Linear(), *operands, span=span)
