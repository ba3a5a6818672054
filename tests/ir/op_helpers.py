"""Helpers shared by the type-rule tests of the op catalogue (tests/ir/test_ops_*.py) and
the value-rule tests (tests/evaluator/test_value_rules.py): inferring the type of one op
call, comparing a rule's outcome with what torch produces, and the torch reference of
each elementwise op by name.

Import it as ``from ir.op_helpers import ...`` (``tests/`` is on ``sys.path``: pytest puts
the rootdir conftest's folder there, and ``tests/ir`` is a package)."""

import operator
from collections.abc import Callable

import torch
import torch.nn.functional as F

from tfexec import DType, Expr, Function, TensorType, TupleType, TypeInferenceError, Var, describe_expr, infer_types
from tfexec.ir.types import Type

DTYPES = list(DType)
Outcome = tuple[DType, tuple[int, ...]] | str
"""A rule's or torch's verdict: the result dtype and concrete shape, or ``"error"``."""


def checked_type(body: Expr, *params: Var) -> Type:
    """Infer the types of ``Function("f", params, body)`` and return ``body``'s type; a
    ``TypeInferenceError`` must start with the description of ``body`` (it is re-raised)."""
    try:
        infer_types(Function("f", params, body))
    except TypeInferenceError as err:
        assert str(err).startswith(describe_expr(body) + ": "), str(err)
        raise
    assert body.checked_type is not None
    return body.checked_type


def infer_call(call: Expr, *params: Var) -> TensorType:
    """The tensor type inferred for ``call`` in a function of ``params``."""
    t = checked_type(call, *params)
    assert isinstance(t, TensorType)
    return t


def infer(build: Callable[..., Expr], *operands: object) -> Type:
    """The inferred type of ``build(...)``: one parameter per ``TensorType``/``TupleType``
    operand, other operands passed as they are."""
    params = [Var(f"x{i}", t) for i, t in enumerate(operands) if isinstance(t, (TensorType, TupleType))]
    it = iter(params)
    args = [next(it) if isinstance(t, (TensorType, TupleType)) else t for t in operands]
    return checked_type(build(*args), *params)


def rule_outcome(build: Callable[..., Expr], *operands: object) -> Outcome:
    """What the type rule says of ``build(*operands)`` (see ``infer``)."""
    try:
        t = infer(build, *operands)
    except TypeInferenceError:
        return "error"
    assert isinstance(t, TensorType)
    return t.dtype, tuple(d for d in t.shape if isinstance(d, int))


def torch_outcome(
    compute: Callable[[], torch.Tensor],
    errors: tuple[type[Exception], ...] = (RuntimeError, TypeError, IndexError),
) -> Outcome:
    """What torch says: the dtype and shape ``compute()`` gives, or ``"error"`` where it
    raises one of ``errors``."""
    try:
        r = compute()
    except errors:
        return "error"
    return DType.from_torch(r.dtype), tuple(r.shape)


def ones(shape: tuple[int, ...], dtype: DType) -> torch.Tensor:
    return torch.ones(shape, dtype=dtype.torch)


# name -> (torch function, Python operator for a scalar on the left, or None)
TORCH_BINARY: dict[str, tuple[Callable[..., torch.Tensor], Callable[..., torch.Tensor] | None]] = {
    "add": (torch.add, operator.add),
    "sub": (torch.sub, operator.sub),
    "mul": (torch.mul, operator.mul),
    "div": (torch.div, operator.truediv),
    "pow": (torch.pow, operator.pow),
    "maximum": (torch.maximum, None),
    "minimum": (torch.minimum, None),
    "eq": (torch.eq, operator.eq),
    "ne": (torch.ne, operator.ne),
    "lt": (torch.lt, operator.lt),
    "le": (torch.le, operator.le),
    "gt": (torch.gt, operator.gt),
    "ge": (torch.ge, operator.ge),
    "logical_and": (torch.logical_and, None),
    "logical_or": (torch.logical_or, None),
}

TORCH_UNARY: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "neg": torch.neg,
    "abs": torch.abs,
    "exp": torch.exp,
    "log": torch.log,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
    "relu": torch.relu,
    "silu": F.silu,
    "gelu": F.gelu,
    "erf": torch.erf,
    "sin": torch.sin,
    "cos": torch.cos,
}


def torch_verdict(
    compute: Callable[..., torch.Tensor], *operands: tuple[tuple[int, ...], DType], fill: float = 1,
) -> Outcome:
    """What torch says of ``compute(*tensors)``: the dtype and shape its meta kernel gives,
    or ``"error"`` where torch refuses — on meta or on CPU (meta kernels skip dtype checks,
    so a refusal is confirmed on small CPU tensors filled with ``fill``)."""

    def run(device: str) -> Outcome:
        tensors = [torch.full(shape, fill, device=device).to(dtype.torch) for shape, dtype in operands]
        return torch_outcome(lambda: compute(*tensors), (RuntimeError, TypeError, IndexError, ValueError, NotImplementedError))

    meta = run("meta")
    return meta if meta == "error" else (run("cpu") if run("cpu") == "error" else meta)
