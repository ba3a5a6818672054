"""Value rule of ``matmul``: ``torch.matmul``."""

import torch

from tfexec.evaluator.context import EvaluateContext
from tfexec.evaluator.handlers.common import Arg, weak_tensor
from tfexec.evaluator.registry import Kernel, Layouts, value_rule
from tfexec.ir.ops.linalg import MatMul


@value_rule(MatMul)
def _matmul(op: MatMul, layouts: Layouts) -> Kernel:
    def run(ctx: EvaluateContext, a: Arg, b: Arg) -> torch.Tensor:
        a_t = a if isinstance(a, torch.Tensor) else weak_tensor(a, ctx.device)
        b_t = b if isinstance(b, torch.Tensor) else weak_tensor(b, ctx.device)
        return torch.matmul(a_t, b_t)

    return Kernel(run, needs_ctx=True, tensor_fn=torch.matmul)
