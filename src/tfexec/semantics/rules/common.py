"""Helpers shared by value rules: tensor-only kernels, index reads, scalar operands, dims and
axes at run time."""

from collections.abc import Sequence

import torch

from collections.abc import Callable

from tfexec.errors import EvalError
from tfexec.ir.dims import ShapeDim, resolve_dim
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.registry import Arg, Kernel

Scalar = bool | int | float
Operand = torch.Tensor | Scalar
"""What a kernel receives for one operand: a tensor or a weak scalar's Python value."""

_WEAK_DTYPE = {bool: torch.bool, int: torch.int64, float: torch.float32}


def read_index(value: object, what: str) -> int:
    """A rank-0 integer operand as a Python int (slice starts, dim arithmetic)."""
    if isinstance(value, bool):
        raise EvalError(f"{what} must be an integer, found bool {value}")
    if isinstance(value, int):
        return value
    if not isinstance(value, torch.Tensor):
        raise EvalError(f"{what} must be a rank-0 integer tensor, found {type(value).__name__}")
    if value.dim() != 0:
        raise EvalError(f"{what} must be rank-0, found shape {list(value.shape)}")
    if value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool:
        raise EvalError(f"{what} must be an integer, found dtype {value.dtype}")
    if value.device.type == "meta":
        raise EvalError(f"{what} is on device meta, which holds no data: an index cannot be read there")
    return int(value.item())


def weak_tensor(value: Scalar, device: "torch.device | str | None") -> torch.Tensor:
    """A weak scalar as a rank-0 tensor of its own type (b1/i64/f32)."""
    return torch.tensor(value, dtype=_WEAK_DTYPE[type(value)], device=device)


def as_tensor(ctx: EvaluateContext, x: object, what: str = "operand") -> torch.Tensor:
    """A tensor operand as is, a weak scalar as a rank-0 tensor of its own type on the run's device."""
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, (bool, int, float)):
        return weak_tensor(x, ctx.device)
    raise EvalError(f"{what} must be a tensor, found {type(x).__name__}")


def tensorize(ctx: EvaluateContext, a: Operand, b: Operand) -> tuple[torch.Tensor, torch.Tensor]:
    """Two operands as tensors; a weak scalar takes the dtype torch promotes it to against the other."""
    if isinstance(a, torch.Tensor):
        if isinstance(b, torch.Tensor):
            return a, b
        return a, torch.tensor(b, dtype=torch.result_type(a, b), device=a.device)
    if isinstance(b, torch.Tensor):
        return torch.tensor(a, dtype=torch.result_type(b, a), device=b.device), b
    first = weak_tensor(a, ctx.device)
    dtype = torch.result_type(first, b)
    return first.to(dtype), torch.tensor(b, dtype=dtype, device=ctx.device)


def resolve_shape(ctx: EvaluateContext, dims: Sequence[ShapeDim]) -> tuple[int, ...]:
    """Concrete sizes of ``dims`` under the run's dim bindings."""
    bindings = ctx.dim_bindings
    return tuple([d if type(d) is int else resolve_dim(d, bindings) for d in dims])  # a static size as it is


def static_sizes(dims: Sequence[ShapeDim]) -> tuple[int, ...] | None:
    """``dims`` as ints when all are static, else None (resolve them per run)."""
    out = tuple(d for d in dims if isinstance(d, int))
    return out if len(out) == len(dims) else None


def axis_at(op_name: str, axis: int, rank: int) -> int:
    """``axis`` normalised for a tensor of ``rank``, or an ``EvalError`` naming the valid range."""
    if not -rank <= axis < rank:
        raise EvalError(f"{op_name}: axis {axis} is out of range for a rank-{rank} value (valid: {-rank}..{rank - 1})")
    return axis % rank


def tensor_kernel(fn: Callable[..., torch.Tensor], args: Sequence[Arg]) -> Kernel:
    """The kernel of ``fn``, a function of tensors only: ``fn`` itself when no operand is a
    weak scalar, else ``fn`` with each weak scalar made a rank-0 tensor of its own kind
    (``b1``/``i64``/``f32``) on the run's device."""
    if not any(a.weak for a in args):
        return Kernel(fn)

    def on_tensors(ctx: EvaluateContext, *xs: object) -> torch.Tensor:
        return fn(*(as_tensor(ctx, x) for x in xs))

    return Kernel(on_tensors, needs_ctx=True)
