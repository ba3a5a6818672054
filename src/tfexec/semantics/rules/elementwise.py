"""Value rules of the elementwise ops: torch's functions by name, torch's promotion.

A weak scalar operand is passed to torch as a Python scalar wherever torch accepts one
in that position, so promotion and rounding are exactly torch's; where it does not
(``maximum``, logical ops, a scalar left of ``div``), the scalar becomes a rank-0 tensor
of the dtype torch would promote it to.
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F

from tfexec.ir.ops import elementwise as ew
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.semantics.rules.common import Operand, tensor_kernel, tensorize, weak_tensor

TensorFn = Callable[..., torch.Tensor]


def _swap(fn: TensorFn) -> TensorFn:
    return lambda a, b: fn(b, a)


_BINARY: dict[type[ew.BinaryOp], tuple[TensorFn, bool, TensorFn | None]] = {
    # op class: (torch function, takes a Python scalar on the right, form for a scalar on the left)
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
    """``fn`` on tensors; a weak scalar reaches torch as a Python scalar where torch takes one
    in that position, else as a rank-0 tensor of the dtype torch promotes it to."""
    on_tensors = Kernel(fn)
    lhs_scalar = Kernel(scalar_lhs) if scalar_lhs is not None else None

    def promoted(ctx: EvaluateContext, a: Operand, b: Operand) -> torch.Tensor:
        return fn(*tensorize(ctx, a, b))

    with_promotion = Kernel(promoted, needs_ctx=True)

    @value_rule(cls)
    def _rule(op: ew.BinaryOp, args: tuple[Arg, ...]) -> Kernel:
        a, b = args
        if not a.weak and (not b.weak or scalar_rhs):
            return on_tensors
        if a.weak and not b.weak and lhs_scalar is not None:
            return lhs_scalar
        return with_promotion


for _cls, (_fn, _rhs, _lhs) in _BINARY.items():
    _register_binary(_cls, _fn, _rhs, _lhs)


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
    @value_rule(cls)
    def _rule(op: ew.UnaryOp, args: tuple[Arg, ...]) -> Kernel:
        return tensor_kernel(fn, args)


for _ucls, _ufn in _UNARY.items():
    _register_unary(_ucls, _ufn)


@value_rule(ew.Gelu)
def _gelu(op: ew.Gelu, args: tuple[Arg, ...]) -> Kernel:
    approximate = op.approximate
    return tensor_kernel(lambda x: F.gelu(x, approximate=approximate), args)


@value_rule(ew.Cast)
def _cast(op: ew.Cast, args: tuple[Arg, ...]) -> Kernel:
    dtype = op.dtype.torch
    return tensor_kernel(lambda x: x.to(dtype), args)


@value_rule(ew.Where)
def _where(op: ew.Where, args: tuple[Arg, ...]) -> Kernel:
    if not any(a.weak for a in args):
        return Kernel(torch.where)

    def run(ctx: EvaluateContext, cond: Operand, a: Operand, b: Operand) -> torch.Tensor:
        c = cond if isinstance(cond, torch.Tensor) else weak_tensor(cond, ctx.device)
        if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor):
            a, b = tensorize(ctx, a, b)
        return torch.where(c, a, b)

    return Kernel(run, needs_ctx=True)
