"""Normalisation: ``softmax``, ``rms_norm``, ``layer_norm`` (floating operands only).

``rms_norm`` and ``layer_norm`` normalise over trailing ``axes`` (as ``F.rms_norm`` and
``F.layer_norm`` do); an optional weight (and bias) is shaped like those axes.
"""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.ops.base import Op, Operand, TypeRuleError, normalize_axis
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.ops.reduction import reduced_axes
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class Softmax(Op):
    """``torch.softmax(x, axis)``; floating operand."""

    name: ClassVar[str] = "softmax"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    axis: int = -1

    def __post_init__(self) -> None:
        if not isinstance(self.axis, int) or isinstance(self.axis, bool):
            raise TypeError(f"softmax axis must be an int, got {self.axis!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        if not x.dtype.is_floating:
            raise TypeRuleError(f"softmax needs a floating operand, found {x} (cast it first)")
        normalize_axis(self, self.axis, x.rank)
        return TensorType(x.shape, x.dtype)


def _norm_infer(op: "RmsNorm | LayerNorm", args: tuple[Operand, ...]) -> Type:
    types = tensor_args(op.name, args)
    x = types[0]
    if not x.dtype.is_floating:
        raise TypeRuleError(f"{op.name} needs a floating operand, found {x} (cast it first)")
    axes = reduced_axes(op, op.axes, x.rank)
    if not axes or axes != tuple(range(x.rank - len(axes), x.rank)):
        raise TypeRuleError(
            f"{op.name} normalises trailing axes; axes {op.axes} of rank {x.rank} are not the last {len(axes) or 1}"
            " (transpose or reshape so they are)"
        )
    normalized = tuple(x.shape[a] for a in axes)
    for what, t in zip(("weight", "bias"), types[1:]):
        if t.shape != normalized or t.dtype != x.dtype:
            want = TensorType(normalized, x.dtype)
            raise TypeRuleError(f"{op.name} {what} must be {want} (the normalised axes), found {t}")
    return TensorType(x.shape, x.dtype)


def _check_norm_attrs(name: str, axes: object, eps: object) -> None:
    if not isinstance(axes, tuple) or not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
        raise TypeError(f"{name} axes must be a tuple of ints, got {axes!r}")
    if eps is not None and (not isinstance(eps, (int, float)) or isinstance(eps, bool)):
        raise TypeError(f"{name} eps must be a float or None, got {eps!r}")


@dataclass(frozen=True, slots=True)
class RmsNorm(Op):
    """``F.rms_norm(x, shape of axes, weight, eps)``; ``eps=None`` is torch's default: the
    machine epsilon of the dtype torch computes in (``x``'s own for f32/f64, f32's for
    f16/bf16 inputs).

    Kept stricter than torch: ``weight`` must have ``x``'s dtype (torch accepts mixed
    dtypes, with a warning for ``rms_norm``, and mixed-precision weights for
    ``layer_norm``); cast the weight first.
    """

    name: ClassVar[str] = "rms_norm"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 2
    axes: tuple[int, ...] = (-1,)
    eps: float | None = None

    def __post_init__(self) -> None:
        _check_norm_attrs("rms_norm", self.axes, self.eps)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        return _norm_infer(self, args)


@dataclass(frozen=True, slots=True)
class LayerNorm(Op):
    """``F.layer_norm(x, shape of axes, weight, bias, eps)`` with biased variance; ``weight``
    and ``bias`` have ``x``'s dtype (see ``RmsNorm``)."""

    name: ClassVar[str] = "layer_norm"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 3
    axes: tuple[int, ...] = (-1,)
    eps: float = 1e-5

    def __post_init__(self) -> None:
        _check_norm_attrs("layer_norm", self.axes, self.eps)
        if self.eps is None:
            raise TypeError("layer_norm eps must be a float")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        return _norm_infer(self, args)
