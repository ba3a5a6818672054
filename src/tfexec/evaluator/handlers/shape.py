"""Value rules of the shape ops: ``reshape``, ``transpose``, ``broadcast_to``, ``concat``,
``slice`` and ``take``. Sizes resolve through the run's dim bindings; static ones resolve
once, when the kernel is made."""

from collections.abc import Callable

import torch

from tfexec.errors import EvalError
from tfexec.evaluator.context import EvaluateContext
from tfexec.evaluator.handlers.common import Arg, axis_at, is_static, read_index, resolve_shape, weak_tensor
from tfexec.evaluator.registry import Kernel, Layouts, value_rule
from tfexec.ir.dims import ShapeDim
from tfexec.ir.ops.shape import BroadcastTo, Concat, Reshape, Slice, Take, Transpose


def _with_shape(
    dims: tuple[ShapeDim, ...], body: Callable[[torch.Tensor, tuple[int, ...]], torch.Tensor]
) -> Kernel:
    """A one-operand kernel that needs concrete sizes: resolved now if static, else per run."""
    if is_static(dims):
        static = tuple(int(d) for d in dims)  # type: ignore[call-overload]

        def run_static(x: torch.Tensor) -> torch.Tensor:
            return body(x, static)

        return Kernel(run_static)

    def run(ctx: EvaluateContext, x: Arg) -> torch.Tensor:
        t = x if isinstance(x, torch.Tensor) else weak_tensor(x, ctx.device)
        return body(t, resolve_shape(ctx, dims))

    return Kernel(run, needs_ctx=True)


def _reshape(x: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    count = 1
    for d in shape:
        count *= d
    if count != x.numel():
        raise EvalError(
            f"reshape cannot change the element count: input {list(x.shape)} has {x.numel()} elements, "
            f"target shape {list(shape)} has {count}"
        )
    return x.reshape(shape)


@value_rule(Reshape)
def _reshape_rule(op: Reshape, layouts: Layouts) -> Kernel:
    return _with_shape(op.shape, _reshape)


@value_rule(Transpose)
def _transpose(op: Transpose, layouts: Layouts) -> Kernel:
    perm = op.perm

    def run(x: torch.Tensor) -> torch.Tensor:
        norm = [axis_at("transpose", p, x.dim()) for p in perm] if len(perm) == x.dim() else None
        if norm is None or sorted(norm) != list(range(x.dim())):
            raise EvalError(f"transpose perm {perm} is not a permutation of the {x.dim()} axes of the value")
        return x.permute(norm)

    return Kernel(run)


def _broadcast(x: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    offset = len(shape) - x.dim()
    if offset < 0 or any(d != 1 and d != shape[offset + i] for i, d in enumerate(x.shape)):
        raise EvalError(f"broadcast_to: a value of shape {list(x.shape)} does not broadcast to {list(shape)}")
    return x.broadcast_to(shape)


@value_rule(BroadcastTo)
def _broadcast_to(op: BroadcastTo, layouts: Layouts) -> Kernel:
    return _with_shape(op.shape, _broadcast)


@value_rule(Concat)
def _concat(op: Concat, layouts: Layouts) -> Kernel:
    def run(ctx: EvaluateContext, *xs: Arg) -> torch.Tensor:
        tensors = [x if isinstance(x, torch.Tensor) else weak_tensor(x, ctx.device) for x in xs]
        axis = axis_at("concat", op.axis, tensors[0].dim())
        return torch.cat(tensors, dim=axis)

    return Kernel(run, needs_ctx=True)


@value_rule(Slice)
def _slice(op: Slice, layouts: Layouts) -> Kernel:
    sizes_static = is_static(op.sizes) and (op.strides is None or is_static(op.strides))

    def run(ctx: EvaluateContext, x: torch.Tensor, starts: tuple[object, ...]) -> torch.Tensor:
        if not isinstance(starts, tuple):
            raise EvalError("slice starts must be a tuple of rank-0 integers")
        rank = x.dim()
        if len(starts) != rank or len(op.sizes) != rank:
            raise EvalError(
                f"slice (C1): a rank-{rank} value needs {rank} starts and sizes, got {len(starts)} and {len(op.sizes)}"
            )
        sizes = op.sizes if sizes_static else resolve_shape(ctx, op.sizes)
        strides = (1,) * rank if op.strides is None else (op.strides if sizes_static else resolve_shape(ctx, op.strides))
        index = []
        for axis, (s, size, stride) in enumerate(zip(starts, sizes, strides)):
            start = read_index(s, f"slice start {axis}")
            length = x.shape[axis]
            if start < 0:
                raise EvalError(f"slice (C2): start {start} on axis {axis} is negative (starts never count from the end)")
            if stride < 1:  # type: ignore[operator]
                raise EvalError(f"slice: stride {stride} on axis {axis} must be positive")
            stop = start + (size - 1) * stride + 1 if size else start  # type: ignore[operator]
            if size and stop > length:
                raise EvalError(
                    f"slice (C2): window [{start}, {stop}) with stride {stride} runs past axis {axis} of length {length}"
                )
            index.append(slice(start, stop, stride))
        return x[tuple(index)]

    return Kernel(run, needs_ctx=True)


@value_rule(Take)
def _take(op: Take, layouts: Layouts) -> Kernel:
    def run(x: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        axis = axis_at("take", op.axis, x.dim())
        if indices.dtype.is_floating_point or indices.dtype == torch.bool:
            raise EvalError(f"take indices must be integers, found {indices.dtype}")
        flat = indices.reshape(-1).to(torch.int64)
        if flat.numel():
            if flat.device.type == "meta":
                raise EvalError("take indices are on device meta, which holds no data: they cannot be checked")
            low, high = int(flat.min().item()), int(flat.max().item())
            if low < 0 or high >= x.shape[axis]:
                bad = low if low < 0 else high
                raise EvalError(f"take: index {bad} is out of range for axis {axis} of length {x.shape[axis]}")
        picked = torch.index_select(x, axis, flat)
        return picked.reshape(tuple(x.shape[:axis]) + tuple(indices.shape) + tuple(x.shape[axis + 1 :]))

    return Kernel(run)
