"""Value rules of the shape ops: ``reshape``, ``transpose``, ``broadcast_to``, ``concat``,
``slice`` and ``take``. Sizes resolve through the run's dim bindings; static ones resolve
once, when the kernel is made."""

from collections.abc import Callable

import torch

from tfexec.errors import EvalError
from tfexec.ir.dims import ShapeDim
from tfexec.ir.ops.shape import BroadcastTo, Concat, Reshape, Slice, Take, Transpose
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.semantics.rules.common import as_tensor, axis_at, read_index, resolve_shape, static_sizes, tensor_kernel


def _with_shape(
    dims: tuple[ShapeDim, ...], body: Callable[[torch.Tensor, tuple[int, ...]], torch.Tensor], args: tuple[Arg, ...]
) -> Kernel:
    """A one-operand kernel that needs concrete sizes: resolved now if static, else per run."""
    static = static_sizes(dims)
    if static is not None:
        return tensor_kernel(lambda x: body(x, static), args)

    def run(ctx: EvaluateContext, x: object) -> torch.Tensor:
        return body(as_tensor(ctx, x), _sizes(ctx, dims))

    return Kernel(run, needs_ctx=True)


def _sizes(ctx: EvaluateContext, dims: tuple[ShapeDim, ...]) -> tuple[int, ...]:
    """Concrete sizes under the run's bindings; a negative resolved size is an error."""
    sizes = resolve_shape(ctx, dims)
    for dim, size in zip(dims, sizes):
        if size < 0:
            raise EvalError(f"size {dim} resolves to {size}, which is negative")
    return sizes


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
def _reshape_rule(op: Reshape, args: tuple[Arg, ...]) -> Kernel:
    return _with_shape(op.shape, _reshape, args)


@value_rule(Transpose)
def _transpose(op: Transpose, args: tuple[Arg, ...]) -> Kernel:
    perm = op.perm

    def permute(x: torch.Tensor) -> torch.Tensor:
        norm = [axis_at("transpose", p, x.dim()) for p in perm] if len(perm) == x.dim() else None
        if norm is None or sorted(norm) != list(range(x.dim())):
            raise EvalError(f"transpose perm {perm} is not a permutation of the {x.dim()} axes of the value")
        return x.permute(norm)

    return tensor_kernel(permute, args)


def _broadcast(x: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    offset = len(shape) - x.dim()
    if offset < 0 or any(d != 1 and d != shape[offset + i] for i, d in enumerate(x.shape)):
        raise EvalError(f"broadcast_to: a value of shape {list(x.shape)} does not broadcast to {list(shape)}")
    return x.broadcast_to(shape)


@value_rule(BroadcastTo)
def _broadcast_to(op: BroadcastTo, args: tuple[Arg, ...]) -> Kernel:
    return _with_shape(op.shape, _broadcast, args)


@value_rule(Concat)
def _concat(op: Concat, args: tuple[Arg, ...]) -> Kernel:
    def cat(*tensors: torch.Tensor) -> torch.Tensor:
        axis = axis_at("concat", op.axis, tensors[0].dim())
        return torch.cat(tensors, dim=axis)

    return tensor_kernel(cat, args)


@value_rule(Slice)
def _slice(op: Slice, args: tuple[Arg, ...]) -> Kernel:
    rank = len(op.sizes)
    static_sz = static_sizes(op.sizes)
    static_st = (1,) * rank if op.strides is None else static_sizes(op.strides)
    static = _windows(static_sz, static_st) if static_sz is not None and static_st is not None else None

    def index_of(t: torch.Tensor, starts: object, windows: tuple[tuple[int, int, int], ...]) -> tuple[slice, ...]:
        """The windows at ``starts`` as Python slices; the constraints are checked in full
        (every axis, in order) as soon as one start is not a plain in-range int."""
        shape = t.shape
        if type(starts) is tuple and len(starts) == rank == len(shape):
            index = []
            for s, (size, stride, span), n in zip(starts, windows, shape):
                if type(s) is not int or s < 0 or stride < 1 or (size and s + span > n):
                    return _checked_index(t, starts, windows, rank)
                index.append(slice(s, s + span, stride))
            return tuple(index)
        return _checked_index(t, starts, windows, rank)

    if static is not None and not args[0].weak and not args[0].index:  # a tensor operand, static windows
        windows = static

        def run_static(x: object, starts: object) -> torch.Tensor:
            if type(x) is not torch.Tensor and not isinstance(x, torch.Tensor):
                raise EvalError(f"slice operand must be a tensor, found {type(x).__name__}")
            return x[index_of(x, starts, windows)]

        return Kernel(run_static, host_index=True)  # starts may be host-int index values

    def run(ctx: EvaluateContext, x: object, starts: object) -> torch.Tensor:
        t = x if isinstance(x, torch.Tensor) else as_tensor(ctx, x, "slice operand")
        windows = static if static is not None else _windows(_sizes(ctx, op.sizes), _sizes(ctx, op.strides or (1,) * rank))
        return t[index_of(t, starts, windows)]

    return Kernel(run, needs_ctx=True, host_index=True)  # starts may be host-int index values


def _checked_index(
    t: torch.Tensor, starts: object, windows: tuple[tuple[int, int, int], ...], rank: int
) -> tuple[slice, ...]:
    """``slice``'s windows at ``starts`` with every constraint checked, axis by axis (C1, C2)."""
    if type(starts) is not tuple:
        raise EvalError("slice starts must be a tuple of rank-0 integers")
    shape = t.shape
    if len(starts) != len(shape) or rank != len(shape):
        raise EvalError(
            f"slice (C1): a rank-{len(shape)} value needs {len(shape)} starts and sizes, got {len(starts)} and {rank}"
        )
    index = []
    for axis, (s, (size, stride, span)) in enumerate(zip(starts, windows)):
        start = s if type(s) is int else read_index(s, f"slice start {axis}")  # a Python int: no read needed
        if start < 0:
            raise EvalError(f"slice (C2): start {start} on axis {axis} is negative (starts never count from the end)")
        if stride < 1:
            raise EvalError(f"slice: stride {stride} on axis {axis} must be positive")
        stop = start + span
        if size and stop > shape[axis]:
            raise EvalError(
                f"slice (C2): window [{start}, {stop}) with stride {stride} runs past axis {axis} of length {shape[axis]}"
            )
        index.append(slice(start, stop, stride))
    return tuple(index)


def _windows(sizes: tuple[int, ...], strides: tuple[int, ...]) -> tuple[tuple[int, int, int], ...]:
    """Per axis ``(size, stride, span)``: a window starting at ``s`` covers ``[s, s + span)``."""
    return tuple((size, stride, (size - 1) * stride + 1 if size else 0) for size, stride in zip(sizes, strides))


@value_rule(Take)
def _take(op: Take, args: tuple[Arg, ...]) -> Kernel:
    def take(x: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
        axis = axis_at("take", op.axis, x.dim())
        if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype == torch.bool:
            raise EvalError(f"take indices must be integers, found {indices.dtype}")
        flat = indices.reshape(-1).to(torch.int64)
        if flat.numel():
            if flat.device.type == "meta":
                raise EvalError("take indices are on device meta, which holds no data: they cannot be checked")
            low, high = int(flat.min().item()), int(flat.max().item())
            if low < 0 or high >= x.shape[axis]:
                bad = low if low < 0 else high
                raise EvalError(
                    f"take: index {bad} is out of range for axis {axis} of length {x.shape[axis]}"
                    f" (expected 0..{x.shape[axis] - 1}; indices never wrap around) [take (C3)]"
                )
        picked = torch.index_select(x, axis, flat)
        return picked.reshape(tuple(x.shape[:axis]) + tuple(indices.shape) + tuple(x.shape[axis + 1 :]))

    return tensor_kernel(take, args)
