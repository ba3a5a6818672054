"""Value rules of the rounding, math, activation, integer, scan, indexing, rearranging,
sorting, aggregate, vision, attention and linear families (hir.md §ops, "Value rules are
torch's, by name"), case by case.

For each op: the value equals its torch function's, bitwise; both routes agree node by
node; the data has the inferred type. Then the decisions fixed where torch leaves them open
(no wrap-around indices, duplicate scatter targets, the order of equal elements in sorts
and top-k, ``axes=()``, integer division by zero), and bad arguments: refused on both
routes with one message citing the constraint.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F

import tfexec
from tfexec import DimVar, DType, EvalError, Expr, TensorType, ops

from ir.value_helpers import assert_same, errors_of, evaluate_both, sample

B, S = DimVar("B"), DimVar("S")
F32, F16, BF16, F64 = DType.float32, DType.float16, DType.bfloat16, DType.float64
I8, I32, I64, U8, BOOL = DType.int8, DType.int32, DType.int64, DType.uint8, DType.bool


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[..., Expr]
    operands: tuple[object, ...]
    reference: Callable[..., torch.Tensor]


def _unary(name: str, fn: Callable[[torch.Tensor], torch.Tensor], dtypes: list[DType]) -> list[Case]:
    return [Case(name, getattr(ops, name), (sample((3, 4), d, i),), fn) for i, d in enumerate(dtypes)]


def _binary(name: str, fn: Callable[..., torch.Tensor], pairs: list[tuple[DType, DType]], low: int = -6) -> list[Case]:
    out = []
    for i, (da, db) in enumerate(pairs):
        b = sample((4,), db, 10 + i, low=1, high=5)
        out.append(Case(name, getattr(ops, name), (sample((3, 4), da, i, low=low), b), fn))
    out.append(Case(name, lambda a: getattr(ops, name)(a, 3), (sample((5,), I32, 7, low=low),), lambda a: fn(a, 3)))
    return out


FLOATS = [F32, F16, BF16, F64]
NUMBERS = [F32, BF16, I32, I64, U8]
MATH = [F32, F16, F64, I32, BOOL]
INTS = [(I32, I32), (I64, I8), (U8, U8), (I32, F32), (F16, F16), (F32, I64)]


def _cases() -> list[Case]:
    cases: list[Case] = []
    for name, fn in [("floor", torch.floor), ("ceil", torch.ceil), ("trunc", torch.trunc)]:
        cases += _unary(name, fn, NUMBERS)
    cases += _unary("sign", torch.sign, [*NUMBERS, BOOL])
    cases += _unary("round", torch.round, NUMBERS)
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 1.25, 1.35, 2.675])
    cases.append(Case("round", ops.round, (x,), torch.round))
    cases.append(Case("round", lambda t: ops.round(t, decimals=1), (x,), lambda t: torch.round(t, decimals=1)))
    cases += [
        Case("clamp", lambda t: ops.clamp(t, -0.5, 0.75), (sample((3, 4), F32),), lambda t: torch.clamp(t, -0.5, 0.75)),
        Case("clamp", lambda t: ops.clamp(t, 0.5, 2), (sample((6,), I32),), lambda t: torch.clamp(t, 0.5, 2)),
        Case("clamp", lambda t, lo, hi: ops.clamp(t, lo, hi), (sample((2, 3), F16), sample((3,), F16, 1), sample((2, 1), F32, 2)),
             torch.clamp),
        Case("clamp", lambda t, hi: ops.clamp(t, 0, hi), (sample((4,), I32), sample((4,), I64, 3)),
             lambda t, hi: torch.clamp(t, torch.tensor(0), hi)),
        Case("clamp", lambda t: ops.clamp(t, 1.0, -1.0), (sample((4,), F32),), lambda t: torch.clamp(t, 1.0, -1.0)),
    ]
    for name in ("log1p", "expm1", "log2", "log10", "tan", "atan", "reciprocal"):
        cases += _unary(name, getattr(torch, name), MATH)
    special = torch.tensor([0.0, float("nan"), float("inf"), -float("inf"), 1.5])
    for name in ("isnan", "isinf", "isfinite", "logical_not"):
        cases += _unary(name, getattr(torch, name), [F32, I32, BOOL])
        cases.append(Case(name, getattr(ops, name), (special,), getattr(torch, name)))
    cases += [
        Case("elu", lambda t: ops.elu(t, alpha=0.5), (sample((3, 4), F32),), lambda t: F.elu(t, 0.5)),
        Case("elu", ops.elu, (sample((3, 4), BF16),), F.elu),
        Case("selu", ops.selu, (sample((3, 4), F32),), F.selu),
        Case("celu", lambda t: ops.celu(t, alpha=2.0), (sample((3, 4), F64),), lambda t: F.celu(t, 2.0)),
        Case("leaky_relu", lambda t: ops.leaky_relu(t, negative_slope=0.2), (sample((3, 4), F16),),
             lambda t: F.leaky_relu(t, 0.2)),
        Case("softplus", lambda t: ops.softplus(t, beta=2.0, threshold=1.0), (sample((3, 4), F32),),
             lambda t: F.softplus(t, 2.0, 1.0)),
        Case("softplus", ops.softplus, (sample((3, 4), F32) * 20,), F.softplus),
        Case("hardsigmoid", ops.hardsigmoid, (sample((3, 4), F32),), F.hardsigmoid),
        Case("hardswish", ops.hardswish, (sample((3, 4), BF16),), F.hardswish),
        Case("mish", ops.mish, (sample((3, 4), F32),), F.mish),
    ]
    cases += _binary("floor_divide", torch.floor_divide, INTS)
    cases += _binary("trunc_divide", lambda a, b: torch.div(a, b, rounding_mode="trunc"), INTS)
    cases += _binary("remainder", torch.remainder, INTS)
    cases += _binary("fmod", torch.fmod, INTS)
    bits = [(I32, I32), (I64, I8), (U8, U8), (BOOL, BOOL), (BOOL, I32)]
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        cases += _binary(name, getattr(torch, name), bits, low=-100)
    cases += _binary("logical_xor", lambda a, b: torch.logical_xor(a, torch.as_tensor(b)), [(F32, I32), (BOOL, BOOL)])
    cases += _unary("bitwise_not", torch.bitwise_not, [I32, I8, U8, BOOL])
    cases += [
        Case("cumsum", lambda t: ops.cumsum(t, axis=1), (sample((3, 4), F32),), lambda t: torch.cumsum(t, 1)),
        Case("cumsum", lambda t: ops.cumsum(t, axis=-1), (sample((2, 5), BOOL),), lambda t: torch.cumsum(t, -1)),
        Case("cumsum", lambda t: ops.cumsum(t, axis=0, dtype=F64), (sample((4, 2), I32),),
             lambda t: torch.cumsum(t, 0, dtype=torch.float64)),
        Case("cumsum", lambda t: ops.cumsum(t, axis=0), ((TensorType((S, 3), I8), sample((5, 3), I8)),), lambda t: torch.cumsum(t, 0)),
        Case("cumsum", lambda t: ops.cumsum(t, axis=0), (torch.tensor(3.5),), lambda t: torch.cumsum(t, 0)),
        Case("cumprod", lambda t: ops.cumprod(t, axis=1), (sample((3, 4), F32),), lambda t: torch.cumprod(t, 1)),
        Case("cumprod", lambda t: ops.cumprod(t, axis=0), (sample((4,), I32),), lambda t: torch.cumprod(t, 0)),
    ]
    x34 = sample((3, 4), F32)
    gidx = torch.tensor([[0, 3, 3], [2, 1, 0]])
    cases += [
        Case("gather", lambda t, i: ops.gather(t, i, axis=1), (x34, gidx), lambda t, i: torch.gather(t, 1, i)),
        Case("gather", lambda t, i: ops.gather(t, i, axis=0), (sample((3, 4), BF16), torch.tensor([[2, 0, 1, 1]])),
             lambda t, i: torch.gather(t, 0, i)),
        Case("gather", lambda t, i: ops.gather(t, i, axis=-1), ((TensorType((B, 4), F32), x34), (TensorType((B, 2), I64), gidx[:, :2].repeat(2, 1)[:3])),
             lambda t, i: torch.gather(t, -1, i)),
    ]
    rows, cols = torch.tensor([2, 0, 1]), torch.tensor([[3], [0]], dtype=torch.int32)
    x234 = sample((2, 3, 4), F32, 5)
    cases += [
        Case("index", lambda t, i, j: ops.index(t, i, j, axes=(0, 1)), (x34, rows, cols), lambda t, i, j: t[i, j]),
        Case("index", lambda t, i: ops.index(t, i, axes=(1,)), (x234, rows), lambda t, i: t[:, i]),
        Case("index", lambda t, i, j: ops.index(t, i, j, axes=(0, 2)), (x234, torch.tensor([1, 0]), torch.tensor([[3], [1]])),
             lambda t, i, j: t[i, :, j]),
        Case("index", lambda t, i: ops.index(t, i, axes=(-1,)), (sample((3, 4), I64), torch.tensor([[1, 1], [0, 3]])),
             lambda t, i: t[:, i]),
        Case("index", lambda t, i, j: ops.index(t, i, j, axes=(1, 2)), (x234, torch.tensor(2), torch.tensor([0, 3])),
             lambda t, i, j: t[:, i, j]),
    ]
    src = sample((2, 4), F32, 9)
    cases += [
        Case("scatter", lambda t, i, s: ops.scatter(t, i, s, axis=1), (x34.clone(), torch.tensor([[3, 0], [1, 2]]), src),
             lambda t, i, s: torch.scatter(t, 1, i, s)),
        Case("scatter", lambda t, i, s: ops.scatter(t, i, s), (x34.clone(), torch.tensor([[2, 0, 1, 0]]), src),
             lambda t, i, s: torch.scatter(t, 0, i, s)),
        Case("scatter_add", lambda t, i, s: ops.scatter_add(t, i, s, axis=1), (x34.clone(), torch.tensor([[3, 3], [1, 1]]), src),
             lambda t, i, s: torch.scatter_add(t, 1, i, s)),
        Case("scatter_add", lambda t, i, s: ops.scatter_add(t, i, s), (sample((3,), I32), torch.tensor([0, 0, 2, 0]), sample((4,), I32, 2)),
             lambda t, i, s: torch.scatter_add(t, 0, i, s)),
    ]
    cases += [
        Case("flip", lambda t: ops.flip(t, axes=(0, 2)), (x234,), lambda t: torch.flip(t, (0, 2))),
        Case("flip", lambda t: ops.flip(t, axes=()), (x34,), lambda t: torch.flip(t, ())),
        Case("roll", lambda t: ops.roll(t, shifts=(1, -2), axes=(0, 2)), (x234,), lambda t: torch.roll(t, (1, -2), (0, 2))),
        Case("roll", lambda t: ops.roll(t, shifts=(5,)), (sample((3, 4), I32),), lambda t: torch.roll(t, 5)),
        Case("diagonal", ops.diagonal, (x34,), torch.diagonal),
        Case("diagonal", lambda t: ops.diagonal(t, offset=-1, axis1=2, axis2=0), (x234,), lambda t: torch.diagonal(t, -1, 2, 0)),
        Case("diagonal", lambda t: ops.diagonal(t, offset=5), (x34,), lambda t: torch.diagonal(t, 5)),
        Case("diagonal", lambda t: ops.diagonal(t, offset=1), ((TensorType((S, S), F32), sample((5, 5), F32)),),
             lambda t: torch.diagonal(t, 1)),
        Case("triu", ops.triu, (x34,), torch.triu),
        Case("triu", lambda t: ops.triu(t, diagonal=-1), (sample((2, 3, 3), BOOL),), lambda t: torch.triu(t, -1)),
        Case("tril", lambda t: ops.tril(t, diagonal=1), (sample((4, 3), I64),), lambda t: torch.tril(t, 1)),
        Case("pad", lambda t: ops.pad(t, pads=(1, 2)), (x34,), lambda t: F.pad(t, (1, 2))),
        Case("pad", lambda t: ops.pad(t, pads=(1, 0, -1, 2), value=1.5), (sample((3, 4), I32),),
             lambda t: F.pad(t, (1, 0, -1, 2), value=1.5)),
        Case("pad", lambda t: ops.pad(t, pads=(2, 1, 1, 1), mode="reflect"), (x234,), lambda t: F.pad(t, (2, 1, 1, 1), mode="reflect")),
        Case("pad", lambda t: ops.pad(t, pads=(2, 0), mode="replicate"), (x234,), lambda t: F.pad(t, (2, 0), mode="replicate")),
        Case("pad", lambda t: ops.pad(t, pads=(4, 1), mode="circular"), (x234,), lambda t: F.pad(t, (4, 1), mode="circular")),
        Case("pad", lambda t: ops.pad(t, pads=(1, 1)), ((TensorType((B, 3), F32), sample((5, 3), F32)),), lambda t: F.pad(t, (1, 1))),
    ]
    ties = torch.tensor([[3.0, 1.0, 3.0, 2.0, 1.0], [0.0, float("nan"), 0.0, -1.0, 5.0]])
    ints = sample((3, 6), I32, 4, low=0, high=3)
    cases += [
        Case("sort", ops.sort, (ties,), lambda t: torch.sort(t, stable=True)[0]),
        Case("sort", lambda t: ops.sort(t, axis=0, descending=True), (ints,), lambda t: torch.sort(t, dim=0, descending=True, stable=True)[0]),
        Case("sort", ops.sort, (sample((6,), BOOL),), lambda t: torch.sort(t, stable=True)[0]),
        Case("argsort", ops.argsort, (ties,), lambda t: torch.argsort(t, stable=True)),
        Case("argsort", lambda t: ops.argsort(t, descending=True), (ints,), lambda t: torch.argsort(t, descending=True, stable=True)),
        Case("topk", lambda t: ops.topk(t, k=3), (ties,), lambda t: torch.topk(t, 3)[0]),
        Case("topk", lambda t: ops.topk(t, k=2, axis=0, largest=False), (ints,), lambda t: torch.topk(t, 2, 0, largest=False)[0]),
        Case("argtopk", lambda t: ops.argtopk(t, k=3), (ties,), lambda t: torch.tensor([[0, 2, 3], [1, 4, 0]])),
        Case("argtopk", lambda t: ops.argtopk(t, k=2, largest=False), (ties,), lambda t: torch.tensor([[1, 4], [3, 0]])),
    ]
    cases += [
        Case("any", lambda t: ops.any(t, axes=(1,)), (sample((3, 4), BOOL),), lambda t: torch.any(t, 1)),
        Case("any", ops.any, (sample((3, 4), F32),), torch.any),
        Case("any", lambda t: ops.any(t, axes=(0, 2), keepdims=True), (sample((2, 3, 4), I32, low=0, high=2),),
             lambda t: torch.any(t, (0, 2), keepdim=True)),
        Case("any", lambda t: ops.any(t, axes=()), (sample((3,), U8, low=0, high=3),), lambda t: (t != 0).to(torch.uint8)),
        Case("all", lambda t: ops.all(t, axes=(-1,)), (sample((3, 4), BOOL),), lambda t: torch.all(t, -1)),
        Case("all", lambda t: ops.all(t, keepdims=True), (sample((3, 4), U8, low=0, high=3),), lambda t: torch.all(t, (0, 1), keepdim=True)),
        Case("all", lambda t: ops.all(t, axes=(1,)), (torch.ones(2, 0),), lambda t: torch.all(t, 1)),
        Case("vector_norm", ops.vector_norm, (sample((3, 4), F32),), torch.linalg.vector_norm),
        Case("vector_norm", lambda t: ops.vector_norm(t, ord=1, axes=(1,), keepdims=True), (sample((3, 4), F64),),
             lambda t: torch.linalg.vector_norm(t, 1, 1, True)),
        Case("vector_norm", lambda t: ops.vector_norm(t, ord=float("inf"), axes=(0,)), (sample((3, 4), BF16),),
             lambda t: torch.linalg.vector_norm(t, float("inf"), 0)),
        Case("vector_norm", lambda t: ops.vector_norm(t, ord=0), (torch.tensor([0.0, 1.0, -2.0]),),
             lambda t: torch.linalg.vector_norm(t, 0)),
        Case("histc", lambda t: ops.histc(t, bins=4, min=0.0, max=3.0), (sample((5, 6), F32, low=-1, high=5),),
             lambda t: torch.histc(t, 4, 0.0, 3.0)),
        Case("histc", lambda t: ops.histc(t, bins=3), (sample((7,), F64),), lambda t: torch.histc(t, 3)),
        Case("histc", lambda t: ops.histc(t, bins=4, min=0.0, max=3.0),  # a router's expert ids, the last on max
             (torch.tensor([[3.0, 0.0], [1.0, 3.0], [2.0, float("nan")]], dtype=torch.bfloat16),),
             lambda t: torch.histc(t, 4, 0.0, 3.0)),
        Case("histc", lambda t: ops.histc(t, bins=2), (torch.full((3,), 2.0),), lambda t: torch.histc(t, 2)),
        Case("histc", lambda t: ops.histc(t, bins=2), (torch.ones(0),), lambda t: torch.histc(t, 2)),
    ]
    img = sample((2, 4, 6, 6), F32, 11)
    w = sample((6, 2, 3, 3), F32, 12)
    cases += [
        Case("conv", lambda t, k, b: ops.conv(t, k, b, stride=(2, 1), padding=(1,), dilation=(1, 2), groups=2),
             (img, w, sample((6,), F32, 13)), lambda t, k, b: F.conv2d(t, k, b, (2, 1), 1, (1, 2), 2)),
        Case("conv", lambda t, k: ops.conv(t, k, groups=4), (img, sample((4, 1, 3, 3), F32, 14)), lambda t, k: F.conv2d(t, k, groups=4)),
        Case("conv", lambda t, k: ops.conv(t, k, stride=(2,), padding=(2,)), (sample((2, 3, 9), F32), sample((4, 3, 3), F32, 1)),
             lambda t, k: F.conv1d(t, k, stride=2, padding=2)),
        Case("conv", lambda t, k: ops.conv(t, k, padding=(1, 0, 1)), (sample((1, 2, 3, 4, 5), F32), sample((2, 2, 2, 2, 2), F32, 1)),
             lambda t, k: F.conv3d(t, k, padding=(1, 0, 1))),
        Case("conv", lambda t, k: ops.conv(t, k), ((TensorType((B, 4, S, 6), F32), img), sample((3, 4, 2, 3), F32, 15)), F.conv2d),
    ]
    cases += [
        Case("conv_transpose", lambda t, k, b: ops.conv_transpose(t, k, b, stride=(2,), padding=(1,), output_padding=(1,)),
             (img, sample((4, 3, 3, 3), F32, 16), sample((3,), F32, 17)),
             lambda t, k, b: F.conv_transpose2d(t, k, b, 2, 1, 1)),
        Case("conv_transpose", lambda t, k: ops.conv_transpose(t, k, groups=2, dilation=(2,)), (sample((2, 4, 5), F32), sample((4, 3, 3), F32, 1)),
             lambda t, k: F.conv_transpose1d(t, k, groups=2, dilation=2)),
        Case("conv_transpose", lambda t, k: ops.conv_transpose(t, k, stride=(1, 2, 1)), (sample((1, 2, 2, 3, 2), F32), sample((2, 1, 2, 2, 2), F32, 2)),
             lambda t, k: F.conv_transpose3d(t, k, stride=(1, 2, 1))),
    ]
    cases += [
        Case("max_pool", lambda t: ops.max_pool(t, kernel=(2, 2)), (img,), lambda t: F.max_pool2d(t, 2)),
        Case("max_pool", lambda t: ops.max_pool(t, kernel=(3,), stride=(2,), padding=(1,), ceil_mode=True), (sample((2, 3, 8), F32),),
             lambda t: F.max_pool1d(t, 3, 2, 1, ceil_mode=True)),
        Case("max_pool", lambda t: ops.max_pool(t, kernel=(2, 2), dilation=(2,), stride=(1,)), (img[0],),
             lambda t: F.max_pool2d(t, 2, 1, dilation=2)),
        Case("avg_pool", lambda t: ops.avg_pool(t, kernel=(3, 3), stride=(2, 2), padding=(1, 1), count_include_pad=False), (img,),
             lambda t: F.avg_pool2d(t, 3, 2, 1, count_include_pad=False)),
        Case("avg_pool", lambda t: ops.avg_pool(t, kernel=(2,), ceil_mode=True), (sample((2, 3, 7), BF16),),
             lambda t: F.avg_pool1d(t, 2, ceil_mode=True)),
        Case("avg_pool", lambda t: ops.avg_pool(t, kernel=(3,), divisor_override=2), (sample((2, 3, 7), F32),),
             lambda t: F.avg_pool2d(t.unsqueeze(-2), (1, 3), divisor_override=2).squeeze(-2)),
        Case("adaptive_avg_pool", lambda t: ops.adaptive_avg_pool(t, output_size=(1, 1)), (img,), lambda t: F.adaptive_avg_pool2d(t, 1)),
        Case("adaptive_avg_pool", lambda t: ops.adaptive_avg_pool(t, output_size=(4,)), (sample((2, 7), F32),),
             lambda t: F.adaptive_avg_pool1d(t, 4)),
        Case("interpolate", lambda t: ops.interpolate(t, size=(9, 4)), (img,), lambda t: F.interpolate(t, size=(9, 4))),
        Case("interpolate", lambda t: ops.interpolate(t, size=(10,), scales=(1.5,)), (sample((2, 3, 7), F32),),
             lambda t: F.interpolate(t, scale_factor=1.5)),
        Case("interpolate", lambda t: ops.interpolate(t, size=(5, 5), mode="nearest-exact"), (img,),
             lambda t: F.interpolate(t, size=(5, 5), mode="nearest-exact")),
        Case("interpolate", lambda t: ops.interpolate(t, size=(9, 4), mode="bilinear"), (img,),
             lambda t: F.interpolate(t, size=(9, 4), mode="bilinear")),
        Case("interpolate", lambda t: ops.interpolate(t, size=(7, 7), mode="bilinear", align_corners=True), (img,),
             lambda t: F.interpolate(t, size=(7, 7), mode="bilinear", align_corners=True)),
        Case("interpolate", lambda t: ops.interpolate(t, size=(12, 12), mode="bicubic", scales=(2.0, 2.0)), (img,),
             lambda t: F.interpolate(t, scale_factor=2.0, mode="bicubic")),
        Case("interpolate", lambda t: ops.interpolate(t, size=(11,), mode="linear"), (sample((2, 3, 7), F32),),
             lambda t: F.interpolate(t, size=(11,), mode="linear")),
        Case("interpolate", lambda t: ops.interpolate(t, size=(3, 4, 5), mode="trilinear"), (sample((1, 2, 2, 3, 4), F32),),
             lambda t: F.interpolate(t, size=(3, 4, 5), mode="trilinear")),
    ]
    mean, var = sample((4,), F32, 20), sample((4,), F32, 21).abs() + 0.5
    cases += [
        Case("batch_norm", lambda t, m, v, g, b: ops.batch_norm(t, m, v, g, b, eps=1e-3), (img, mean, var, sample((4,), F32, 22), sample((4,), F32, 23)),
             lambda t, m, v, g, b: F.batch_norm(t, m, v, g, b, eps=1e-3)),
        Case("batch_norm", lambda t, m, v: ops.batch_norm(t, m, v), (sample((5, 4), F32), mean, var), lambda t, m, v: F.batch_norm(t, m, v)),
        Case("group_norm", lambda t, g, b: ops.group_norm(t, g, b, groups=2), (img, sample((4,), F32, 24), sample((4,), F32, 25)),
             lambda t, g, b: F.group_norm(t, 2, g, b)),
        Case("group_norm", lambda t: ops.group_norm(t, groups=1, eps=0.1), (sample((3, 4, 5), F16),), lambda t: F.group_norm(t, 1, eps=0.1)),
    ]
    q, k, v = sample((2, 4, 5, 8), F32, 30), sample((2, 4, 7, 8), F32, 31), sample((2, 4, 7, 6), F32, 32)
    causal_mask = torch.ones(5, 7, dtype=torch.bool).tril()
    cases += [
        Case("attention", ops.attention, (q, k, v), F.scaled_dot_product_attention),
        Case("attention", lambda a, b, c: ops.attention(a, b, c, is_causal=True, scale=0.3), (q, k, v),
             lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True, scale=0.3)),
        Case("attention", lambda a, b, c, m: ops.attention(a, b, c, m), (q, k, v, causal_mask),
             lambda a, b, c, m: F.scaled_dot_product_attention(a, b, c, attn_mask=m)),
        Case("attention", lambda a, b, c, m: ops.attention(a, b, c, m), (q, k, v, sample((4, 1, 7), F32, 33)),
             lambda a, b, c, m: F.scaled_dot_product_attention(a, b, c, attn_mask=m)),
        Case("attention", lambda a, b, c: ops.attention(a, b, c, enable_gqa=True), (q, k[:, :2], v[:, :2]),
             lambda a, b, c: F.scaled_dot_product_attention(a, b, c, enable_gqa=True)),
        Case("attention", ops.attention, (q, k[:, :1], v[:, :1]), F.scaled_dot_product_attention),  # one shared key/value head
        Case("attention", ops.attention, (sample((5, 8), BF16), sample((3, 8), BF16, 1), sample((3, 4), BF16, 2)),
             F.scaled_dot_product_attention),
    ]
    xs, lw, lb = sample((2, 5, 8), F32, 40), sample((6, 8), F32, 41), sample((6,), F32, 42)
    cases += [
        Case("linear", ops.linear, (xs[0], lw), F.linear),
        Case("linear", ops.linear, (xs, lw, lb), F.linear),
        Case("linear", ops.linear, (xs[0, 0], lw, lb), F.linear),
        Case("linear", ops.linear, (sample((3, 2, 4, 8), F32, 43), lw, lb), F.linear),
        Case("linear", ops.linear, ((TensorType((B, S, 8), F32), xs), lw, lb), F.linear),
        Case("linear", ops.linear, (sample((5, 8), BF16, 44), sample((6, 8), BF16, 45), sample((6,), BF16, 46)), F.linear),
        Case("linear", ops.linear, (sample((5, 8), F64, 47), sample((6, 8), F64, 48)), F.linear),
        Case("linear", ops.linear, (torch.ones(3, 0), torch.ones(4, 0), lb[:4]), F.linear),
        Case("linear", ops.linear, (xs.transpose(0, 1), lw, lb), F.linear),  # a non-contiguous x
    ]
    return cases


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.name}-{i}" for i, c in enumerate(CASES)])
def test_value_rule_is_torch_on_both_routes(case: Case) -> None:
    out = evaluate_both(case.build, *case.operands)
    tensors = [op[1] if isinstance(op, tuple) else op for op in case.operands if isinstance(op, (tuple, torch.Tensor))]
    assert_same(out, case.reference(*tensors))


# -- decisions torch leaves open --------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "operands", "message"),
    [
        (lambda x, i: ops.gather(x, i, axis=1), (torch.ones(2, 3), torch.tensor([[0], [-1]])),
         r"gather: index -1 is out of range for axis 1 of length 3 \(expected 0\.\.2; indices never wrap around\) \[gather \(C5\)\]"),
        (lambda x, i: ops.gather(x, i, axis=0), (torch.ones(2, 3), torch.tensor([[2, 0, 0]])), r"index 2 is out of range for axis 0 of length 2"),
        (lambda x, i: ops.index(x, i, axes=(1,)), (torch.ones(2, 3), torch.tensor([0, -3])), r"index -3 is out of range .* \[index \(C4\)\]"),
        (lambda x, i, j: ops.index(x, i, j, axes=(0, 1)), (torch.ones(2, 3), torch.tensor([1]), torch.tensor([3])),
         r"index 3 is out of range for axis 1 of length 3"),
        (lambda x, i, s: ops.scatter(x, i, s), (torch.ones(3), torch.tensor([5]), torch.ones(1)), r"\[scatter \(C6\)\]"),
        (lambda x, i, s: ops.scatter_add(x, i, s), (torch.ones(3), torch.tensor([-1]), torch.ones(1)), r"\[scatter_add \(C6\)\]"),
        (lambda x, i, s: ops.scatter(x, i, s, axis=1), (torch.ones(2, 3), torch.tensor([[0, 2], [1, 2]]), torch.ones(2, 2)), None),
    ],
)
def test_indices_never_wrap_around(build: Callable[..., Expr], operands: tuple[object, ...], message: str | None) -> None:
    """Out-of-range and negative indices are an EvalError on both routes, with one message."""
    if message is None:  # in range, no two writes to one place: fine
        evaluate_both(build, *operands)
        return
    visitor, lowered = errors_of(build, *operands)
    assert visitor == lowered and visitor.startswith("EvalError: ")
    assert re.search(message, visitor), visitor


def test_duplicate_scatter_targets_are_refused_and_scatter_add_accumulates() -> None:
    x, index, src = torch.zeros(2, 3), torch.tensor([[1, 1], [0, 2]]), torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    visitor, lowered = errors_of(lambda a, i, s: ops.scatter(a, i, s, axis=1), x, index, src)
    assert visitor == lowered
    assert "two entries of index write to the same position of the result" in visitor and "[scatter (C7)]" in visitor
    total = evaluate_both(lambda a, i, s: ops.scatter_add(a, i, s, axis=1), x, index, src)
    assert torch.equal(total, torch.tensor([[0.0, 3.0, 0.0], [3.0, 0.0, 4.0]]))
    # the same index at different rows is no conflict
    evaluate_both(lambda a, i, s: ops.scatter(a, i, s, axis=1), x, torch.tensor([[1], [1]]), src[:, :1])


def test_sorts_are_stable_and_topk_takes_the_lower_index_among_equals() -> None:
    x = torch.tensor([2.0, 5.0, 2.0, 5.0, 1.0, 5.0])
    assert evaluate_both(lambda t: ops.argsort(t), x).tolist() == [4, 0, 2, 1, 3, 5]
    assert evaluate_both(lambda t: ops.argsort(t, descending=True), x).tolist() == [1, 3, 5, 0, 2, 4]
    assert evaluate_both(lambda t: ops.argtopk(t, k=2), x).tolist() == [1, 3]
    assert evaluate_both(lambda t: ops.argtopk(t, k=2, largest=False), x).tolist() == [4, 0]
    assert evaluate_both(lambda t: ops.topk(t, k=4), x).tolist() == torch.topk(x, 4)[0].tolist()
    # NaN sorts above every number, as in torch
    nan = torch.tensor([1.0, float("nan"), 3.0])
    assert evaluate_both(lambda t: ops.argtopk(t, k=1), nan).tolist() == [1]


def test_empty_axes_reduce_nothing() -> None:
    x = torch.tensor([[0.0, 2.0], [-3.0, 0.0]])
    assert torch.equal(evaluate_both(lambda t: ops.any(t, axes=()), x), x != 0)
    assert torch.equal(evaluate_both(lambda t: ops.all(t, axes=()), x), x != 0)
    assert torch.equal(evaluate_both(lambda t: ops.vector_norm(t, axes=()), x), x.abs())


def test_integer_division_by_zero_is_an_eval_error_floats_give_inf() -> None:
    a, b = torch.tensor([4, -7, 9]), torch.tensor([2, 0, 3])
    for name in ("floor_divide", "trunc_divide", "remainder", "fmod"):
        visitor, lowered = errors_of(getattr(ops, name), a, b)
        assert visitor == lowered
        assert f"integer division by zero (the divisor has a zero element) [{name} (C3)]" in visitor
        out = evaluate_both(getattr(ops, name), a.float(), b.float())
        assert not bool(torch.isfinite(out).all()) or name in ("remainder", "fmod")
    visitor, _ = errors_of(lambda x: ops.floor_divide(x, 0), a)
    assert "[floor_divide (C3)]" in visitor


def test_python_floor_division_and_modulo_semantics() -> None:
    a, b = torch.tensor([7, -7, 7, -7]), torch.tensor([2, 2, -2, -2])
    assert evaluate_both(ops.floor_divide, a, b).tolist() == [7 // 2, -7 // 2, 7 // -2, -7 // -2]
    assert evaluate_both(ops.remainder, a, b).tolist() == [7 % 2, -7 % 2, 7 % -2, -7 % -2]
    assert evaluate_both(ops.trunc_divide, a, b).tolist() == [3, -3, -3, 3]
    assert evaluate_both(ops.fmod, a, b).tolist() == [1, -1, 1, -1]


def test_clamp_with_crossed_bounds_gives_the_upper_bound() -> None:
    assert evaluate_both(lambda t: ops.clamp(t, 2.0, 1.0), torch.tensor([0.0, 1.5, 9.0])).tolist() == [1.0, 1.0, 1.0]


# -- bad arguments: one message on both routes ---------------------------------------------------


BAD_STATIC = [
    ("gather index of the wrong dtype", lambda x, i: ops.gather(x, i, axis=0), (torch.ones(2, 3), torch.zeros(2, 3, dtype=torch.int16)),
     "gather index must be i32 or i64, found i16[2, 3] (cast it first) [gather (C1)]"),
    ("gather indices of the wrong rank", lambda x, i: ops.gather(x, i, axis=0), (torch.ones(2, 3), torch.zeros(3, dtype=torch.int64)),
     "gather index i64[3] must have the rank of f32[2, 3] (2) [gather (C2)]"),
    ("cumsum over a missing axis", lambda x: ops.cumsum(x, axis=2), (torch.ones(2, 3),),
     "cumsum: axis 2 is out of range for rank 2 (valid: -2..1) [cumsum (C1)]"),
    ("index tensor of the wrong dtype", lambda x, i: ops.index(x, i, axes=(0,)), (torch.ones(2, 3), torch.zeros(2)),
     "index operand 1 must be i32 or i64, found f32[2] [index (C2)]"),
    ("a bool mask as an index", lambda x, m: ops.index(x, m, axes=(0,)), (torch.ones(2, 3), torch.ones(2, dtype=torch.bool)),
     "a bool mask selects a data-dependent number of elements) [index (C2)]"),
    ("linear of mismatched sizes", ops.linear, (torch.ones(2, 3), torch.ones(4, 5)),
     "linear contracts x's last axis with the weight's in axis: f32[2, 3] and f32[4, 5] (3 vs 5) [linear (C1)]"),
    ("linear bias", ops.linear, (torch.ones(2, 3), torch.ones(4, 3), torch.ones(2, 4)), "[linear (C5)]"),
    ("histc of integers", lambda x: ops.histc(x, bins=2), (torch.ones(3, dtype=torch.int64),), "[histc (C1)]"),
    ("histc of an empty range", lambda x: ops.histc(x, bins=2, min=1.0, max=0.0), (torch.ones(3),),
     "histc range [1.0, 0.0] is empty: min must not exceed max [histc (C2)]"),
    ("linear of integers", ops.linear, (torch.ones(2, 3, dtype=torch.int64), torch.ones(4, 3, dtype=torch.int64)), "[linear (C4)]"),
    ("conv channels", lambda x, w: ops.conv(x, w), (torch.ones(1, 3, 5), torch.ones(2, 2, 3)), "[conv (C2)]"),
    ("pool of an integer", lambda x: ops.max_pool(x, kernel=(2,)), (torch.ones(1, 4, dtype=torch.int32),), "[max_pool (C2)]"),
    ("bitwise of floats", ops.bitwise_and, (torch.ones(3), torch.ones(3)), "[bitwise_and (C2)]"),
    ("topk beyond the axis", lambda x: ops.topk(x, k=5), (torch.ones(2, 3),), "[topk (C2)]"),
    ("scatter src dtype", ops.scatter, (torch.ones(3), torch.zeros(2, dtype=torch.int64), torch.ones(2, dtype=torch.float64)),
     "[scatter (C5)]"),
]


@pytest.mark.parametrize(("what", "build", "operands", "message"), BAD_STATIC, ids=[b[0] for b in BAD_STATIC])
def test_bad_arguments_are_refused_with_one_message_on_both_routes(
    what: str, build: Callable[..., Expr], operands: tuple[object, ...], message: str
) -> None:
    """The direct route (no type inference: the value rule applies the op's type rule) raises
    ``EvalError``; the lowering (which infers types first) raises ``TypeInferenceError``; the
    message after the class name is the same, names the node and cites the constraint."""
    visitor, lowered = errors_of(build, *operands)
    assert visitor.startswith("EvalError: ") and lowered.startswith("TypeInferenceError: ")
    assert visitor.removeprefix("EvalError: ") == lowered.removeprefix("TypeInferenceError: ")
    assert message in visitor
    assert re.match(r"(EvalError|TypeInferenceError): \w+\(", visitor)  # describe_expr of the node first


def test_run_time_refusals_are_the_same_error_on_both_routes() -> None:
    """A refusal that needs the data (an index out of range) is the same EvalError on both
    routes, so the equivalence check agrees and carries it."""
    fn_index = tfexec.Function(
        "f", (x := tfexec.Var("x", tfexec.f32[2, 3]), i := tfexec.Var("i", tfexec.i64[2])), ops.index(x, i, axes=(1,))
    )
    report = tfexec.check_equivalence(fn_index, torch.ones(2, 3), torch.tensor([0, 7]))
    assert report.ok and report.compared == 0
    assert report.error is not None and "index 7 is out of range for axis 1 of length 3" in report.error
    with pytest.raises(EvalError, match=re.escape(report.error.removeprefix("EvalError: "))):
        tfexec.lower(fn_index).run(torch.ones(2, 3), torch.tensor([0, 7]))


def test_histc_of_a_non_finite_own_range_is_refused_on_both_routes() -> None:
    x = tfexec.Var("x", tfexec.f32[3])
    fn = tfexec.Function("f", (x,), ops.histc(x, bins=2))
    for data in (torch.tensor([1.0, float("inf"), 0.0]), torch.tensor([float("nan"), 1.0, 2.0])):
        with pytest.raises(EvalError, match=re.escape("not all finite [histc (C3)]")):
            tfexec.evaluate(fn, data)
        with pytest.raises(EvalError, match=re.escape("not all finite [histc (C3)]")):
            tfexec.lower(fn).run(data)
    inside = tfexec.Function("g", (x,), ops.histc(x, bins=2, min=0.0, max=1.0))
    assert torch.equal(tfexec.evaluate(inside, torch.tensor([float("inf"), 1.0, 0.2])), torch.tensor([1.0, 1.0]))


def test_symbolic_sizes_are_checked_at_run_time() -> None:
    """Constraints the type rule cannot decide over DimVars are checked on the data: a gather
    index longer than ``x`` off the gathered axis, a kernel wider than the input."""
    x, i = tfexec.Var("x", tfexec.f32[B, 3]), tfexec.Var("i", tfexec.i64[S, 1])
    fn = tfexec.Function("f", (x, i), ops.gather(x, i, axis=1))
    tfexec.infer_types(fn)  # B against S: undecided statically
    with pytest.raises(EvalError, match=re.escape("gather: axis 0 of index i64[4, 1] has size 4, more than the 2 of x f32[2, 3] [gather (C4)]")):
        tfexec.evaluate(fn, torch.ones(2, 3), torch.zeros(4, 1, dtype=torch.int64))
    y, w = tfexec.Var("y", tfexec.f32[1, 1, S]), tfexec.Var("w", tfexec.f32[1, 1, 3])
    conv = tfexec.Function("g", (y, w), ops.conv(y, w))
    assert tfexec.check_equivalence(conv, torch.ones(1, 1, 2), torch.ones(1, 1, 3)).error is not None
