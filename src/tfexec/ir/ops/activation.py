"""Activations: ``elu``, ``selu``, ``celu``, ``leaky_relu``, ``softplus``, ``hardsigmoid``,
``hardswish``, ``mish``, ``softsign`` (floating operands only, as torch's kernels take them).

Each is ``torch.nn.functional``'s function of the same name, its parameters static
attributes with torch's defaults.
"""

import math
from dataclasses import dataclass
from typing import ClassVar

import torch.nn.functional as F

from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply, unary_builder
from tfexec.ir.ops.attrs import check_number
from tfexec.ir.ops.base import Op, Operand, Reference, TypeRuleError, cite
from tfexec.ir.ops.elementwise import UnaryKind, UnaryOp
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type


@dataclass(frozen=True, slots=True)
class ActivationOp(UnaryOp):
    """Base of the activations: floating operands, ``torch.nn.functional`` by name.

    Type rule: the shape and dtype of ``x``.
    Value rule: ``torch.nn.functional.{op}(x)`` on the run's device, with the op's
    attributes as its keyword arguments.
    Constraints:
        (C1) ``x`` is floating (torch's kernels refuse integers and ``b1``).
    Example: def example(x: f32[2, 3]): return {op}(x)
    Refused (C1): def example(x: i64[3]): return {op}(x)
    """

    kind: ClassVar[UnaryKind] = "float_only"


def _finite(owner: str, field: str, value: object) -> None:
    check_number(owner, field, value)
    assert isinstance(value, (int, float))
    if not math.isfinite(value):
        raise TypeError(f"{owner} {field} must be finite, got {value!r}")


@dataclass(frozen=True, slots=True)
class Elu(ActivationOp):
    """Elementwise ELU: ``x`` where positive, else ``alpha * (exp(x) - 1)``.

    Example: def example(x: f32[2, 3]): return elu(x, alpha=0.5)
    """

    name: ClassVar[str] = "elu"
    reference: ClassVar[Reference] = F.elu
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    alpha: float = 1.0

    def __post_init__(self) -> None:
        _finite("elu", "alpha", self.alpha)


@dataclass(frozen=True, slots=True)
class Selu(ActivationOp):
    """Elementwise SELU: ``scale * elu(x, alpha)`` with torch's fixed ``alpha`` ≈ 1.6733 and ``scale`` ≈ 1.0507."""

    name: ClassVar[str] = "selu"
    reference: ClassVar[Reference] = F.selu
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class Celu(ActivationOp):
    """Elementwise CELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Example: def example(x: f32[2, 3]): return celu(x, alpha=2.0)
    """

    name: ClassVar[str] = "celu"
    reference: ClassVar[Reference] = F.celu
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    alpha: float = 1.0

    def __post_init__(self) -> None:
        _finite("celu", "alpha", self.alpha)
        if self.alpha == 0:
            raise TypeError("celu alpha must not be 0 (torch divides by it)")


@dataclass(frozen=True, slots=True)
class LeakyRelu(ActivationOp):
    """Elementwise leaky ReLU: ``x`` where positive, else ``negative_slope * x``.

    Example: def example(x: f32[2, 3]): return leaky_relu(x, negative_slope=0.2)
    """

    name: ClassVar[str] = "leaky_relu"
    reference: ClassVar[Reference] = F.leaky_relu
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    negative_slope: float = 0.01

    def __post_init__(self) -> None:
        _finite("leaky_relu", "negative_slope", self.negative_slope)


@dataclass(frozen=True, slots=True)
class Softplus(ActivationOp):
    """Elementwise softplus ``log(1 + exp(beta * x)) / beta``, linear (``x``) where ``beta * x > threshold``.

    Example: def example(x: f32[2, 3]): return softplus(x, beta=2.0, threshold=1.0)
    """

    name: ClassVar[str] = "softplus"
    reference: ClassVar[Reference] = F.softplus
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    beta: float = 1.0
    threshold: float = 20.0

    def __post_init__(self) -> None:
        _finite("softplus", "beta", self.beta)
        check_number("softplus", "threshold", self.threshold)
        if self.beta == 0:
            raise TypeError("softplus beta must not be 0 (torch divides by it)")


@dataclass(frozen=True, slots=True)
class Hardsigmoid(ActivationOp):
    """Elementwise hard sigmoid: ``clamp(x / 6 + 1 / 2, 0, 1)``."""

    name: ClassVar[str] = "hardsigmoid"
    reference: ClassVar[Reference] = F.hardsigmoid
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class Hardswish(ActivationOp):
    """Elementwise hard swish: ``x * hardsigmoid(x)``."""

    name: ClassVar[str] = "hardswish"
    reference: ClassVar[Reference] = F.hardswish
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class Mish(ActivationOp):
    """Elementwise Mish: ``x * tanh(softplus(x))``."""

    name: ClassVar[str] = "mish"
    reference: ClassVar[Reference] = F.mish
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class Softsign(ActivationOp):
    """Elementwise softsign: ``x / (1 + abs(x))``.

    Type rule: the shape of ``x``; its dtype when floating, else torch's default float
    (integer input gives ``f32``: torch computes it with a true division).
    Value rule: ``torch.nn.functional.softsign(x)`` on the run's device.
    Constraints:
        (C1) ``x`` is not ``b1`` (torch's ``abs`` refuses it).
    Example: def example(x: f32[2, 3]): return softsign(x)
    Example: def example(x: i64[4]): return softsign(x)
    Refused (C1): def example(x: b1[3]): return softsign(x)
    """

    name: ClassVar[str] = "softsign"
    reference: ClassVar[Reference] = F.softsign
    kind: ClassVar[UnaryKind] = "to_float"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1

    def infer(self, args: tuple[Operand, ...]) -> Type:
        if args and isinstance(args[0].type, TensorType) and args[0].type.dtype is DType.bool:
            raise TypeRuleError(f"softsign is not defined for bool (torch rejects it), found {args[0].type}; cast "
                                f"first{cite(self.name, 'C1')}")
        return UnaryOp.infer(self, args)


ACTIVATION_OPS: tuple[type[Op], ...] = (Elu, Selu, Celu, LeakyRelu, Softplus, Hardsigmoid, Hardswish, Mish, Softsign)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def elu(x: ExprLike, *, alpha: float = 1.0, span: Span | None = None) -> Call:
    """``F.elu(x, alpha)``; floating input only."""
    return apply(Elu(alpha), x, span=span)


def selu(x: ExprLike, *, span: Span | None = None) -> Call:
    """``F.selu``; floating input only."""
    return apply(Selu(), x, span=span)


def celu(x: ExprLike, *, alpha: float = 1.0, span: Span | None = None) -> Call:
    """``F.celu(x, alpha)``; floating input only."""
    return apply(Celu(alpha), x, span=span)


def leaky_relu(x: ExprLike, *, negative_slope: float = 0.01, span: Span | None = None) -> Call:
    """``F.leaky_relu(x, negative_slope)``; floating input only."""
    return apply(LeakyRelu(negative_slope), x, span=span)


def softplus(x: ExprLike, *, beta: float = 1.0, threshold: float = 20.0, span: Span | None = None) -> Call:
    """``F.softplus(x, beta, threshold)``; floating input only."""
    return apply(Softplus(beta, threshold), x, span=span)


def hardsigmoid(x: ExprLike, *, span: Span | None = None) -> Call:
    """``F.hardsigmoid``; floating input only."""
    return apply(Hardsigmoid(), x, span=span)


def hardswish(x: ExprLike, *, span: Span | None = None) -> Call:
    """``F.hardswish``; floating input only."""
    return apply(Hardswish(), x, span=span)


def mish(x: ExprLike, *, span: Span | None = None) -> Call:
    """``F.mish``; floating input only."""
    return apply(Mish(), x, span=span)


softsign = unary_builder(Softsign, "``F.softsign``: ``x / (1 + abs(x))``; floating input only.")
