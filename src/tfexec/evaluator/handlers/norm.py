"""Value rules of ``softmax``, ``rms_norm`` and ``layer_norm`` (``torch.softmax``,
``F.rms_norm``, ``F.layer_norm`` over the trailing ``axes``)."""

import torch
import torch.nn.functional as F

from tfexec.errors import EvalError
from tfexec.evaluator.context import EvaluateContext
from tfexec.evaluator.handlers.common import as_tensor, axis_at
from tfexec.evaluator.registry import Kernel, Layouts, value_rule
from tfexec.ir.ops.norm import LayerNorm, RmsNorm, Softmax


@value_rule(Softmax)
def _softmax(op: Softmax, layouts: Layouts) -> Kernel:
    def softmax(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=axis_at("softmax", op.axis, x.dim()))

    def run(ctx: EvaluateContext, x: object) -> torch.Tensor:
        return softmax(as_tensor(ctx, x))

    return Kernel(run, needs_ctx=True, tensor_fn=softmax)


def _normalized_shape(name: str, axes: tuple[int, ...], x: torch.Tensor) -> list[int]:
    norm = sorted(axis_at(name, a, x.dim()) for a in axes)
    if not norm or norm != list(range(x.dim() - len(norm), x.dim())):
        raise EvalError(f"{name} normalises trailing axes; axes {axes} are not the last axes of a rank-{x.dim()} value")
    return [x.shape[a] for a in norm]


@value_rule(RmsNorm)
def _rms_norm(op: RmsNorm, layouts: Layouts) -> Kernel:
    def rms_norm(x: torch.Tensor, weight: torch.Tensor | None = None) -> torch.Tensor:
        return F.rms_norm(x, _normalized_shape("rms_norm", op.axes, x), weight, op.eps)

    def run(ctx: EvaluateContext, *args: object) -> torch.Tensor:
        return rms_norm(*(as_tensor(ctx, a) for a in args))

    return Kernel(run, needs_ctx=True, tensor_fn=rms_norm)


@value_rule(LayerNorm)
def _layer_norm(op: LayerNorm, layouts: Layouts) -> Kernel:
    def layer_norm(
        x: torch.Tensor, weight: torch.Tensor | None = None, bias: torch.Tensor | None = None
    ) -> torch.Tensor:
        return F.layer_norm(x, _normalized_shape("layer_norm", op.axes, x), weight, bias, op.eps)

    def run(ctx: EvaluateContext, *args: object) -> torch.Tensor:
        return layer_norm(*(as_tensor(ctx, a) for a in args))

    return Kernel(run, needs_ctx=True, tensor_fn=layer_norm)
