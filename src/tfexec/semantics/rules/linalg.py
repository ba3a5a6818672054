"""Value rule of ``matmul``: ``torch.matmul``."""

import torch

from tfexec.ir.ops.linalg import MatMul
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.semantics.rules.common import tensor_kernel


@value_rule(MatMul)
def _matmul(op: MatMul, args: tuple[Arg, ...]) -> Kernel:
    return tensor_kernel(torch.matmul, args)
