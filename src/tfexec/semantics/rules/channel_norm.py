"""Value rules of ``batch_norm`` (evaluation mode) and ``group_norm``:
``torch.nn.functional.batch_norm`` and ``group_norm``, after the op's type rule has checked
the operands."""

import torch
import torch.nn.functional as F

from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import as_tensor
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.ir.ops.channel_norm import BatchNorm, GroupNorm


@value_rule(BatchNorm)
def _batch_norm(op: BatchNorm, args: tuple[Arg, ...]) -> Kernel:
    rule, eps = TypeRule(op), float(op.eps)

    def batch_norm(ctx: EvaluateContext, x: object, mean: object, var: object, *affine: object) -> torch.Tensor:
        rule.check(x, mean, var, *affine)
        weight, bias = (list(as_tensor(ctx, a) for a in affine) + [None, None])[:2]
        return F.batch_norm(
            as_tensor(ctx, x), as_tensor(ctx, mean), as_tensor(ctx, var), weight, bias, training=False, eps=eps
        )

    return Kernel(batch_norm, needs_ctx=True)


@value_rule(GroupNorm)
def _group_norm(op: GroupNorm, args: tuple[Arg, ...]) -> Kernel:
    rule, eps = TypeRule(op), float(op.eps)

    def group_norm(ctx: EvaluateContext, x: object, *affine: object) -> torch.Tensor:
        rule.check(x, *affine)
        weight, bias = (list(as_tensor(ctx, a) for a in affine) + [None, None])[:2]
        return F.group_norm(as_tensor(ctx, x), op.groups, weight, bias, eps)

    return Kernel(group_norm, needs_ctx=True)
