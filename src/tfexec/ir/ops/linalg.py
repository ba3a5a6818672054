"""Linear algebra: ``matmul`` (``torch.matmul``, 1-D operands and batch broadcasting included)."""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite
from tfexec.ir.ops.promotion import broadcast_shapes, tensor_args
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
