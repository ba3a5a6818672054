"""Value rules of the elementwise ops: torch's functions by name, torch's promotion.

A weak scalar operand is passed to torch as a Python scalar wherever torch accepts one
in that position, so promotion and rounding are exactly torch's; where it does not
(``maximum``, logical ops, a scalar left of ``div``), the scalar becomes a rank-0 tensor
of the dtype torch would promote it to.
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F

from tfexec.evaluator.context import EvaluateContext
from tfexec.evaluator.handlers.common import Arg, tensorize, weak_tensor
from tfexec.evaluator.registry import Kernel, Layouts, value_rule
from tfexec.ir.ops import elementwise as ew

TensorFn = Callable[..., torch.Tensor]


def _binary(fn: TensorFn, scalar_rhs: bool, scalar_lhs: TensorFn | None) -> Kernel:
    """A binary kernel: ``fn`` on tensors, with torch's scalar forms where they exist."""

    def run(ctx: EvaluateContext, a: Arg, b: Arg) -> torch.Tensor:
        if isinstance(a, torch.Tensor):
            if scalar_rhs or isinstance(b, torch.Tensor):
                return fn(a, b)
        elif isinstance(b, torch.Tensor) and scalar_lhs is not None:
            return scalar_lhs(a, b)
        return fn(*tensorize(ctx, a, b))

    return Kernel(run, needs_ctx=True, tensor_fn=fn)


def _swap(fn: TensorFn) -> TensorFn:
    return lambda a, b: fn(b, a)


_BINARY: dict[type[ew.BinaryOp], tuple[TensorFn, bool, TensorFn | None]] = {
    ew.Add: (torch.add, True, _swap(torch.add)),
    ew.Sub: (torch.sub, True, _swap(torch.rsub)),
    ew.Mul: (torch.mul, True, _swap(torch.mul)),
    ew.Div: (torch.div, True, None),
    ew.Pow: (torch.pow, True, torch.pow),
    ew.Maximum: (torch.maximum, False, None),
    ew.Minimum: (torch.minimum, False, None),
    ew.Eq: (torch.eq, True, _swap(torch.eq)),
    ew.Ne: (torch.ne, True, _swap(torch.ne)),
    ew.Lt: (torch.lt, True, _swap(torch.gt)),
    ew.Le: (torch.le, True, _swap(torch.ge)),
    ew.Gt: (torch.gt, True, _swap(torch.lt)),
    ew.Ge: (torch.ge, True, _swap(torch.le)),
    ew.LogicalAnd: (torch.logical_and, False, None),
    ew.LogicalOr: (torch.logical_or, False, None),
}


def _register_binary(cls: type[ew.BinaryOp], fn: TensorFn, scalar_rhs: bool, scalar_lhs: TensorFn | None) -> None:
    kernel = _binary(fn, scalar_rhs, scalar_lhs)

    @value_rule(cls)
    def _rule(op: ew.BinaryOp, layouts: Layouts) -> Kernel:
        return kernel


for _cls, (_fn, _rhs, _lhs) in _BINARY.items():
    _register_binary(_cls, _fn, _rhs, _lhs)


def _unary(fn: TensorFn) -> Kernel:
    def run(ctx: EvaluateContext, x: Arg) -> torch.Tensor:
        return fn(x if isinstance(x, torch.Tensor) else weak_tensor(x, ctx.device))

    return Kernel(run, needs_ctx=True, tensor_fn=fn)


_UNARY: dict[type[ew.UnaryOp], TensorFn] = {
    ew.Neg: torch.neg,
    ew.Abs: torch.abs,
    ew.Exp: torch.exp,
    ew.Log: torch.log,
    ew.Sqrt: torch.sqrt,
    ew.Rsqrt: torch.rsqrt,
    ew.Tanh: torch.tanh,
    ew.Sigmoid: torch.sigmoid,
    ew.Relu: torch.relu,
    ew.Silu: F.silu,
    ew.Erf: torch.erf,
    ew.Sin: torch.sin,
    ew.Cos: torch.cos,
}


def _register_unary(cls: type[ew.UnaryOp], fn: TensorFn) -> None:
    kernel = _unary(fn)

    @value_rule(cls)
    def _rule(op: ew.UnaryOp, layouts: Layouts) -> Kernel:
        return kernel


for _ucls, _ufn in _UNARY.items():
    _register_unary(_ucls, _ufn)


@value_rule(ew.Gelu)
def _gelu(op: ew.Gelu, layouts: Layouts) -> Kernel:
    approximate = op.approximate
    return _unary(lambda x: F.gelu(x, approximate=approximate))


@value_rule(ew.Cast)
def _cast(op: ew.Cast, layouts: Layouts) -> Kernel:
    dtype = op.dtype.torch
    return _unary(lambda x: x.to(dtype))


@value_rule(ew.Where)
def _where(op: ew.Where, layouts: Layouts) -> Kernel:
    def run(ctx: EvaluateContext, cond: Arg, a: Arg, b: Arg) -> torch.Tensor:
        c = cond if isinstance(cond, torch.Tensor) else weak_tensor(cond, ctx.device)
        if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):
            a, b = tensorize(ctx, a, b)
        return torch.where(c, a, b)

    return Kernel(run, needs_ctx=True, tensor_fn=torch.where)
