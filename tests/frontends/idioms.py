"""Everyday PyTorch: small programs written the way people write ``forward`` — elementwise
math, integer ``//`` and ``%``, masks, reductions, norms, sorting, rearranging, indexing and
scattering, padding, pooling, convolutions, normalisation layers, resampling, attention.

Each ``Idiom`` is a function of tensors or an ``nn.Module`` and the example inputs to import
it with; ``tests/frontends/test_idioms.py`` imports each and compares it with PyTorch.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

_G = torch.Generator().manual_seed(0)


def randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=_G)


def randint(high: int, *shape: int, low: int = 0) -> torch.Tensor:
    return torch.randint(low, high, shape, generator=_G)


@dataclass(frozen=True)
class Idiom:
    name: str
    program: Callable[..., object]
    inputs: tuple[torch.Tensor, ...]


def seeded(make: Callable[[], nn.Module]) -> nn.Module:
    torch.manual_seed(0)
    return make().eval()


class Residual(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm, self.fc = nn.LayerNorm(8), nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc(self.norm(x)).relu()


class ConvBlock(nn.Module):
    """conv → batch norm → ReLU → max pool, as in ResNet stems."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.bn.running_mean.uniform_(-0.5, 0.5)
        self.bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(F.relu(self.bn(self.conv(x))), 3, 2, 1)


class DepthwiseSeparable(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.depthwise = nn.Conv2d(4, 4, 3, padding=1, groups=4)
        self.pointwise = nn.Conv2d(4, 6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(F.relu6(self.depthwise(x)))


class GroupNormBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv, self.gn = nn.Conv2d(4, 8, 3, padding=1), nn.GroupNorm(2, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.gn(self.conv(x)))


class Conv1dStack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Conv1d(3, 6, 5, padding=2), nn.Conv1d(6, 6, 3, dilation=2, padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(F.gelu(self.a(x))).mean(-1)


class UpsampleDecoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up, self.conv = nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(4, 2, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(self.up(x))


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x)).log_softmax(-1)


class TinyAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv, self.out = nn.Linear(16, 48), nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, 4, 4).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(4)
        mask = torch.ones(s, s, dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        return self.out((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, 16))


class EmbeddingBag(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(20, 8)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        mask = (ids != 0).float().unsqueeze(-1)
        return (self.emb(ids) * mask).sum(1) / mask.sum(1).clamp(min=1)


class PReLUNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc, self.act = nn.Linear(6, 6), nn.PReLU(6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.fc(x))


class InstanceNormNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.InstanceNorm1d(4, affine=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


class TransposedConv(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 2, 2, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(x)


def _scatter_counts(ids: torch.Tensor) -> torch.Tensor:
    return torch.zeros(10).scatter_add(0, ids, torch.ones(ids.shape[0]))


def _one_hot(ids: torch.Tensor) -> torch.Tensor:
    return F.one_hot(ids, 10).float()


def _index_assign(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[:, torch.tensor([0, 2])] = 0.0
    return y


def _masked_assign(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[y < 0] = 0.0
    return y


IDIOMS: list[Idiom] = [
    # -- elementwise math
    Idiom("log1p", lambda x: torch.log1p(x.abs()), (randn(3, 4),)),
    Idiom("expm1", lambda x: torch.expm1(x), (randn(3, 4),)),
    Idiom("floor", lambda x: torch.floor(x * 3), (randn(3, 4),)),
    Idiom("ceil", lambda x: torch.ceil(x * 3), (randn(3, 4),)),
    Idiom("round", lambda x: torch.round(x * 3), (randn(3, 4),)),
    Idiom("round decimals", lambda x: torch.round(x, decimals=2), (randn(3, 4),)),
    Idiom("sign", lambda x: torch.sign(x), (randn(3, 4),)),
    Idiom("trunc", lambda x: torch.trunc(x * 3), (randn(3, 4),)),
    Idiom("frac", lambda x: torch.frac(x * 3), (randn(3, 4),)),
    Idiom("elu", lambda x: F.elu(x, 0.7), (randn(3, 4),)),
    Idiom("selu", lambda x: F.selu(x), (randn(3, 4),)),
    Idiom("celu", lambda x: F.celu(x, 1.3), (randn(3, 4),)),
    Idiom("leaky relu", lambda x: F.leaky_relu(x, 0.1), (randn(3, 4),)),
    Idiom("softplus", lambda x: F.softplus(x, beta=2.0), (randn(3, 4),)),
    Idiom("hardswish", lambda x: F.hardswish(x), (randn(3, 4),)),
    Idiom("hardsigmoid", lambda x: F.hardsigmoid(x), (randn(3, 4),)),
    Idiom("mish", lambda x: F.mish(x), (randn(3, 4),)),
    Idiom("relu6", lambda x: F.relu6(x * 4), (randn(3, 4),)),
    Idiom("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.5), (randn(3, 4),)),
    Idiom("softsign", lambda x: F.softsign(x), (randn(3, 4),)),
    Idiom("logsigmoid", lambda x: F.logsigmoid(x), (randn(3, 4),)),
    Idiom("gelu tanh", lambda x: F.gelu(x, approximate="tanh"), (randn(3, 4),)),
    Idiom("tan atan", lambda x: torch.atan(torch.tan(x * 0.5)), (randn(3, 4),)),
    Idiom("log2 log10", lambda x: torch.log2(x.abs() + 1) + torch.log10(x.abs() + 1), (randn(3, 4),)),
    Idiom("reciprocal", lambda x: torch.reciprocal(x.abs() + 0.5), (randn(3, 4),)),
    Idiom("clamp", lambda x: x.clamp(-0.3, 0.4), (randn(3, 4),)),
    Idiom("clamp min", lambda x: x.clamp(min=0.0), (randn(3, 4),)),
    Idiom("pow and sqrt", lambda x: (x ** 2 + 1).sqrt() - x.abs().pow(1.5), (randn(3, 4),)),
    Idiom("nan to num", lambda x: torch.nan_to_num(torch.log(x)), (randn(3, 4),)),
    Idiom("isfinite", lambda x: torch.where(torch.isfinite(1 / x), x, torch.zeros_like(x)), (randn(3, 4),)),
    # -- integers, logic
    Idiom("floor division", lambda n: n // 3, (randint(20, 3, 4, low=-10),)),
    Idiom("remainder", lambda n: n % 4, (randint(20, 3, 4, low=-10),)),
    Idiom("floor division by tensor", lambda a, b: a // b + a % b, (randint(20, 6, low=-10), randint(5, 6, low=1))),
    Idiom("float floor division", lambda x: x // 0.3, (randn(3, 4),)),
    Idiom("fmod", lambda a: torch.fmod(a, 3), (randint(20, 6, low=-10),)),
    Idiom("trunc division", lambda a: torch.div(a, 4, rounding_mode="trunc"), (randint(20, 6, low=-10),)),
    Idiom("bitwise", lambda a, b: (a & b) | (a ^ 3), (randint(16, 6), randint(16, 6))),
    Idiom("bitwise not", lambda a: ~a, (randint(16, 6),)),
    Idiom("shift mask", lambda a: (a & 1) == 1, (randint(16, 6),)),
    Idiom("logical not", lambda x: torch.logical_not(x > 0).float(), (randn(3, 4),)),
    Idiom("logical xor", lambda x: torch.logical_xor(x > 0, x < 0.5), (randn(3, 4),)),
    Idiom("any all", lambda x: torch.stack([(x > 1).any(dim=1), (x > -2).all(dim=1)]), (randn(3, 4),)),
    Idiom("any everything", lambda x: (x > 2).any() | (x < -3).all(), (randn(3, 4),)),
    # -- reductions and norms
    Idiom("vector norm", lambda x: torch.linalg.vector_norm(x, dim=-1), (randn(3, 4),)),
    Idiom("norm p1", lambda x: x.norm(p=1, dim=0), (randn(3, 4),)),
    Idiom("normalize", lambda x: F.normalize(x, dim=-1), (randn(3, 4),)),
    Idiom("cosine similarity", lambda a, b: F.cosine_similarity(a, b, dim=-1), (randn(3, 4), randn(3, 4))),
    Idiom("logsumexp", lambda x: torch.logsumexp(x, dim=-1), (randn(3, 4),)),
    Idiom("std var", lambda x: x.std(-1) + x.var(0).sum(), (randn(3, 4),)),
    Idiom("masked mean", lambda x, m: (x * m).sum(1) / m.sum(1), (randn(3, 4), (randn(3, 4) > 0).float())),
    Idiom("cumsum", lambda x: torch.cumsum(x, dim=1), (randn(3, 4),)),
    Idiom("cumprod", lambda x: torch.cumprod(1 + x * 0.1, dim=0), (randn(3, 4),)),
    Idiom("position ids from mask", lambda m: (m.long().cumsum(-1) - 1).clamp(min=0), (torch.tensor([[0, 1, 1, 1], [1, 1, 1, 0]]),)),
    Idiom("argmax argmin", lambda x: x.argmax(-1) + x.argmin(0).sum(), (randn(3, 4),)),
    Idiom("max with indices", lambda x: x.max(dim=1), (randn(3, 4),)),
    # -- sorting
    Idiom("sort", lambda x: torch.sort(x, dim=-1), (randn(3, 5),)),
    Idiom("sort descending", lambda x: torch.sort(x, dim=0, descending=True).values, (randn(3, 5),)),
    Idiom("argsort", lambda x: torch.argsort(x, dim=-1), (randn(3, 5),)),
    Idiom("topk", lambda x: torch.topk(x, 2, dim=-1), (randn(3, 5),)),
    Idiom("topk smallest", lambda x: torch.topk(x, 3, dim=0, largest=False).values, (randn(4, 5),)),
    # -- rearranging
    Idiom("flip", lambda x: torch.flip(x, dims=(0, 1)), (randn(3, 4),)),
    Idiom("roll", lambda x: torch.roll(x, shifts=1, dims=1), (randn(3, 4),)),
    Idiom("roll flat", lambda x: torch.roll(x, 5), (randn(3, 4),)),
    Idiom("diagonal", lambda x: torch.diagonal(x, offset=1), (randn(4, 4),)),
    Idiom("trace", lambda x: torch.diagonal(x).sum(), (randn(4, 4),)),
    Idiom("diag embed", lambda x: torch.diag_embed(x), (randn(2, 3),)),
    Idiom("triu tril", lambda x: torch.triu(x, 1) - torch.tril(x, -1), (randn(4, 4),)),
    Idiom("causal mask", lambda s: torch.full((4, 4), float("-inf")).triu(1) + s, (randn(4, 4),)),
    Idiom("chunk stack", lambda x: torch.stack(x.chunk(2, dim=-1), dim=0).sum(0), (randn(3, 4),)),
    Idiom("unbind", lambda x: sum(x.unbind(0)), (randn(3, 4),)),
    Idiom("flatten unflatten", lambda x: x.flatten(1).unflatten(1, (2, 6)), (randn(2, 3, 4),)),
    Idiom("repeat interleave", lambda x: x.repeat_interleave(2, dim=0), (randn(2, 3),)),
    Idiom("expand repeat", lambda x: x[:, None].expand(2, 3, 4) + x.repeat(1, 3).view(2, 3, 4), (randn(2, 4),)),
    Idiom("einsum", lambda a, b: torch.einsum("bij,bjk->bik", a, b), (randn(2, 3, 4), randn(2, 4, 5))),
    Idiom("outer", lambda a, b: torch.outer(a, b), (randn(3), randn(4))),
    Idiom("baddbmm", lambda c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=2.0), (randn(2, 3, 5), randn(2, 3, 4), randn(2, 4, 5))),
    Idiom("linspace", lambda x: x * torch.linspace(0, 1, 4), (randn(3, 4),)),
    # -- indexing and scattering
    Idiom("gather", lambda x, i: torch.gather(x, 1, i), (randn(3, 4), randint(4, 3, 2))),
    Idiom("take along dim", lambda x, i: torch.take_along_dim(x, i, dim=1), (randn(3, 4), randint(4, 3, 2))),
    Idiom("index with tensor", lambda x, i: x[i], (randn(5, 3), randint(5, 4))),
    Idiom("index two tensors", lambda x, i, j: x[i, j], (randn(5, 3), randint(5, 4), randint(3, 4))),
    Idiom("index broadcast", lambda x, i, j: x[:, i[:, None], j], (randn(2, 5, 3), randint(5, 4), randint(3, 2))),
    Idiom("negative index tensor", lambda x: x[:, torch.tensor([-1, 0])], (randn(3, 4),)),
    Idiom("scatter", lambda x, i, s: x.scatter(1, i, s), (randn(3, 4), torch.tensor([[0, 3], [1, 2], [2, 0]]), randn(3, 2))),
    Idiom("scatter value", lambda x, i: x.scatter(1, i, 0.5), (randn(3, 4), torch.tensor([[1], [3], [0]]))),
    Idiom("scatter add counts", _scatter_counts, (randint(10, 12),)),
    Idiom("one hot", _one_hot, (randint(10, 6),)),
    Idiom("index assignment", _index_assign, (randn(3, 4),)),
    Idiom("masked assignment", _masked_assign, (randn(3, 4),)),
    Idiom("masked fill", lambda x: x.masked_fill(x > 0.5, 0.0), (randn(3, 4),)),
    Idiom("where", lambda x: torch.where(x > 0, x, x * 0.1), (randn(3, 4),)),
    Idiom("embedding bag mean", seeded(EmbeddingBag), (torch.tensor([[1, 5, 0, 0], [3, 3, 9, 0]]),)),
    # -- padding, pooling, convolution, normalisation, resampling
    Idiom("pad constant", lambda x: F.pad(x, (1, 2, 0, 1), value=-1.0), (randn(2, 3, 4),)),
    Idiom("pad reflect", lambda x: F.pad(x, (2, 2), mode="reflect"), (randn(2, 3, 5),)),
    Idiom("pad replicate", lambda x: F.pad(x, (1, 1, 1, 1), mode="replicate"), (randn(1, 2, 3, 4),)),
    Idiom("pad circular", lambda x: F.pad(x, (1, 2), mode="circular"), (randn(1, 2, 5),)),
    Idiom("max pool", lambda x: F.max_pool2d(x, 2), (randn(1, 3, 6, 6),)),
    Idiom("max pool ceil", lambda x: F.max_pool1d(x, 3, 2, ceil_mode=True), (randn(2, 3, 8),)),
    Idiom("avg pool", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (randn(1, 3, 7, 7),)),
    Idiom("adaptive avg pool", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), (randn(1, 3, 7, 8),)),
    Idiom("global average", lambda x: x.mean(dim=(2, 3)), (randn(2, 3, 4, 4),)),
    Idiom("conv block", seeded(ConvBlock), (randn(2, 3, 16, 16),)),
    Idiom("depthwise separable", seeded(DepthwiseSeparable), (randn(1, 4, 8, 8),)),
    Idiom("group norm block", seeded(GroupNormBlock), (randn(2, 4, 6, 6),)),
    Idiom("conv1d stack", seeded(Conv1dStack), (randn(2, 3, 16),)),
    Idiom("conv same padding", lambda x, w: F.conv2d(x, w, padding="same"), (randn(1, 2, 5, 5), randn(3, 2, 3, 3))),
    Idiom("batch norm functional", lambda x, m, v: F.batch_norm(x, m, v, eps=1e-3), (randn(4, 3), randn(3), randn(3).abs() + 0.5)),
    Idiom("layer norm", lambda x: F.layer_norm(x, (4,)), (randn(3, 4),)),
    Idiom("instance norm", seeded(InstanceNormNet), (randn(2, 4, 6),)),
    Idiom("nearest upsample", lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), (randn(1, 2, 3, 3),)),
    Idiom("nearest to size", lambda x: F.interpolate(x, size=(5, 7)), (randn(1, 2, 3, 3),)),
    Idiom("bilinear upsample", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False), (randn(1, 2, 3, 3),)),
    Idiom("upsample decoder", seeded(UpsampleDecoder), (randn(1, 4, 4, 4),)),
    Idiom("pixel shuffle", lambda x: F.pixel_shuffle(x, 2), (randn(1, 8, 3, 3),)),
    Idiom("classifier", seeded(Classifier), (randn(2, 3, 8, 8),)),
    # -- layers
    Idiom("residual block", seeded(Residual), (randn(2, 5, 8),)),
    Idiom("tiny attention", seeded(TinyAttention), (randn(2, 6, 16),)),
    Idiom("prelu", seeded(PReLUNet), (randn(3, 6),)),
    Idiom("transposed conv", seeded(TransposedConv), (randn(1, 4, 3, 3),)),
]
