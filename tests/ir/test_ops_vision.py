"""Type rules of the vision families' ops — ``conv``, the pools, ``interpolate``,
``batch_norm``, ``group_norm`` — checked against torch: output shapes on meta tensors over
strides, padding, dilation, groups and ``ceil_mode`` (refusals confirmed on CPU), symbolic
spatial sizes, and the errors each citing its constraint."""

from collections.abc import Callable
from itertools import product

import pytest
import torch
import torch.nn.functional as F

from tfexec import DimVar, DType, TensorType, TypeInferenceError, ops, resolve_dim

from ir.op_helpers import infer, rule_outcome, torch_verdict

B, H = DimVar("B"), DimVar("H")
F32, F16 = DType.float32, DType.float16
CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def agree(rule: Callable[..., object], reference: Callable[..., torch.Tensor], *operands: tuple[tuple[int, ...], DType]) -> None:
    want = torch_verdict(reference, *operands)
    got = rule_outcome(rule, *(TensorType(s, d) for s, d in operands))  # type: ignore[arg-type]
    assert got == want, f"{operands}: torch {want}, rule {got}"


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize(("stride", "padding", "dilation", "groups"), [(1, 0, 1, 1), (2, 1, 1, 1), (3, 2, 2, 2), (1, 0, 1, 4), (2, 5, 1, 1)])
def test_conv_shapes_match_torch(n: int, stride: int, padding: int, dilation: int, groups: int) -> None:
    x = (2, 4) + (7, 6, 5)[:n]
    w = (8, 4 // groups) + (3, 2, 3)[:n]
    agree(
        lambda a, k, b: ops.conv(a, k, b, stride=(stride,), padding=(padding,), dilation=(dilation,), groups=groups),
        lambda a, k, b: CONV[n](a, k, b, stride, padding, dilation, groups),
        (x, F32), (w, F32), ((8,), F32),
    )


@pytest.mark.parametrize(
    ("x", "w", "b", "groups"),
    [((1, 3, 5), (2, 2, 3), None, 1), ((1, 4, 5), (3, 2, 3), None, 2), ((1, 2, 2), (1, 2, 3), None, 1), ((1, 2, 5), (3, 2, 3), (2,), 1),
     ((1, 2, 5), (3, 2), None, 1), ((2, 5), (3, 2, 3), None, 1), ((1, 1, 1, 1, 1, 1), (1, 1, 1, 1, 1, 1), None, 1)],
)
def test_conv_refusals_match_torch(x: tuple[int, ...], w: tuple[int, ...], b: tuple[int, ...] | None, groups: int) -> None:
    operands = [(x, F32), (w, F32)] + ([] if b is None else [(b, F32)])
    assert torch_verdict(lambda *t: torch.convolution(*t, *([None] if b is None else []), [1], [0], [1], False, [0], groups), *operands) == "error"
    with pytest.raises(TypeInferenceError, match=r"\[conv \(C\d\)\]"):
        infer(lambda *t: ops.conv(*t, groups=groups), *(TensorType(s, d) for s, d in operands))


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize(
    ("stride", "padding", "output_padding", "dilation", "groups"),
    [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (3, 2, 2, 2, 2), (1, 0, 1, 2, 4), (2, 0, 2, 1, 1), (1, 4, 0, 1, 1)],
)
def test_conv_transpose_shapes_match_torch(n: int, stride: int, padding: int, output_padding: int, dilation: int, groups: int) -> None:
    x = (2, 4) + (5, 4, 3)[:n]
    w = (4, 2) + (3, 2, 3)[:n]  # 4 input channels, 2 output channels per group
    out_channels = 2 * groups
    agree(
        lambda a, k, b: ops.conv_transpose(
            a, k, b, stride=(stride,), padding=(padding,), output_padding=(output_padding,), dilation=(dilation,), groups=groups
        ),
        lambda a, k, b: getattr(F, f"conv_transpose{n}d")(a, k, b, stride, padding, output_padding, groups, dilation),
        (x, F32), (w, F32), ((out_channels,), F32),
    )


@pytest.mark.parametrize(("dx", "dw"), list(product([F32, F16, DType.bfloat16, DType.int64, DType.int32], repeat=2)))
def test_conv_dtypes_are_one_floating_dtype(dx: DType, dw: DType) -> None:
    got = rule_outcome(ops.conv, TensorType((1, 2, 5), dx), TensorType((3, 2, 3), dw))
    want = torch_verdict(F.conv1d, ((1, 2, 5), dx), ((3, 2, 3), dw))
    if got == "error":
        assert want == "error" or not dx.is_floating  # kept stricter than torch on integers
    else:
        assert got == want


def test_conv_over_symbolic_spatial_sizes() -> None:
    t = infer(lambda a, k: ops.conv(a, k, stride=(2,), padding=(1,)), TensorType((B, 3, H, H), F32), TensorType((8, 3, 3, 3), F32))
    assert isinstance(t, TensorType) and t.shape[:2] == (B, 8)
    for size in (5, 6, 31):
        out = F.conv2d(torch.ones(1, 3, size, size, device="meta"), torch.ones(8, 3, 3, 3, device="meta"), stride=2, padding=1)
        assert resolve_dim(t.shape[2], {"H": size}) == out.shape[2]


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize(("kernel", "stride", "padding", "ceil_mode"), [(2, None, 0, False), (3, 2, 1, True), (3, 2, 1, False), (2, 3, 1, True), (3, 1, 2, False), (5, 1, 0, False)])
@pytest.mark.parametrize("batched", [True, False])
def test_pools_match_torch(n: int, kernel: int, stride: int | None, padding: int, ceil_mode: bool, batched: bool) -> None:
    x = ((2,) if batched else ()) + (3,) + (7, 4)[:n]
    steps = None if stride is None else (stride,)
    agree(
        lambda a: ops.max_pool(a, kernel=(kernel,) * n, stride=steps, padding=(padding,), ceil_mode=ceil_mode),
        lambda a: getattr(F, f"max_pool{n}d")(a, kernel, stride, padding, ceil_mode=ceil_mode),
        (x, F32),
    )
    agree(
        lambda a: ops.avg_pool(a, kernel=(kernel,) * n, stride=steps, padding=(padding,), ceil_mode=ceil_mode),
        lambda a: getattr(F, f"avg_pool{n}d")(a, kernel, stride, padding, ceil_mode),
        (x, F32),
    )


def test_max_pool_dilation_and_symbolic_ceil_mode() -> None:
    for padding in (1, 2):  # torch limits the padding by the kernel, not the dilated kernel
        agree(
            lambda a: ops.max_pool(a, kernel=(3,), dilation=(2,), padding=(padding,)),
            lambda a: F.max_pool1d(a, 3, padding=padding, dilation=2),
            ((1, 2, 9), F32),
        )
    t = infer(lambda a: ops.max_pool(a, kernel=(3,), stride=(2,), padding=(1,), ceil_mode=True), TensorType((1, 2, H), F32))
    assert isinstance(t, TensorType)
    for size in range(3, 12):
        want = F.max_pool1d(torch.ones(1, 2, size, device="meta"), 3, 2, 1, ceil_mode=True).shape[-1]
        assert resolve_dim(t.shape[-1], {"H": size}) == want, size


@pytest.mark.parametrize(("x", "size"), [((1, 3, 7, 5), (2, 3)), ((2, 7), (4,)), ((1, 3, 7), (7,)), ((1, 3, 0), (2,)), ((3,), (1,))])
def test_adaptive_avg_pool_matches_torch(x: tuple[int, ...], size: tuple[int, ...]) -> None:
    fn = getattr(F, f"adaptive_avg_pool{len(size)}d")
    agree(lambda a: ops.adaptive_avg_pool(a, output_size=size), lambda a: fn(a, size), (x, F32))


@pytest.mark.parametrize(("x", "size"), [((1, 2, 3, 4), (5, 7)), ((1, 2, 3), (9,)), ((1, 1, 2, 2, 2), (3, 3, 3)), ((2, 3), (4,))])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_interpolate_matches_torch(x: tuple[int, ...], size: tuple[int, ...], mode: str) -> None:
    agree(lambda a: ops.interpolate(a, size=size, mode=mode), lambda a: F.interpolate(a, size=size, mode=mode), (x, F32))  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["linear", "bilinear", "bicubic", "trilinear"])
@pytest.mark.parametrize("rank", [3, 4, 5])
@pytest.mark.parametrize("align_corners", [False, True])
def test_interpolating_modes_match_torch(mode: str, rank: int, align_corners: bool) -> None:
    x = (1, 2, 3, 4, 5)[:rank]
    size = (6, 7, 8)[: rank - 2]
    agree(
        lambda a: ops.interpolate(a, size=size, mode=mode, align_corners=align_corners),  # type: ignore[arg-type]
        lambda a: F.interpolate(a, size=size, mode=mode, align_corners=align_corners),
        (x, F32),
    )


def test_nearest_takes_no_align_corners() -> None:
    with pytest.raises(TypeInferenceError, match=r"interpolate mode 'nearest' over 1 spatial axis/axes with align_corners: 'nearest' takes no align_corners \[interpolate \(C4\)\]"):
        infer(lambda a: ops.interpolate(a, size=(4,), align_corners=True), TensorType((1, 1, 2), F32))


def test_interpolate_keeps_symbolic_sizes() -> None:
    assert infer(lambda a: ops.interpolate(a, size=(H * 2,)), TensorType((B, 3, H), F32)) == TensorType((B, 3, H * 2), F32)
    with pytest.raises(TypeInferenceError, match=r"interpolate scales \(2.0, 2.0\) must hold 1 positive number\(s\) \[interpolate \(C1\)\]"):
        infer(lambda a: ops.interpolate(a, size=(6,), scales=(2.0, 2.0)), TensorType((1, 3, 3), F32))


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (2, 3, 4, 5), (3,)])
@pytest.mark.parametrize("stat_dtype", [F32, F16])
def test_batch_norm_matches_torch(shape: tuple[int, ...], stat_dtype: DType) -> None:
    stats = ((3,), stat_dtype)
    want = torch_verdict(lambda a, m, v, w, b: F.batch_norm(a, m, v, w, b), (shape, F32), stats, stats, stats, stats)
    got = rule_outcome(ops.batch_norm, *(TensorType(s, d) for s, d in [(shape, F32), stats, stats, stats, stats]))
    if stat_dtype is F32:
        assert got == want
    else:
        assert got == "error"  # kept stricter: statistics in x's dtype


@pytest.mark.parametrize(("shape", "groups"), [((2, 6, 4), 3), ((2, 6), 2), ((2, 6, 4), 4), ((6,), 1), ((1, 4, 2, 2), 4)])
def test_group_norm_matches_torch(shape: tuple[int, ...], groups: int) -> None:
    agree(lambda a: ops.group_norm(a, groups=groups), lambda a: F.group_norm(a, groups), (shape, F32))
    channels = ((shape[1],) if len(shape) > 1 else (1,), F32)
    agree(lambda a, w, b: ops.group_norm(a, w, b, groups=groups), lambda a, w, b: F.group_norm(a, groups, w, b), (shape, F32), channels, channels)


def test_norm_builders_need_a_weight_for_a_bias() -> None:
    x = ops.as_expr(1.0)
    with pytest.raises(Exception, match=r"batch_norm: a bias needs a weight"):
        ops.batch_norm(x, x, x, bias=x)
    with pytest.raises(Exception, match=r"group_norm: a bias needs a weight"):
        ops.group_norm(x, bias=x, groups=1)
    with pytest.raises(TypeError, match=r"group_norm groups must be at least 1, got 0"):
        ops.group_norm(x, groups=0)
    with pytest.raises(TypeError, match=r"conv stride must hold ints of at least 1"):
        ops.conv(x, x, stride=(0,))


# -- attention -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("q", "k", "v", "mask", "gqa"),
    [((2, 5, 8), (2, 7, 8), (2, 7, 6), None, False), ((2, 4, 5, 8), (2, 2, 7, 8), (2, 2, 7, 8), None, True),
     ((2, 4, 5, 8), (2, 2, 7, 8), (2, 2, 7, 8), None, False), ((2, 4, 5, 8), (2, 3, 7, 8), (2, 3, 7, 8), None, True),
     ((2, 4, 5, 8), (2, 1, 7, 8), (2, 1, 7, 8), None, False), ((2, 4, 5, 8), (1, 4, 7, 8), (1, 1, 7, 8), None, False),
     ((5, 8), (7, 8), (7, 3), (5, 7), False), ((2, 5, 8), (2, 7, 8), (2, 7, 8), (1, 7), False),
     ((2, 5, 8), (2, 7, 8), (2, 7, 8), (3, 5, 7), False), ((2, 5, 8), (2, 7, 4), (2, 7, 8), None, False),
     ((2, 5, 8), (2, 7, 8), (2, 6, 8), None, False), ((8,), (8,), (8,), None, False)],
)
@pytest.mark.parametrize("mask_dtype", [DType.bool, F32, F16])
def test_attention_matches_torch(
    q: tuple[int, ...], k: tuple[int, ...], v: tuple[int, ...], mask: tuple[int, ...] | None, gqa: bool, mask_dtype: DType
) -> None:
    operands = [(q, F32), (k, F32), (v, F32)] + ([] if mask is None else [(mask, mask_dtype)])
    want = torch_verdict(lambda *t: F.scaled_dot_product_attention(*t[:3], attn_mask=t[3] if len(t) > 3 else None, enable_gqa=gqa), *operands)
    got = rule_outcome(lambda *t: ops.attention(*t, enable_gqa=gqa), *(TensorType(s, d) for s, d in operands))
    if want != got and mask_dtype is F16 and mask is not None:
        assert got == "error"  # kept stricter: a floating mask has q's dtype
    else:
        assert got == want


@pytest.mark.parametrize("dtype", [F16, DType.bfloat16, DType.float64, DType.int32])
def test_attention_dtypes_match_torch(dtype: DType) -> None:
    agree(lambda a, b, c: ops.attention(a, b, c), F.scaled_dot_product_attention, ((2, 3, 4), dtype), ((2, 5, 4), dtype), ((2, 5, 4), dtype))


def test_attention_keeps_symbolic_lengths_and_refuses_mask_with_causal() -> None:
    t = infer(lambda a, b: ops.attention(a, b, b, is_causal=True), TensorType((B, 4, H, 8), F32), TensorType((B, 4, H, 8), F32))
    assert t == TensorType((B, 4, H, 8), F32)
    with pytest.raises(TypeInferenceError, match=r"attention takes a mask or is_causal, not both \[attention \(C5\)\]"):
        infer(lambda a, m: ops.attention(a, a, a, m, is_causal=True), TensorType((2, 3), F32), TensorType((2, 2), DType.bool))
