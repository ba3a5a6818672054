"""Value rules of ``matmul`` (``torch.matmul``) and ``linear`` (``torch.nn.functional.linear``,
after the op's type rule has checked the operands)."""

import torch
import torch.nn.functional as F

from tfexec.ir.ops.linalg import Linear, MatMul
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.semantics.rules.common import tensor_kernel
from tfexec.semantics.rules.typerule import TypeRule


@value_rule(MatMul)
def _matmul(op: MatMul, args: tuple[Arg, ...]) -> Kernel:
    return tensor_kernel(torch.matmul, args)


@value_rule(Linear)
def _linear(op: Linear, args: tuple[Arg, ...]) -> Kernel:
    rule = TypeRule(op)

    def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
        # the type rule refuses a weak scalar operand (rank 0), so every operand is a tensor
        rule.check(*((x, weight) if bias is None else (x, weight, bias)))
        return F.linear(x, weight, bias)

    return Kernel(linear)
