"""Channel normalisation: ``batch_norm`` (evaluation mode) and ``group_norm``.

Both read ``x`` as ``(N, C, *rest)`` and take per-channel parameters of shape ``(C,)``; an
optional weight scales and an optional bias shifts each channel (a bias needs a weight,
as in ``layer_norm``).
"""

import math
from dataclasses import dataclass
from typing import ClassVar

from tfexec.errors import IRConstructionError
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.attrs import check_int, check_number
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


def _eps(owner: str, eps: object) -> None:
    check_number(owner, "eps", eps)
    assert isinstance(eps, (int, float))
    if not math.isfinite(eps) or eps < 0:
        raise TypeError(f"{owner} eps must be a finite number >= 0, got {eps!r}")


def _channels(op: Op, x: TensorType, params: list[TensorType], what: tuple[str, ...], label: str) -> None:
    """Each per-channel parameter has shape ``(C,)`` and ``x``'s dtype."""
    for name, p in zip(what, params):
        if p.shape != (x.shape[1],) or p.dtype is not x.dtype:
            raise TypeRuleError(
                f"{op.name} {name} {p} must have one element per channel of {x}, in its dtype{cite(op.name, label)}"
            )


def _floating_nc(op: Op, x: TensorType, label: str) -> None:
    if not x.dtype.is_floating or x.rank < 2:
        raise TypeRuleError(f"{op.name} needs a floating x of shape (N, C, ...), found {x}{cite(op.name, label)}")


@dataclass(frozen=True, slots=True)
class BatchNorm(Op):
    """Batch norm in evaluation mode: ``(x - mean) / sqrt(var + eps) * weight + bias`` per channel (axis 1).

    ``mean`` and ``var`` are the running statistics the model holds; nothing is updated.

    Type rule: ``x``'s type.
    Value rule: ``torch.nn.functional.batch_norm(x, mean, var, weight, bias,
    training=False, eps=eps)`` on the run's device.
    Constraints:
        (C1) ``x`` is floating with rank at least 2 (``N, C, ...``).
        (C2) ``mean``, ``var``, ``weight`` and ``bias`` have shape ``(C,)`` and ``x``'s dtype
        (kept stricter than torch, which takes other dtypes for the statistics).
    Example: def example(x: f32[2, 2, 2], m: f32[2], v: f32[2]): return batch_norm(x, m, add(v, 3.0), eps=0.001)
    Refused (C1): def example(x: f32[2], m: f32[2], v: f32[2]): return batch_norm(x, m, v)
    Refused (C2): def example(x: f32[2, 3], m: f32[2], v: f32[3]): return batch_norm(x, m, v)
    """

    name: ClassVar[str] = "batch_norm"
    min_args: ClassVar[int] = 3
    max_args: ClassVar[int | None] = 5
    eps: float = 1e-5

    def __post_init__(self) -> None:
        _eps("batch_norm", self.eps)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x, *params = tensor_args(self.name, args)
        _floating_nc(self, x, "C1")
        _channels(self, x, params, ("mean", "var", "weight", "bias"), "C2")
        return TensorType(x.shape, x.dtype)


@dataclass(frozen=True, slots=True)
class GroupNorm(Op):
    """Group norm: the channels (axis 1) of each sample split into ``groups``, each normalised to mean 0 and variance 1.

    Type rule: ``x``'s type.
    Value rule: ``torch.nn.functional.group_norm(x, groups, weight, bias, eps)`` on the
    run's device (biased variance).
    Constraints:
        (C1) ``x`` is floating with rank at least 2 (``N, C, ...``).
        (C2) ``groups`` divides the channel count ``C`` (checked at run time when it is
        symbolic).
        (C3) ``weight`` and ``bias`` have shape ``(C,)`` and ``x``'s dtype.
    Example: def example(x: f32[1, 4, 2]): return group_norm(x, groups=2)
    Refused (C1): def example(x: i32[1, 4]): return group_norm(x, groups=2)
    Refused (C2): def example(x: f32[1, 3, 2]): return group_norm(x, groups=2)
    Refused (C3): def example(x: f32[1, 4, 2], w: f32[2]): return group_norm(x, w, groups=2)
    """

    name: ClassVar[str] = "group_norm"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 3
    groups: int = 1
    eps: float = 1e-5

    def __post_init__(self) -> None:
        check_int("group_norm", "groups", self.groups, minimum=1)
        _eps("group_norm", self.eps)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x, *params = tensor_args(self.name, args)
        _floating_nc(self, x, "C1")
        channels = x.shape[1]
        if isinstance(channels, int) and channels % self.groups:
            raise TypeRuleError(f"group_norm groups={self.groups} does not divide the {channels} channels of {x}{cite(self.name, 'C2')}")
        _channels(self, x, params, ("weight", "bias"), "C3")
        return TensorType(x.shape, x.dtype)


CHANNEL_NORM_OPS: tuple[type[Op], ...] = (BatchNorm, GroupNorm)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def batch_norm(
    x: ExprLike, mean: ExprLike, var: ExprLike, weight: ExprLike | None = None, bias: ExprLike | None = None, *,
    eps: float = 1e-5, span: Span | None = None,
) -> Call:
    """``F.batch_norm(x, mean, var, weight, bias, training=False, eps=eps)``; a bias needs a weight."""
    if bias is not None and weight is None:
        raise IRConstructionError("batch_norm: a bias needs a weight (pass full(shape=(C,), value=1.0) as the weight)")
    operands = tuple(o for o in (x, mean, var, weight, bias) if o is not None)
    return apply(BatchNorm(eps), *operands, span=span)


def group_norm(
    x: ExprLike, weight: ExprLike | None = None, bias: ExprLike | None = None, *, groups: int, eps: float = 1e-5,
    span: Span | None = None,
) -> Call:
    """``F.group_norm(x, groups, weight, bias, eps)``; a bias needs a weight."""
    if bias is not None and weight is None:
        raise IRConstructionError("group_norm: a bias needs a weight (pass full(shape=(C,), value=1.0) as the weight)")
    operands = tuple(o for o in (x, weight, bias) if o is not None)
    return apply(GroupNorm(groups, eps), *operands, span=span)
