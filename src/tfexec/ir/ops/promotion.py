"""Shared pieces of type rules: torch dtype promotion and symbolic broadcasting.

Promotion is torch's own: ``torch.result_type`` on stand-ins that have the operands'
dtype, dimensionality (zero-dim tensors rank below dimensioned ones) and weakness (a weak
``Constant`` promotes as a Python scalar), so the type rule and the value rule cannot
drift apart.
"""

from functools import lru_cache

import torch

from tfexec.ir.dims import ShapeDim
from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Operand, TypeRuleError, cite
from tfexec.ir.types import TensorType

_SCALAR_OF = {DType.bool: True, DType.int64: 1, DType.float32: 1.0}


def _stand_in(dtype: DType, zero_dim: bool, weak: bool) -> "torch.Tensor | bool | int | float":
    if weak:
        if dtype in _SCALAR_OF:
            return _SCALAR_OF[dtype]
        category = True if dtype is DType.bool else (1.0 if dtype.is_floating else 1)
        return category
    return torch.empty(() if zero_dim else (1,), dtype=dtype.torch, device="meta")


@lru_cache(maxsize=4096)
def _promote_pair(a: tuple[DType, bool, bool], b: tuple[DType, bool, bool]) -> DType:
    x, y = _stand_in(*a), _stand_in(*b)
    if not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor):
        # Two Python scalars: torch promotes them as zero-dim tensors of their default types.
        x = torch.empty((), dtype=a[0].torch, device="meta")
    return DType.from_torch(torch.result_type(x, y))


def promote(*operands: tuple[TensorType, bool]) -> DType:
    """The dtype torch gives to an elementwise op over ``(type, weak)`` operands."""
    keys = [(t.dtype, t.rank == 0, weak) for t, weak in operands]
    result = keys[0]
    for key in keys[1:]:
        dtype = _promote_pair(result, key)
        # The running result behaves as the strongest participant so far.
        result = (dtype, result[1] and key[1], result[2] and key[2])
    if len(keys) == 1:
        return keys[0][0]
    return result[0]


def default_float() -> DType:
    """The default floating dtype of a program (what integer true division and float-only ops
    give): f32, torch's default. A program means one thing whatever the process does: types
    are inferred, and both routes run, only while torch's default is float32
    (``default_dtype_refusal``), so kernels that follow torch's default make f32 too."""
    return DType.float32


def default_dtype_refusal() -> str | None:
    """Why nothing may be inferred or run now (torch's default dtype is not float32), or None.

    torch's default dtype decides what integer true division, float-only ops on integers and a
    Python float with an integer tensor make — in the type rules and in the kernels alike. A
    program's types are fixed once inferred; rather than let a later ``torch.set_default_dtype``
    make the kernels disagree with them (on one route and not the other), tfexec refuses."""
    current = torch.get_default_dtype()
    if current == torch.float32:
        return None
    return (
        f"torch's default dtype is {current} (torch.set_default_dtype), but tfexec programs are defined with "
        "torch's default float32 (their types and their kernels would disagree); call "
        "torch.set_default_dtype(torch.float32) first"
    )


def broadcast_shapes(op_name: str, *shapes: tuple[ShapeDim, ...], label: str | None = None) -> tuple[ShapeDim, ...]:
    """Broadcast symbolic shapes right-aligned; unequal dims must be equal or 1 (the error
    cites constraint ``label`` of ``op_name`` when given)."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[ShapeDim] = []
    for i in range(rank):
        dim: ShapeDim = 1
        for shape in shapes:
            j = len(shape) - rank + i
            if j < 0:
                continue
            d = shape[j]
            if d == 1:
                continue
            if dim == 1:
                dim = d
            elif dim != d:
                shown = " and ".join(str(TensorTypeShape(s)) for s in shapes)
                raise TypeRuleError(
                    f"{op_name}: shapes {shown} do not broadcast: axis {i - rank} has sizes {dim} and {d}"
                    f" (sizes must be equal or 1; use broadcast_to or reshape to align them){cite(op_name, label)}"
                )
        out.append(dim)
    return tuple(out)


class TensorTypeShape:
    """Render a bare shape as the text form does: ``[B, 64]``."""

    __slots__ = ("shape",)

    def __init__(self, shape: tuple[ShapeDim, ...]) -> None:
        self.shape = shape

    def __str__(self) -> str:
        return "[" + (", ".join(str(d) for d in self.shape) if self.shape else "()") + "]"


def tensor_args(op_name: str, args: tuple[Operand, ...]) -> list[TensorType]:
    """Every operand's tensor type, or a ``TypeRuleError`` naming a tuple operand."""
    out = []
    for i, a in enumerate(args):
        if not isinstance(a.type, TensorType):
            raise TypeRuleError(f"{op_name}: operand {i} must be a tensor, found tuple {a.type}")
        out.append(a.type)
    return out
