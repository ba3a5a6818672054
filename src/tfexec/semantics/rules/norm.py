"""Value rules of ``softmax``, ``rms_norm`` and ``layer_norm`` (``torch.softmax``,
``F.rms_norm``, ``F.layer_norm`` over the trailing ``axes``)."""

import torch
import torch.nn.functional as F

from tfexec.errors import EvalError
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.semantics.rules.common import axis_at, tensor_kernel
from tfexec.ir.ops.norm import LayerNorm, RmsNorm, Softmax


@value_rule(Softmax)
def _softmax(op: Softmax, args: tuple[Arg, ...]) -> Kernel:
    def softmax(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=axis_at("softmax", op.axis, x.dim()))

    return tensor_kernel(softmax, args)


def _normalized_shape(name: str, axes: tuple[int, ...], x: torch.Tensor) -> list[int]:
    norm = sorted(axis_at(name, a, x.dim()) for a in axes)
    if not norm or norm != list(range(x.dim() - len(norm), x.dim())):
        raise EvalError(f"{name} normalises trailing axes; axes {axes} are not the last axes of a rank-{x.dim()} value")
    return [x.shape[a] for a in norm]


@value_rule(RmsNorm)
def _rms_norm(op: RmsNorm, args: tuple[Arg, ...]) -> Kernel:
    def rms_norm(x: torch.Tensor, weight: torch.Tensor | None = None) -> torch.Tensor:
        return F.rms_norm(x, _normalized_shape("rms_norm", op.axes, x), weight, op.eps)

    return tensor_kernel(rms_norm, args)


@value_rule(LayerNorm)
def _layer_norm(op: LayerNorm, args: tuple[Arg, ...]) -> Kernel:
    def layer_norm(
        x: torch.Tensor, weight: torch.Tensor | None = None, bias: torch.Tensor | None = None
    ) -> torch.Tensor:
        return F.layer_norm(x, _normalized_shape("layer_norm", op.axes, x), weight, bias, op.eps)

    return tensor_kernel(layer_norm, args)
