"""ATen rules: convolution, pooling, nearest-neighbour resampling, padding, batch norm (in
evaluation mode) and group norm — each the catalogue op named after the same torch function.

Output sizes of the resampling ops come from torch's own output types (``t.out``), so a
``scale_factor`` never needs re-deriving; the scale itself is kept where torch's kernel
reads it (nearest-neighbour indices depend on it).
"""

import tfexec.ops as hir
from tfexec.frontends.torch._context import NodeContext, Result, RuleError
from tfexec.frontends.torch._registry import register
from tfexec.ir.dims import ShapeDim
from tfexec.ir.expr import Expr

# -- convolution ----------------------------------------------------------------------------


@register("convolution.default", "conv1d.default", "conv2d.default", "conv3d.default", "conv1d.padding", "conv2d.padding", "conv3d.padding")
def _convolution(t: NodeContext) -> Result:
    """``conv`` (``conv_transpose`` when ``transposed``). ``padding="same"`` pads ``(k - 1) *
    dilation / 2`` on each side when that is whole (torch pads one more on the right
    otherwise: refused here), ``"valid"`` pads nothing."""
    if t.arg("transposed"):
        return _conv_transpose(t)
    x, w = t.tensor("input"), t.tensor("weight")
    wt = t.type_of(w)
    n = len(wt.shape) - 2
    dilation = t.ints("dilation") or (1,)
    raw = t.arg("padding")
    if isinstance(raw, str):
        padding = _same_padding(wt.shape[2:], dilation, n) if raw == "same" else (0,)
    else:
        padding = t.ints("padding") or (0,)
    xt = t.type_of(x)
    if len(xt.shape) == n + 1:  # unbatched: (C, *spatial)
        batched = hir.reshape(x, shape=(1, *xt.shape), span=t.span)
        out = _conv(t, batched, w, padding, dilation)
        return hir.reshape(out, shape=t.out.shape, span=t.span)
    return _conv(t, x, w, padding, dilation)


def _conv(t: NodeContext, x: Expr, w: Expr, padding: tuple[int, ...], dilation: tuple[int, ...]) -> Expr:
    return hir.conv(
        x, w, t.opt_tensor("bias"), stride=t.ints("stride") or (1,), padding=padding, dilation=dilation,
        groups=t.integer("groups", 1), span=t.span,
    )


@register("conv_transpose1d.default", "conv_transpose2d.input", "conv_transpose3d.input")
def _conv_transpose(t: NodeContext) -> Result:
    """``conv_transpose`` (batched; an unbatched input gets a unit batch axis)."""
    x, w = t.tensor("input"), t.tensor("weight")
    xt, n = t.type_of(x), len(t.type_of(w).shape) - 2
    batched = len(xt.shape) == n + 2
    if not batched:
        x = hir.reshape(x, shape=(1, *xt.shape), span=t.span)
    out = hir.conv_transpose(
        x, w, t.opt_tensor("bias"), stride=t.ints("stride") or (1,), padding=t.ints("padding") or (0,),
        output_padding=t.ints("output_padding") or (0,), dilation=t.ints("dilation") or (1,), groups=t.integer("groups", 1),
        span=t.span,
    )
    return out if batched else hir.reshape(out, shape=t.out.shape, span=t.span)


def _same_padding(kernel: tuple[ShapeDim, ...], dilation: tuple[int, ...], n: int) -> tuple[int, ...]:
    out = []
    for axis, k in enumerate(kernel):
        d = dilation[axis] if len(dilation) == n else dilation[0]
        if not isinstance(k, int) or (d * (k - 1)) % 2:
            raise RuleError(f"padding='same' with kernel {k} and dilation {d} pads unevenly; pad explicitly (F.pad) first")
        out.append(d * (k - 1) // 2)
    return tuple(out)


# -- pooling and resampling ---------------------------------------------------------------------


@register("max_pool1d.default", "max_pool2d.default", "max_pool3d.default", "max_pool2d_with_indices.default",
          "max_pool3d_with_indices.default", "max_pool1d_with_indices.default")
def _max_pool(t: NodeContext) -> Result:
    """``max_pool``; the indices output of ``*_with_indices`` is not provided."""
    out = hir.max_pool(
        t.tensor("self"), kernel=t.ints("kernel_size") or (1,), stride=t.ints("stride") or None,
        padding=t.ints("padding") or (0,), dilation=t.ints("dilation") or (1,), ceil_mode=bool(t.arg("ceil_mode", False)),
        span=t.span,
    )
    return (out, None) if "with_indices" in t.op else out


@register("avg_pool1d.default", "avg_pool2d.default", "avg_pool3d.default")
def _avg_pool(t: NodeContext) -> Result:
    divisor = t.arg("divisor_override")
    return hir.avg_pool(
        t.tensor("self"), kernel=t.ints("kernel_size") or (1,), stride=t.ints("stride") or None,
        padding=t.ints("padding") or (0,), ceil_mode=bool(t.arg("ceil_mode", False)),
        count_include_pad=bool(t.arg("count_include_pad", True)), divisor_override=None if divisor is None else t.integer("divisor_override"),
        span=t.span,
    )


@register("adaptive_avg_pool1d.default", "adaptive_avg_pool2d.default", "adaptive_avg_pool3d.default",
          "_adaptive_avg_pool2d.default", "_adaptive_avg_pool3d.default")
def _adaptive_avg_pool(t: NodeContext) -> Result:
    size = t.ints("output_size")
    if not size:
        raise RuleError("adaptive_avg_pool needs a static output_size")
    return hir.adaptive_avg_pool(t.tensor("self"), output_size=size, span=t.span)


_UPSAMPLE: dict[str, str] = {
    "upsample_nearest": "nearest", "_upsample_nearest_exact": "nearest-exact", "upsample_linear": "linear",
    "upsample_bilinear": "bilinear", "upsample_bicubic": "bicubic", "upsample_trilinear": "trilinear",
}


def _upsample_overloads() -> list[str]:
    out = []
    for stem, mode in _UPSAMPLE.items():
        axes = (1, 2, 3) if mode.startswith("nearest") else ({"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}[mode],)
        out += [f"{stem}{n}d.{overload}" for n in axes for overload in ("default", "vec")]
    return out


@register(*_upsample_overloads())
def _upsample(t: NodeContext) -> Result:
    """``interpolate`` to torch's output size in the op's mode, keeping a given scale factor
    (torch's kernels map output to input positions with it) and ``align_corners``."""
    x = t.tensor("input" if t.has("input") else "self")
    n = len(t.type_of(x).shape) - 2
    packet = str(t.node.target).split(".")[1]
    mode = _UPSAMPLE[packet[: -len("1d")]]
    if t.op.endswith(".vec"):
        given = t.arg("scale_factors")
        if given is not None and not (isinstance(given, (list, tuple)) and all(isinstance(s, (int, float)) for s in given)):
            raise RuleError(f"scale_factors {given!r} are not static numbers")
        scales = None if given is None else tuple(float(s) for s in given)
    else:
        names = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}.get(n, ())
        parts = [t.arg(name) for name in names]
        scales = tuple(float(t.scalar(name)) for name in names) if parts and None not in parts else None
    if scales is not None and len(scales) == 1 and n > 1:
        scales = scales * n
    align = bool(t.arg("align_corners")) if not mode.startswith("nearest") else False
    return hir.interpolate(x, size=t.out.shape[2:], mode=mode, scales=scales, align_corners=align, span=t.span)  # type: ignore[arg-type]


# -- padding ------------------------------------------------------------------------------------


@register("constant_pad_nd.default", "pad.default", "reflection_pad1d.default", "reflection_pad2d.default",
          "reflection_pad3d.default", "replication_pad1d.default", "replication_pad2d.default", "replication_pad3d.default",
          "_pad_circular.default")
def _pad(t: NodeContext) -> Result:
    """``pad`` in the mode the ATen op names (``constant_pad_nd``: constant)."""
    pads = t.ints("pad") or t.ints("padding")
    if pads is None:
        raise RuleError("pad needs static pad sizes")
    mode = "constant"
    if "reflection" in t.op:
        mode = "reflect"
    elif "replication" in t.op:
        mode = "replicate"
    elif "circular" in t.op:
        mode = "circular"
    elif t.op.startswith("aten.pad."):
        mode = str(t.arg("mode", "constant"))
    value = t.arg("value")
    fill = 0.0 if value is None else float(t.scalar("value"))
    return hir.pad(t.tensor("self"), pads=pads, mode=mode, value=fill, span=t.span)  # type: ignore[arg-type]


# -- channel normalisation -----------------------------------------------------------------------


@register("batch_norm.default", "_native_batch_norm_legit_no_training.default", "native_batch_norm.default")
def _batch_norm(t: NodeContext) -> Result:
    """``batch_norm`` with the running statistics (evaluation mode); training mode, which
    updates them, is refused. The saved mean and rstd outputs are not provided."""
    if t.arg("training"):
        raise RuleError("batch norm in training mode updates its statistics; call module.eval() before importing")
    x = t.tensor("input")
    mean, var = t.opt_tensor("running_mean"), t.opt_tensor("running_var")
    if mean is None or var is None:
        raise RuleError("batch norm without running statistics normalises by the batch's own (training mode)")
    weight, bias = t.opt_tensor("weight"), t.opt_tensor("bias")
    if bias is not None and weight is None:
        channels = t.type_of(x).shape[1]
        weight = hir.full(shape=(channels,), value=1.0, dtype=t.type_of(x).dtype, span=t.span)
    out = hir.batch_norm(x, mean, var, weight, bias, eps=float(t.scalar("eps", 1e-5)), span=t.span)
    return out if t.op.startswith("aten.batch_norm") else (out, None, None)


@register("group_norm.default", "native_group_norm.default")
def _group_norm(t: NodeContext) -> Result:
    """``group_norm``; ``native_group_norm``'s mean and rstd outputs are not provided."""
    x = t.tensor("input")
    groups = t.integer("num_groups") if t.has("num_groups") else t.integer("group")
    weight, bias = t.opt_tensor("weight"), t.opt_tensor("bias")
    if bias is not None and weight is None:
        weight = hir.full(shape=(t.type_of(x).shape[1],), value=1.0, dtype=t.type_of(x).dtype, span=t.span)
    out = hir.group_norm(x, weight, bias, groups=groups, eps=float(t.scalar("eps", 1e-5)), span=t.span)
    return out if t.op.startswith("aten.group_norm") else (out, None, None)


@register("instance_norm.default")
def _instance_norm(t: NodeContext) -> Result:
    """Each channel of each sample normalised over its own elements: ``group_norm`` with one
    group per channel (the same formula; torch's kernel accumulates differently, equal within
    rounding). With ``use_input_stats=False`` the running statistics apply: ``batch_norm``."""
    x = t.tensor("input")
    xt = t.type_of(x)
    weight, bias = t.opt_tensor("weight"), t.opt_tensor("bias")
    if bias is not None and weight is None:
        weight = hir.full(shape=(xt.shape[1],), value=1.0, dtype=xt.dtype, span=t.span)
    eps = float(t.scalar("eps", 1e-5))
    if not t.arg("use_input_stats", True):
        mean, var = t.opt_tensor("running_mean"), t.opt_tensor("running_var")
        if mean is None or var is None:
            raise RuleError("instance norm without input statistics needs running statistics")
        return hir.batch_norm(x, mean, var, weight, bias, eps=eps, span=t.span)
    channels = xt.shape[1]
    if not isinstance(channels, int):
        raise RuleError(f"instance norm over a symbolic number of channels ({channels})")
    return hir.group_norm(x, weight, bias, groups=channels, eps=eps, span=t.span)
