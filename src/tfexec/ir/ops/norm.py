"""Normalisation: ``softmax``, ``rms_norm``, ``layer_norm`` (floating operands only).

``rms_norm`` and ``layer_norm`` normalise over trailing ``axes`` (as ``F.rms_norm`` and
``F.layer_norm`` do); an optional weight (and bias) is shaped like those axes.
"""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.errors import IRConstructionError
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite, normalize_axis
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.ops.reduction import reduced_axes
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class Softmax(Op):
    """Softmax of ``x`` along ``axis``: ``exp(x)`` normalised to sum to 1.

    Type rule: ``x``'s type.
    Value rule: ``torch.softmax(x, dim=axis)`` on the run's device (a parallel kernel:
    bitwise reproducible at a fixed thread count).
    Constraints:
        (C1) ``x`` is floating.
        (C2) ``axis`` is in range for ``x``'s rank.
    Example: def example(x: f32[2, 3]): return softmax(x, axis=1)
    Refused (C1): def example(x: i64[2, 3]): return softmax(x)
    Refused (C2): def example(x: f32[2, 3]): return softmax(x, axis=-3)
    """

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
            raise TypeRuleError(f"softmax needs a floating operand, found {x} (cast it first){cite(self.name, 'C1')}")
        normalize_axis(self, self.axis, x.rank, "C2")
        return TensorType(x.shape, x.dtype)


def _norm_infer(op: "RmsNorm | LayerNorm", args: tuple[Operand, ...]) -> Type:
    types = tensor_args(op.name, args)
    x = types[0]
    if not x.dtype.is_floating:
        raise TypeRuleError(f"{op.name} needs a floating operand, found {x} (cast it first){cite(op.name, 'C1')}")
    axes = reduced_axes(op, op.axes, x.rank, "C2")
    if not axes or axes != tuple(range(x.rank - len(axes), x.rank)):
        raise TypeRuleError(
            f"{op.name} normalises trailing axes; axes {op.axes} of rank {x.rank} are not the last {len(axes) or 1}"
            f" (transpose or reshape so they are){cite(op.name, 'C3')}"
        )
    normalized = tuple(x.shape[a] for a in axes)
    for what, t in zip(("weight", "bias"), types[1:]):
        if t.shape != normalized or t.dtype != x.dtype:
            want = TensorType(normalized, x.dtype)
            raise TypeRuleError(f"{op.name} {what} must be {want} (the normalised axes), found {t}{cite(op.name, 'C4')}")
    return TensorType(x.shape, x.dtype)


def _check_norm_attrs(name: str, axes: object, eps: object) -> None:
    if not isinstance(axes, tuple) or not all(isinstance(a, int) and not isinstance(a, bool) for a in axes):
        raise TypeError(f"{name} axes must be a tuple of ints, got {axes!r}")
    if eps is not None and (not isinstance(eps, (int, float)) or isinstance(eps, bool)):
        raise TypeError(f"{name} eps must be a float or None, got {eps!r}")


@dataclass(frozen=True, slots=True)
class RmsNorm(Op):
    """RMS normalisation of ``x`` over its trailing ``axes``, scaled by an optional ``weight``.

    Type rule: ``x``'s type.
    Value rule: ``torch.nn.functional.rms_norm(x, shape of axes, weight, eps)``;
    ``eps=None`` is torch's default, the machine epsilon of the dtype torch computes in
    (``x``'s own for ``f32``/``f64``, ``f32``'s for ``f16``/``bf16``).
    Constraints:
        (C1) ``x`` is floating.
        (C2) every axis is in range for ``x``'s rank and none is named twice.
        (C3) ``axes`` are the trailing axes of ``x`` (at least one): transpose or reshape
        first to normalise others.
        (C4) ``weight`` has the shape of the normalised axes and ``x``'s dtype. Kept stricter
        than torch, which accepts a weight of another dtype (with a warning).
    Example: def example(x: f32[2, 3]): return rms_norm(x)
    Example: def example(x: f32[2, 3], w: f32[3]): return rms_norm(x, w, eps=0.5)
    Refused (C1): def example(x: i64[2, 3]): return rms_norm(x)
    Refused (C2): def example(x: f32[2, 3]): return rms_norm(x, axes=(1, 1))
    Refused (C3): def example(x: f32[2, 3]): return rms_norm(x, axes=(0,))
    Refused (C4): def example(x: f32[2, 3], w: f16[3]): return rms_norm(x, w)
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
    """Layer normalisation of ``x`` over its trailing ``axes`` (biased variance).

    An optional ``weight`` scales and an optional ``bias`` shifts the result; operands are
    positional, so a bias needs a weight.

    Type rule: ``x``'s type.
    Value rule: ``torch.nn.functional.layer_norm(x, shape of axes, weight, bias, eps)`` (a
    parallel kernel: bitwise reproducible at a fixed thread count).
    Constraints:
        (C1) ``x`` is floating.
        (C2) every axis is in range for ``x``'s rank and none is named twice.
        (C3) ``axes`` are the trailing axes of ``x`` (at least one).
        (C4) ``weight`` and ``bias`` have the shape of the normalised axes and ``x``'s dtype.
        Kept stricter than torch, which accepts mixed-precision weights.
    Example: def example(x: f32[2, 3]): return layer_norm(x)
    Example: def example(x: f32[2, 3], w: f32[3], b: f32[3]): return layer_norm(x, w, b, axes=(-1,))
    Refused (C1): def example(x: i64[2, 3]): return layer_norm(x)
    Refused (C2): def example(x: f32[2, 3]): return layer_norm(x, axes=(2,))
    Refused (C3): def example(x: f32[2, 3]): return layer_norm(x, axes=())
    Refused (C4): def example(x: f32[2, 3], w: f32[3], b: f32[2]): return layer_norm(x, w, b)
    """

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


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def softmax(x: ExprLike, *, axis: int = -1, span: Span | None = None) -> Call:
    """``torch.softmax(x, axis)``."""
    return apply(Softmax(axis), x, span=span)


def rms_norm(
    x: ExprLike, weight: ExprLike | None = None, *, axes: tuple[int, ...] = (-1,), eps: float | None = None,
    span: Span | None = None,
) -> Call:
    """``F.rms_norm`` over the trailing ``axes``; ``eps=None`` is the dtype's machine epsilon."""
    operands = (x,) if weight is None else (x, weight)
    return apply(RmsNorm(axes, eps), *operands, span=span)


def layer_norm(
    x: ExprLike, weight: ExprLike | None = None, bias: ExprLike | None = None, *, axes: tuple[int, ...] = (-1,),
    eps: float = 1e-5, span: Span | None = None,
) -> Call:
    """``F.layer_norm`` over the trailing ``axes`` (biased variance); a bias needs a weight."""
    op = LayerNorm(axes, eps)
    if bias is not None and weight is None:
        raise IRConstructionError("layer_norm: a bias needs a weight (pass full(shape=..., value=1.0) as the weight)")
    operands = tuple(o for o in (x, weight, bias) if o is not None)
    return apply(op, *operands, span=span)
