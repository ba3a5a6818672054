"""Value rules of ``reduce`` and ``argmax``, with the decisions hir.md fixes.

``axes=None`` reduces every axis, ``axes=()`` is the identity; ``max``/``min`` over a
zero-length axis is an error. torch's ``prod`` takes a single axis, so ``prod`` over
several axes is one reduction over them flattened (the reduced axes moved last), which
over every axis is exactly ``torch.prod(x)``.
"""

import math
from collections.abc import Callable

import torch

from tfexec.errors import EvalError
from tfexec.ir.ops.reduction import ArgMax, Reduce
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.semantics.rules.common import axis_at, tensor_kernel

def _axes(op: Reduce, rank: int) -> tuple[int, ...]:
    if op.axes is None:
        return tuple(range(rank))
    axes = tuple(sorted(axis_at("reduce", a, rank) for a in op.axes))
    if len(set(axes)) != len(axes):
        raise EvalError(f"reduce: axes {op.axes} name an axis twice")
    return axes


def _prod(x: torch.Tensor, axes: tuple[int, ...], keepdim: bool) -> torch.Tensor:
    if len(axes) == 1:
        return torch.prod(x, dim=axes[0], keepdim=keepdim)
    if len(axes) == x.dim():
        out = torch.prod(x)
    else:
        kept = [a for a in range(x.dim()) if a not in axes]
        count = math.prod(x.shape[a] for a in axes)
        flat = x.permute(*kept, *axes).reshape(*(x.shape[a] for a in kept), count)
        out = torch.prod(flat, dim=-1)
    if keepdim:
        out = out.reshape([1 if a in axes else x.shape[a] for a in range(x.dim())])
    return out


_REDUCERS: dict[str, Callable[[torch.Tensor, tuple[int, ...], bool], torch.Tensor]] = {
    "sum": lambda x, axes, k: torch.sum(x, dim=axes, keepdim=k),
    "mean": lambda x, axes, k: torch.mean(x, dim=axes, keepdim=k),
    "max": lambda x, axes, k: torch.amax(x, dim=axes, keepdim=k),
    "min": lambda x, axes, k: torch.amin(x, dim=axes, keepdim=k),
    "prod": _prod,
}


@value_rule(Reduce)
def _reduce(op: Reduce, args: tuple[Arg, ...]) -> Kernel:
    reducer = _REDUCERS[op.kind]

    def reduce(t: torch.Tensor) -> torch.Tensor:
        if op.axes == ():
            return t
        axes = _axes(op, t.dim())
        if op.kind in ("max", "min"):
            for a in axes:
                if t.shape[a] == 0:
                    raise EvalError(f"reduce {op.kind} over axis {a} of length 0 has no value")
        return reducer(t, axes, op.keepdims)

    return tensor_kernel(reduce, args)


@value_rule(ArgMax)
def _argmax(op: ArgMax, args: tuple[Arg, ...]) -> Kernel:
    def argmax(t: torch.Tensor) -> torch.Tensor:
        axis = axis_at("argmax", op.axis, t.dim())
        if t.shape[axis] == 0:
            raise EvalError(f"argmax over axis {axis} of length 0 has no value")
        return torch.argmax(t, dim=axis, keepdim=op.keepdims)

    return tensor_kernel(argmax, args)
