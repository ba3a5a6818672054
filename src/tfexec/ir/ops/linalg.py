"""Linear algebra: ``matmul`` (``torch.matmul``, 1-D operands and batch broadcasting included)."""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Op, Operand, TypeRuleError
from tfexec.ir.ops.promotion import broadcast_shapes, tensor_args
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class MatMul(Op):
    """``torch.matmul(a, b)``. Both operands share one non-bool dtype and have rank ≥ 1.

    (C1) contracted sizes agree: ``a.shape[-1] == b.shape[-2]`` (``b.shape[0]`` for 1-D ``b``).
    (C2) batch dims broadcast. Float kernels may differ by rounding across backends.
    """

    name: ClassVar[str] = "matmul"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2

    def infer(self, args: tuple[Operand, ...]) -> Type:
        a, b = tensor_args(self.name, args)
        if a.dtype != b.dtype:
            raise TypeRuleError(f"matmul operands must share a dtype, found {a} and {b} (cast one)")
        if a.dtype is DType.bool:
            raise TypeRuleError(f"matmul is not defined for bool operands (torch rejects it), found {a} and {b}")
        if a.rank == 0 or b.rank == 0:
            raise TypeRuleError(f"matmul operands must have rank >= 1, found {a} and {b}")
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
        batch = broadcast_shapes(self.name, a.shape[:-2], b.shape[:-2])
        return TensorType(batch + (a.shape[-2], b.shape[-1]), a.dtype)
