"""Value rules of ``full`` and ``arange``: made on the run's device (torch's default when
the run has no tensor input)."""

import torch

from tfexec.ir.dims import resolve_dim
from tfexec.ir.ops.creation import Arange, Full
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.semantics.rules.common import resolve_shape


@value_rule(Full)
def _full(op: Full, args: tuple[Arg, ...]) -> Kernel:
    dtype = op.dtype.torch

    def run(ctx: EvaluateContext) -> torch.Tensor:
        return torch.full(resolve_shape(ctx, op.shape), op.value, dtype=dtype, device=ctx.device)

    return Kernel(run, needs_ctx=True)


@value_rule(Arange)
def _arange(op: Arange, args: tuple[Arg, ...]) -> Kernel:
    dtype = op.dtype.torch

    def run(ctx: EvaluateContext) -> torch.Tensor:
        return torch.arange(resolve_dim(op.extent, ctx.dim_bindings), dtype=dtype, device=ctx.device)

    return Kernel(run, needs_ctx=True)
