"""Value rules of the activations: ``torch.nn.functional``'s functions by name, with the
op's attributes as their keyword arguments, after the op's type rule has checked ``x``."""

from collections.abc import Callable

import torch
import torch.nn.functional as F

from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.rules.common import as_tensor
from tfexec.semantics.rules.typerule import TypeRule
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.ir.ops import activation as act


def _kernel(op: act.ActivationOp, fn: Callable[[torch.Tensor], torch.Tensor]) -> Kernel:
    rule = TypeRule(op)

    def activation(ctx: EvaluateContext, x: object) -> torch.Tensor:
        rule.check(x)
        return fn(as_tensor(ctx, x))

    activation.__name__ = activation.__qualname__ = op.name  # named after its torch function
    return Kernel(activation, needs_ctx=True)


@value_rule(act.Elu)
def _elu(op: act.Elu, args: tuple[Arg, ...]) -> Kernel:
    alpha = float(op.alpha)
    return _kernel(op, lambda x: F.elu(x, alpha=alpha))


@value_rule(act.Selu)
def _selu(op: act.Selu, args: tuple[Arg, ...]) -> Kernel:
    return _kernel(op, F.selu)


@value_rule(act.Celu)
def _celu(op: act.Celu, args: tuple[Arg, ...]) -> Kernel:
    alpha = float(op.alpha)
    return _kernel(op, lambda x: F.celu(x, alpha=alpha))


@value_rule(act.LeakyRelu)
def _leaky_relu(op: act.LeakyRelu, args: tuple[Arg, ...]) -> Kernel:
    slope = float(op.negative_slope)
    return _kernel(op, lambda x: F.leaky_relu(x, negative_slope=slope))


@value_rule(act.Softplus)
def _softplus(op: act.Softplus, args: tuple[Arg, ...]) -> Kernel:
    beta, threshold = float(op.beta), float(op.threshold)
    return _kernel(op, lambda x: F.softplus(x, beta=beta, threshold=threshold))


@value_rule(act.Hardsigmoid)
def _hardsigmoid(op: act.Hardsigmoid, args: tuple[Arg, ...]) -> Kernel:
    return _kernel(op, F.hardsigmoid)


@value_rule(act.Hardswish)
def _hardswish(op: act.Hardswish, args: tuple[Arg, ...]) -> Kernel:
    return _kernel(op, F.hardswish)


@value_rule(act.Mish)
def _mish(op: act.Mish, args: tuple[Arg, ...]) -> Kernel:
    return _kernel(op, F.mish)


@value_rule(act.Softsign)
def _softsign(op: act.Softsign, args: tuple[Arg, ...]) -> Kernel:
    return _kernel(op, F.softsign)
