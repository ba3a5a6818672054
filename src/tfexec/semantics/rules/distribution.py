"""Value rules of ``reshard`` and ``local`` for one mesh participant (evaluator spec §6)."""

import torch

from tfexec.errors import EvalError
from tfexec.ir.ops.distribution import Local, Reshard
from tfexec.ir.types import ShardLayout
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.semantics.rules.common import tensor_kernel

LOCAL_SPLIT_MESSAGE = (
    "local of a value split over the mesh ({layout}) is not modelled: the evaluator models one mesh "
    "participant (evaluator spec §6, 'Layout domain'), so a split axis has no single local view here; "
    "run the program on every participant of the mesh with tfexec.evaluate_mesh"
)


def _identity(x: torch.Tensor) -> torch.Tensor:
    return x


@value_rule(Reshard)
def _reshard(op: Reshard, args: tuple[Arg, ...]) -> Kernel:
    return tensor_kernel(_identity, args)


@value_rule(Local)
def _local(op: Local, args: tuple[Arg, ...]) -> Kernel:
    layout = args[0].layout if args else None
    if isinstance(layout, ShardLayout) and layout.splits:
        message = LOCAL_SPLIT_MESSAGE.format(layout=layout)

        def refuse(x: object) -> torch.Tensor:
            raise EvalError(message)

        return Kernel(refuse)
    return tensor_kernel(_identity, args)
