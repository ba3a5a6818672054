"""ATen rules: views and reshapes, slicing and splitting, gathers, creation, masks, attention.

Sizes come from torch's own output types (``t.out``): a ``view`` becomes ``reshape`` to
the shape torch computed for it, symbolic sizes included, so ``-1`` and SymInt arithmetic
in the arguments never need re-deriving. Slice starts are static where torch's are, and
otherwise computed at run time from the sizes (``dim_*`` ops).
"""

import math

import tfexec.ops as hir
from tfexec.frontends.torch._context import (
    NodeContext,
    Operand,
    Result,
    RuleError,
    is_expr,
)
from tfexec.frontends.torch._registry import register
from tfexec.ir.dims import DimExpr, DimVar, ShapeDim, dim_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Expr
from tfexec.ir.types import TensorType


def _axis(t: NodeContext, axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise RuleError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def _start(t: NodeContext, start: ShapeDim) -> Operand:
    """A slice start as an operand: an int, or a symbolic size computed at run time."""
    if isinstance(start, int):
        return start
    return t.tensor_of_dim(start)


# -- reshapes ---------------------------------------------------------------------------------


def reshape_to(t: NodeContext, x: Expr, want: TensorType) -> Expr:
    """``x`` reshaped to ``want``'s shape (``x`` itself when it already has it)."""
    if t.type_of(x).shape == want.shape:
        return x
    return hir.reshape(x, shape=want.shape, span=t.span)


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
    a, b = (_axis(t, t.integer(n), rank) for n in names)
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
    perm = tuple(_axis(t, d, rank) for d in dims)
    if perm == tuple(range(rank)):
        return x
    return hir.transpose(x, perm=perm, span=t.span)


@register("movedim.int")
def _movedim(t: NodeContext) -> Result:
    x = t.tensor("self")
    rank = len(t.type_of(x).shape)
    src, dst = _axis(t, t.integer("source"), rank), _axis(t, t.integer("destination"), rank)
    order = [i for i in range(rank) if i != src]
    order.insert(dst, src)
    if order == list(range(rank)):
        return x
    return hir.transpose(x, perm=tuple(order), span=t.span)


# -- joining and splitting ------------------------------------------------------------------


def _operands(t: NodeContext, name: str) -> list[Expr]:
    value = t.arg(name)
    if not isinstance(value, (list, tuple)) or not value:
        raise RuleError(f"argument {name} is not a non-empty list of tensors")
    out = []
    for item in value:
        if not is_expr(item):
            raise RuleError(f"argument {name} holds a non-tensor")
        out.append(item)
    return out


@register("cat.default", "concat.default")
def _cat(t: NodeContext) -> Result:
    """``concat``; torch skips legacy empty 1-D operands (shape ``(0,)``) beside higher ranks."""
    xs = _operands(t, "tensors")
    rank = len(t.out.shape)
    if rank != 1:
        xs = [x for x in xs if t.type_of(x).shape != (0,)] or xs
    if len(xs) == 1:
        return xs[0]
    return hir.concat(*xs, axis=t.integer("dim", 0), span=t.span)


@register("stack.default")
def _stack(t: NodeContext) -> Result:
    """``concat`` of the operands each reshaped with a new axis of size 1 at ``dim``."""
    xs = _operands(t, "tensors")
    out = t.out
    axis = _axis(t, t.integer("dim", 0), len(out.shape))
    pieces = []
    for x in xs:
        shape = t.type_of(x).shape
        pieces.append(hir.reshape(x, shape=shape[:axis] + (1,) + shape[axis:], span=t.span))
    return pieces[0] if len(pieces) == 1 else hir.concat(*pieces, axis=axis, span=t.span)


def window(t: NodeContext, x: Expr, axis: int, start: ShapeDim, size: ShapeDim, step: int = 1) -> Expr:
    """``slice`` of ``x`` along ``axis`` from ``start`` (``size`` elements every ``step``)."""
    xt = t.type_of(x)
    if start == 0 and size == xt.shape[axis] and step == 1:
        return x
    starts: list[Operand] = [0] * len(xt.shape)
    starts[axis] = _start(t, start)
    sizes = xt.shape[:axis] + (size,) + xt.shape[axis + 1:]
    strides = None if step == 1 else tuple(step if i == axis else 1 for i in range(len(xt.shape)))
    return hir.slice(x, tuple(starts), sizes=sizes, strides=strides, span=t.span)


def _normalise_index(t: NodeContext, index: ShapeDim, length: ShapeDim, clamp: bool) -> ShapeDim:
    """A possibly negative start/index counted from the front; clamped to ``[0, length]``
    where torch clamps (slice bounds), as torch does."""
    if isinstance(index, int) and index < 0:
        if isinstance(length, int):
            index = index + length
            return max(index, 0) if clamp else index
        index = dim_expr("add", length, index)
        return dim_expr("max", index, 0) if clamp else index
    if clamp and isinstance(length, int) and isinstance(index, int):
        return min(index, length)
    return index


@register("slice.Tensor", "slice_copy.Tensor")
def _slice(t: NodeContext) -> Result:
    """``slice`` from the normalised start, with torch's output size and the step as stride."""
    x = t.tensor("self")
    xt = t.type_of(x)
    axis = _axis(t, t.integer("dim", 0), len(xt.shape))
    step = t.integer("step", 1)
    if step < 1:
        raise RuleError(f"slice step {step} must be positive")
    raw = t.arg("start")
    start = _normalise_index(t, 0 if raw is None else t.size("start"), xt.shape[axis], clamp=True)
    size = t.out.shape[axis]
    return window(t, x, axis, start, size, step)


@register("narrow.default")
def _narrow(t: NodeContext) -> Result:
    x = t.tensor("self")
    xt = t.type_of(x)
    axis = _axis(t, t.integer("dim"), len(xt.shape))
    start = _normalise_index(t, t.size("start"), xt.shape[axis], clamp=False)
    return window(t, x, axis, start, t.out.shape[axis])


@register("select.int", "select_copy.int")
def _select(t: NodeContext) -> Result:
    """A window of one at the (normalised) index, then ``reshape`` dropping the axis."""
    x = t.tensor("self")
    xt = t.type_of(x)
    axis = _axis(t, t.integer("dim"), len(xt.shape))
    index = _normalise_index(t, t.size("index"), xt.shape[axis], clamp=False)
    return reshape_to(t, window(t, x, axis, index, 1), t.out)


@register("split.Tensor", "split_with_sizes.default", "chunk.default", "unbind.int", "tensor_split.sections")
def _split(t: NodeContext) -> Result:
    """One window per output, each starting where the previous one ends (sizes from torch)."""
    x = t.tensor("self")
    xt = t.type_of(x)
    axis = _axis(t, t.integer("dim", 0), len(xt.shape))
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


# -- gathers ----------------------------------------------------------------------------------


@register("index_select.default")
def _index_select(t: NodeContext) -> Result:
    return hir.take(t.tensor("self"), t.tensor("index"), axis=t.integer("dim"), span=t.span)


@register("embedding.default")
def _embedding(t: NodeContext) -> Result:
    """``take(weight, indices, axis=0)`` (``padding_idx`` only affects gradients)."""
    return hir.take(t.tensor("weight"), t.tensor("indices"), axis=0, span=t.span)


@register("index.Tensor")
def _index(t: NodeContext) -> Result:
    """``x[..., idx]`` with one integer index tensor after only full slices: ``take``."""
    x = t.tensor("self")
    indices = t.arg("indices")
    if not isinstance(indices, (list, tuple)):
        raise RuleError("indices is not a list")
    given = [i for i, v in enumerate(indices) if v is not None]
    if len(given) != 1:
        raise RuleError(f"advanced indexing with {len(given)} index tensors (only one is supported)")
    axis = given[0]
    idx = indices[axis]
    if not is_expr(idx):
        raise RuleError("the index is not a tensor")
    if t.type_of(idx).dtype is DType.bool:
        raise RuleError("boolean-mask indexing has a data-dependent shape")
    return hir.take(x, idx, axis=axis, span=t.span)


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


def repeat_each(t: NodeContext, x: Expr, axis: int, times: int) -> Expr:
    """Each element along ``axis`` repeated ``times`` times in place (``repeat_interleave``)."""
    shape = t.type_of(x).shape
    lifted = shape[: axis + 1] + (1,) + shape[axis + 1:]
    spread = shape[: axis + 1] + (times,) + shape[axis + 1:]
    merged = shape[:axis] + (dim_expr("mul", shape[axis], times),) + shape[axis + 1:]
    grown = hir.broadcast_to(hir.reshape(x, shape=lifted, span=t.span), shape=spread, span=t.span)
    return hir.reshape(grown, shape=merged, span=t.span)


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
        axis = _axis(t, t.integer("dim"), len(t.type_of(x).shape))
    return reshape_to(t, repeat_each(t, x, axis, times), t.out)


# -- creation ---------------------------------------------------------------------------------


def _fill(t: NodeContext, value: object) -> Result:
    out = t.out
    if isinstance(value, (bool, int, float)):
        return hir.full(shape=out.shape, value=value, dtype=out.dtype, span=t.span)
    if isinstance(value, (DimVar, DimExpr)):
        size = hir.cast(t.tensor_of_dim(value), dtype=out.dtype, span=t.span)
        return hir.broadcast_to(size, shape=out.shape, span=t.span)
    raise RuleError(f"fill value {value!r} is not a static number")


@register("full.default", "full_like.default", "new_full.default")
def _full(t: NodeContext) -> Result:
    return _fill(t, t.arg("fill_value"))


@register("scalar_tensor.default")
def _scalar_tensor(t: NodeContext) -> Result:
    return _fill(t, t.arg("s"))


@register("zeros.default", "zeros_like.default", "new_zeros.default", "empty.memory_format", "empty_like.default",
          "new_empty.default", "empty_strided.default")
def _zeros(t: NodeContext) -> Result:
    """Zeros (an ``empty`` tensor's contents are unspecified; zeros are one choice of them)."""
    return _fill(t, 0)


@register("ones.default", "ones_like.default", "new_ones.default")
def _ones(t: NodeContext) -> Result:
    return _fill(t, 1)


@register("arange.default", "arange.start", "arange.start_step")
def _arange(t: NodeContext) -> Result:
    """``start + arange(n) * step`` with ``n`` torch's output length."""
    out = t.out
    base: Expr = hir.arange(extent=out.shape[0], dtype=out.dtype, span=t.span)
    step = t.arg("step", 1)
    start = t.arg("start", 0)
    if step is not None and step != 1:
        base = hir.mul(base, t.operand("step"), span=t.span)
    if start is not None and start != 0:
        base = hir.add(base, t.operand("start"), span=t.span)
    return base


def _triangle(t: NodeContext, upper: bool) -> Result:
    """``where(mask, x, 0)`` with ``mask = col - row >= k`` (triu) or ``<= k`` (tril)."""
    x = t.tensor("self")
    xt = t.type_of(x)
    if len(xt.shape) < 2:
        raise RuleError("tril/triu need a matrix")
    rows_n, cols_n = xt.shape[-2], xt.shape[-1]
    rows = hir.reshape(hir.arange(extent=rows_n, span=t.span), shape=(rows_n, 1), span=t.span)
    cols = hir.reshape(hir.arange(extent=cols_n, span=t.span), shape=(1, cols_n), span=t.span)
    diff = hir.sub(cols, rows, span=t.span)
    k = t.integer("diagonal", 0)
    mask = hir.ge(diff, k, span=t.span) if upper else hir.le(diff, k, span=t.span)
    zero: bool | int = False if xt.dtype is DType.bool else 0
    return hir.where(mask, x, zero, span=t.span)


@register("triu.default")
def _triu(t: NodeContext) -> Result:
    return _triangle(t, upper=True)


@register("tril.default")
def _tril(t: NodeContext) -> Result:
    return _triangle(t, upper=False)


# -- attention --------------------------------------------------------------------------------


@register("scaled_dot_product_attention.default")
def _sdpa(t: NodeContext) -> Result:
    """``softmax(q @ kᵀ * scale [masked]) @ v``: ``is_causal`` keeps key ``j <= i`` (top-left
    aligned, as torch), a bool ``attn_mask`` keeps where true, a float one is added.
    ``enable_gqa`` repeats each key/value head for its group of query heads. torch's CPU
    kernel blocks the softmax (flash attention), so results agree within rounding."""
    q, k, v = t.tensor("query"), t.tensor("key"), t.tensor("value")
    if t.scalar("dropout_p", 0.0) != 0:
        raise RuleError("attention dropout (dropout_p != 0) is random; pass dropout_p=0.0 in evaluation")
    qt, kt = t.type_of(q), t.type_of(k)
    rank = len(qt.shape)
    if rank < 2 or len(kt.shape) != rank:
        raise RuleError(f"attention needs query and key of one rank >= 2, got {qt} and {kt}")
    if t.arg("enable_gqa"):
        if rank < 3:
            raise RuleError("enable_gqa needs a heads axis")
        hq, hk = qt.shape[-3], kt.shape[-3]
        if not isinstance(hq, int) or not isinstance(hk, int) or hk == 0 or hq % hk:
            raise RuleError(f"enable_gqa needs static head counts with the key heads dividing the query heads ({hq}, {hk})")
        if hq != hk:
            k = repeat_each(t, k, rank - 3, hq // hk)
            v = repeat_each(t, v, len(t.type_of(v).shape) - 3, hq // hk)
    scale = t.arg("scale")
    if scale is None:
        depth = qt.shape[-1]
        if not isinstance(depth, int) or depth <= 0:
            raise RuleError(f"attention over a symbolic head size {depth} needs an explicit scale")
        scale = 1.0 / math.sqrt(depth)
    elif not isinstance(scale, (int, float)):
        raise RuleError(f"attention scale {scale!r} is not a static number")
    perm = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    scores = hir.mul(hir.matmul(q, hir.transpose(k, perm=perm, span=t.span), span=t.span), float(scale), span=t.span)
    mask = t.opt_tensor("attn_mask")
    if t.arg("is_causal"):
        if mask is not None:
            raise RuleError("attention with both attn_mask and is_causal (torch refuses it)")
        length, source = qt.shape[-2], kt.shape[-2]
        rows = hir.reshape(hir.arange(extent=length, span=t.span), shape=(length, 1), span=t.span)
        cols = hir.reshape(hir.arange(extent=source, span=t.span), shape=(1, source), span=t.span)
        scores = hir.where(hir.le(cols, rows, span=t.span), scores, float("-inf"), span=t.span)
    elif mask is not None:
        if t.type_of(mask).dtype is DType.bool:
            scores = hir.where(mask, scores, float("-inf"), span=t.span)
        else:
            scores = hir.add(scores, mask, span=t.span)
    probs = hir.softmax(scores, axis=-1, span=t.span)
    return hir.matmul(probs, v, span=t.span)


# -- writes into windows (what in-place assignment becomes once functionalised) ---------------


@register("copy.default", "copy_.default")
def _copy(t: NodeContext) -> Result:
    """``src`` converted to ``self``'s dtype and broadcast to its shape (``self``'s values are
    replaced; ``copy_`` only reaches here through a functionalised graph)."""
    xt = t.type_of(t.tensor("self"))
    src = t.tensor("src")
    if t.type_of(src).dtype is not xt.dtype:
        src = hir.cast(src, dtype=xt.dtype, span=t.span)
    if t.type_of(src).shape != xt.shape:
        src = hir.broadcast_to(src, shape=xt.shape, span=t.span)
    return src


def scatter_window(t: NodeContext, x: Expr, src: Expr, axis: int, start: ShapeDim, step: int) -> Expr:
    """``x`` with the window ``start, start+step, …`` along ``axis`` replaced by ``src``:
    position ``p`` takes ``src[(p - start) / step]`` where it is in the window, else ``x[p]``
    (``take`` gathers, ``where`` selects: exact, whatever the dtype)."""
    xt, st = t.type_of(x), t.type_of(src)
    count = st.shape[axis]
    if count == 0:
        return x
    rank = len(xt.shape)
    rel = hir.sub(hir.arange(extent=xt.shape[axis], span=t.span), _start(t, start), span=t.span)
    k: Expr = rel if step == 1 else hir.cast(hir.div(rel, step, span=t.span), dtype=DType.int64, span=t.span)
    inside = hir.logical_and(hir.ge(rel, 0, span=t.span), hir.lt(k, _start(t, count), span=t.span), span=t.span)
    if step != 1:
        inside = hir.logical_and(inside, hir.eq(hir.mul(k, step, span=t.span), rel, span=t.span), span=t.span)
    last = _start(t, dim_expr("sub", count, 1))
    index = hir.minimum(hir.maximum(k, 0, span=t.span), last, span=t.span)
    gathered = hir.take(src, index, axis=axis, span=t.span)
    mask_shape = (xt.shape[axis],) + (1,) * (rank - axis - 1)
    mask = hir.reshape(inside, shape=mask_shape, span=t.span) if len(mask_shape) > 1 else inside
    return hir.where(mask, gathered, x, span=t.span)


@register("slice_scatter.default")
def _slice_scatter(t: NodeContext) -> Result:
    x, src = t.tensor("self"), t.tensor("src")
    xt = t.type_of(x)
    axis = _axis(t, t.integer("dim", 0), len(xt.shape))
    step = t.integer("step", 1)
    if step < 1:
        raise RuleError(f"slice_scatter step {step} must be positive")
    raw = t.arg("start")
    start = _normalise_index(t, 0 if raw is None else t.size("start"), xt.shape[axis], clamp=True)
    return scatter_window(t, x, src, axis, start, step)


@register("select_scatter.default")
def _select_scatter(t: NodeContext) -> Result:
    x, src = t.tensor("self"), t.tensor("src")
    xt = t.type_of(x)
    axis = _axis(t, t.integer("dim"), len(xt.shape))
    index = _normalise_index(t, t.size("index"), xt.shape[axis], clamp=False)
    st = t.type_of(src).shape
    lifted = hir.reshape(src, shape=st[:axis] + (1,) + st[axis:], span=t.span)
    return scatter_window(t, x, lifted, axis, index, 1)
