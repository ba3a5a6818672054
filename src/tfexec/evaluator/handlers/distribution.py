"""Value rules of ``reshard`` and ``local`` for one mesh participant (evaluator spec §6)."""

import torch

from tfexec.errors import EvalError
from tfexec.evaluator.context import EvaluateContext
from tfexec.evaluator.handlers.common import as_tensor
from tfexec.evaluator.registry import Kernel, Layouts, value_rule
from tfexec.ir.ops.distribution import Local, Reshard
from tfexec.ir.types import ShardLayout

LOCAL_SPLIT_MESSAGE = (
    "local of a value split over the mesh ({layout}) is not modelled: the evaluator models one mesh "
    "participant (evaluator spec §6, 'Layout domain'), so a split axis has no single local view here; "
    "run the program on every participant of the mesh with tfexec.evaluate_mesh"
)


def _identity(x: torch.Tensor) -> torch.Tensor:
    return x


def _run_identity(ctx: EvaluateContext, x: object) -> torch.Tensor:
    return as_tensor(ctx, x)


_IDENTITY = Kernel(_run_identity, needs_ctx=True, tensor_fn=_identity)


@value_rule(Reshard)
def _reshard(op: Reshard, layouts: Layouts) -> Kernel:
    return _IDENTITY


@value_rule(Local)
def _local(op: Local, layouts: Layouts) -> Kernel:
    layout = layouts[0] if layouts else None
    if isinstance(layout, ShardLayout) and layout.splits:
        message = LOCAL_SPLIT_MESSAGE.format(layout=layout)

        def refuse(x: object) -> torch.Tensor:
            raise EvalError(message)

        return Kernel(refuse, tensor_fn=refuse)
    return _IDENTITY
