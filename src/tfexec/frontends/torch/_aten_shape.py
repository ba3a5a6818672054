"""ATen rules: views and reshapes, joining and splitting, slicing, repeats.

Sizes come from torch's own output types (``t.out``): a ``view`` becomes ``reshape`` to
the shape torch computed for it, symbolic sizes included, so ``-1`` and SymInt arithmetic
in the arguments never need re-deriving. Slice starts are static where torch's are, and
otherwise computed at run time from the sizes (``dim_*`` ops).
"""

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Result, RuleError
from tfexec.frontends.torch._registry import register
from tfexec.frontends.torch._rule_helpers import axis_of, normalise_index, repeat_each, reshape_to, tensor_list, window
from tfexec.ir.dims import ShapeDim, dim_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Expr


# -- reshapes ---------------------------------------------------------------------------------


@register(
    "view.default", "_unsafe_view.default", "reshape.default", "view_copy.default", "_reshape_alias.default",
    "unsqueeze.default", "squeeze.default", "squeeze.dim", "squeeze.dims", "flatten.using_ints", "unflatten.int",
)
def _reshape(t: NodeContext) -> Result:
    """``reshape`` to torch's output shape (row-major, as a contiguous view)."""
    return reshape_to(t, t.tensor("self"), t.out)


@register("expand.default", "broadcast_to.default", "expand_copy.default")
def _expand(t: NodeContext) -> Result:
    """``broadcast_to`` torch's output shape."""
    x = t.tensor("self")
    want = t.out
    if t.type_of(x).shape == want.shape:
        return x
    return hir.broadcast_to(x, shape=want.shape, span=t.span)


@register("transpose.int", "swapaxes.default", "swapdims.default")
def _transpose(t: NodeContext) -> Result:
    x = t.tensor("self")
    rank = len(t.type_of(x).shape)
    names = ("dim0", "dim1") if t.has("dim0") else ("axis0", "axis1")
    a, b = (axis_of(t, t.integer(n), rank) for n in names)
    if a == b:
        return x
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return hir.transpose(x, perm=tuple(perm), span=t.span)


@register("permute.default", "permute_copy.default")
def _permute(t: NodeContext) -> Result:
    x = t.tensor("self")
    rank = len(t.type_of(x).shape)
    dims = t.ints("dims") or ()
    perm = tuple(axis_of(t, d, rank) for d in dims)
    if perm == tuple(range(rank)):
        return x
    return hir.transpose(x, perm=perm, span=t.span)


@register("movedim.int")
def _movedim(t: NodeContext) -> Result:
    x = t.tensor("self")
    rank = len(t.type_of(x).shape)
    src, dst = axis_of(t, t.integer("source"), rank), axis_of(t, t.integer("destination"), rank)
    order = [i for i in range(rank) if i != src]
    order.insert(dst, src)
    if order == list(range(rank)):
        return x
    return hir.transpose(x, perm=tuple(order), span=t.span)


# -- joining and splitting ------------------------------------------------------------------


@register("cat.default", "concat.default")
def _cat(t: NodeContext) -> Result:
    """``concat``; torch skips legacy empty 1-D operands (shape ``(0,)``) beside higher ranks."""
    xs = tensor_list(t, "tensors")
    rank = len(t.out.shape)
    if rank != 1:
        xs = [x for x in xs if t.type_of(x).shape != (0,)] or xs
    if len(xs) == 1:
        return xs[0]
    return hir.concat(*xs, axis=t.integer("dim", 0), span=t.span)


@register("stack.default")
def _stack(t: NodeContext) -> Result:
    """``concat`` of the operands each reshaped with a new axis of size 1 at ``dim``."""
    xs = tensor_list(t, "tensors")
    out = t.out
    axis = axis_of(t, t.integer("dim", 0), len(out.shape))
    pieces = []
    for x in xs:
        shape = t.type_of(x).shape
        pieces.append(hir.reshape(x, shape=shape[:axis] + (1,) + shape[axis:], span=t.span))
    return pieces[0] if len(pieces) == 1 else hir.concat(*pieces, axis=axis, span=t.span)


@register("slice.Tensor", "slice_copy.Tensor")
def _slice(t: NodeContext) -> Result:
    """``slice`` from the normalised start, with torch's output size and the step as stride."""
    x = t.tensor("self")
    xt = t.type_of(x)
    axis = axis_of(t, t.integer("dim", 0), len(xt.shape))
    step = t.integer("step", 1)
    if step < 1:
        raise RuleError(f"slice step {step} must be positive")
    raw = t.arg("start")
    start = normalise_index(t, 0 if raw is None else t.size("start"), xt.shape[axis], clamp=True)
    size = t.out.shape[axis]
    return window(t, x, axis, start, size, step)


@register("narrow.default")
def _narrow(t: NodeContext) -> Result:
    x = t.tensor("self")
    xt = t.type_of(x)
    axis = axis_of(t, t.integer("dim"), len(xt.shape))
    start = normalise_index(t, t.size("start"), xt.shape[axis], clamp=False)
    return window(t, x, axis, start, t.out.shape[axis])


@register("select.int", "select_copy.int")
def _select(t: NodeContext) -> Result:
    """A window of one at the (normalised) index, then ``reshape`` dropping the axis."""
    x = t.tensor("self")
    xt = t.type_of(x)
    axis = axis_of(t, t.integer("dim"), len(xt.shape))
    index = normalise_index(t, t.size("index"), xt.shape[axis], clamp=False)
    return reshape_to(t, window(t, x, axis, index, 1), t.out)


@register("split.Tensor", "split_with_sizes.default", "chunk.default", "unbind.int", "tensor_split.sections")
def _split(t: NodeContext) -> Result:
    """One window per output, each starting where the previous one ends (sizes from torch)."""
    x = t.tensor("self")
    xt = t.type_of(x)
    axis = axis_of(t, t.integer("dim", 0), len(xt.shape))
    squeeze = t.op.startswith("aten.unbind")
    outs = t.outs()
    pieces: list[Expr | None] = []
    start: ShapeDim = 0
    for out in outs:
        size: ShapeDim = 1 if squeeze else out.shape[axis]
        piece = window(t, x, axis, start, size)
        pieces.append(reshape_to(t, piece, out) if squeeze else piece)
        start = dim_expr("add", start, size)
    return tuple(pieces)


# -- repeats ----------------------------------------------------------------------------------


@register("repeat.default")
def _repeat(t: NodeContext) -> Result:
    """Tile: ``reshape`` to ``(1, d0, 1, d1, …)``, ``broadcast_to`` ``(r0, d0, r1, d1, …)``,
    ``reshape`` to ``(r0*d0, r1*d1, …)``."""
    x = t.tensor("self")
    repeats = t.ints("repeats") or ()
    shape = t.type_of(x).shape
    if len(repeats) < len(shape):
        raise RuleError("repeat needs at least one repeat count per axis")
    shape = (1,) * (len(repeats) - len(shape)) + shape
    lifted: list[ShapeDim] = []
    tiled: list[ShapeDim] = []
    for r, d in zip(repeats, shape):
        lifted += [1, d]
        tiled += [r, d]
    grown = hir.reshape(x, shape=tuple(lifted), span=t.span)
    return hir.reshape(hir.broadcast_to(grown, shape=tuple(tiled), span=t.span), shape=t.out.shape, span=t.span)


@register("repeat_interleave.self_int")
def _repeat_interleave(t: NodeContext) -> Result:
    x = t.tensor("self")
    times = t.integer("repeats")
    if t.arg("dim") is None:
        count: ShapeDim = 1
        for d in t.type_of(x).shape:
            count = dim_expr("mul", count, d)
        x = hir.reshape(x, shape=(count,), span=t.span)
        axis = 0
    else:
        axis = axis_of(t, t.integer("dim"), len(t.type_of(x).shape))
    return reshape_to(t, repeat_each(t, x, axis, times), t.out)


@register("diff.default")
def _diff(t: NodeContext) -> Result:
    """``x[1:] - x[:-1]`` along ``dim``, ``n`` times, after joining ``prepend`` and ``append``
    (``ne`` for ``b1``, as torch computes a bool difference)."""
    x = t.tensor("self")
    axis = axis_of(t, t.integer("dim", -1), len(t.type_of(x).shape))
    parts = [p for p in (t.opt_tensor("prepend"), x, t.opt_tensor("append")) if p is not None]
    if len(parts) > 1:
        x = hir.concat(*parts, axis=axis, span=t.span)
    for _ in range(t.integer("n", 1)):
        length = t.type_of(x).shape[axis]
        size = dim_expr("sub", length, 1)
        later, earlier = window(t, x, axis, 1, size), window(t, x, axis, 0, size)
        x = hir.ne(later, earlier, span=t.span) if t.type_of(x).dtype is DType.bool else hir.sub(later, earlier, span=t.span)
    return x


# -- rearranging --------------------------------------------------------------------------------


@register("flip.default")
def _flip(t: NodeContext) -> Result:
    return hir.flip(t.tensor("self"), axes=t.ints("dims") or (), span=t.span)


@register("roll.default")
def _roll(t: NodeContext) -> Result:
    """``roll``; without ``dims`` the value rolls as one flat sequence."""
    dims = t.ints("dims")
    return hir.roll(t.tensor("self"), shifts=t.ints("shifts") or (0,), axes=dims or None, span=t.span)


@register("diagonal.default", "diagonal_copy.default")
def _diagonal(t: NodeContext) -> Result:
    return hir.diagonal(
        t.tensor("self"), offset=t.integer("offset", 0), axis1=t.integer("dim1", 0), axis2=t.integer("dim2", 1), span=t.span
    )
