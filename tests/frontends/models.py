"""PyTorch programs the frontend tests import: small, deterministic, written the way models
are written (nn.Linear, F.rms_norm, RoPE by slicing, F.scaled_dot_product_attention).

``tfexec import tests/frontends/models.py:tiny_mlp`` loads this file (the CLI test does).
Markers ``# <- name`` on lines let tests find the line a node must point at.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    """Linear → ReLU → Linear → GELU → Linear → SiLU, with biases (addmm/linear/t)."""

    def __init__(self, d_in: int = 16, hidden: int = 32, d_out: int = 8) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        h = F.gelu(self.fc2(h), approximate="tanh")
        return F.silu(self.fc3(h))


class RMSNorm(nn.Module):
    """RMSNorm written out: ``x * rsqrt(mean(x^2) + eps) * w``."""

    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight  # <- rmsnorm


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    """Multi-head causal attention with RoPE (slicing/cat/neg/mul/add) and fused SDPA."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q = self.wq(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # <- sdpa
        return self.wo(out.transpose(1, 2).reshape(b, s, d))


class FeedForward(nn.Module):
    """SwiGLU: ``down(silu(gate(x)) * up(x))``."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class DecoderBlock(nn.Module):
    """A Llama-style decoder block; the MLP norm uses ``F.rms_norm``."""

    def __init__(self, dim: int = 32, heads: int = 4, hidden: int = 48) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(dim)
        self.attn = Attention(dim, heads)
        self.mlp_norm = nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))
        self.mlp = FeedForward(dim, hidden)
        head_dim = dim // heads
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = x.shape[1]
        angles = torch.arange(s, dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        emb = torch.cat((angles, angles), dim=-1)
        h = x + self.attn(self.attn_norm(x), emb.cos(), emb.sin())
        hn = F.rms_norm(h, (h.shape[-1],), self.mlp_norm, 1e-6)
        return h + self.mlp(hn)


class MaskedAttention(nn.Module):
    """Attention with hand-made masks (full/triu/arange/le/where), SDPA with a bool mask,
    an additive float mask and grouped query heads, and view plumbing
    (split/permute/expand/unsqueeze/squeeze/repeat_interleave)."""

    def __init__(self, dim: int = 16, heads: int = 4, kv_heads: int = 2) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.qkv = nn.Linear(dim, dim + 2 * kv_heads * self.head_dim)
        self.scale = nn.Parameter(torch.rand(dim) + 0.5)
        self.register_buffer("bias", torch.linspace(-0.5, 0.5, heads), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        hd = self.head_dim
        q, k, v = self.qkv(x).split([d, self.kv_heads * hd, self.kv_heads * hd], dim=-1)
        q = q.view(b, s, self.heads, hd).permute(0, 2, 1, 3)
        k = k.view(b, s, self.kv_heads, hd).permute(0, 2, 1, 3)
        v = v.view(b, s, self.kv_heads, hd).permute(0, 2, 1, 3)
        grouped = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
        v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        future = torch.triu(torch.full((s, s), float("-inf")), diagonal=1)
        scores = scores + future + self.bias[None, :, None, None]
        pos = torch.arange(s)
        allowed = pos[None, :] <= pos[:, None]
        scores = torch.where(allowed, scores, torch.full_like(scores, -1e9))
        manual = scores.softmax(dim=-1) @ v
        masked = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
        additive = F.scaled_dot_product_attention(q, k, v, attn_mask=future, scale=0.3)
        out = (manual + masked + grouped + additive).permute(0, 2, 1, 3).reshape(b, s, d)
        gain = self.scale.unsqueeze(0).unsqueeze(1).expand(b, s, d)
        return (out * gain).unsqueeze(2).squeeze(2)


class InPlace(nn.Module):
    """In-place updates and index assignment: functionalised by the decomposition pass
    into slice_scatter/select_scatter/copy."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc(x)
        h.relu_()
        h += 1
        h[:, 0] = 5.0
        h[1:3, 1:6:2] = x[:2, :3]
        h[-1] = x[0]
        h[:, -2:] = 0
        return h * 2


class Unsupported(nn.Module):
    """Two ops without a translation (lgamma, erfinv), one used twice."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = torch.lgamma(x.abs() + 1)  # <- lgamma
        f = torch.erfinv(c * 0.1)  # <- erfinv
        g = torch.erfinv(x * 0.5)  # <- erfinv2
        return torch.relu(f + g)


def tiny_mlp() -> nn.Module:
    """The CLI test's factory: a seeded MLP."""
    torch.manual_seed(0)
    return MLP(8, 16, 4)


def marker_line(name: str) -> int:
    """The 1-based line of this file marked ``# <- name``."""
    with open(__file__, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if line.rstrip().endswith(f"# <- {name}"):
                return number
    raise LookupError(name)


class OpZoo(nn.Module):
    """Many ATen ops at once, several outputs: reductions, norms, gathers, splits, joins,
    conversions, clamps, triangles, tiling. Inputs: x (B, 6, 8) float, ids (B, 6) int64."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(10, 8)
        self.norm = nn.LayerNorm(8)
        self.proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, ...]:
        e = self.emb(ids) + self.norm(x)
        a, b = e.chunk(2, dim=-1)
        first, *_ = e.unbind(1)
        parts = torch.split(e, [2, 4], dim=1)
        stacked = torch.stack([a, b], dim=1).flatten(1, 2)
        y = torch.clamp(self.proj(e), min=-0.5, max=0.7) + F.hardtanh(e) + F.leaky_relu(e, 0.2)
        var = e.var(dim=-1, keepdim=True) + e.std(dim=1).unsqueeze(1)
        lsm = F.log_softmax(e, dim=-1) + torch.softmax(e.double(), dim=1).float()
        amax = e.amax(dim=(0, 2)) + e.sum(dim=-1, dtype=torch.float64).float().mean(0) + e.prod(-1).mean(0)
        best, where_best = e.max(dim=-1)
        worst = e.argmin(dim=1)
        picked = torch.index_select(e, 2, torch.tensor([0, 3, 5]))
        gathered = e[:, :, torch.tensor([1, 1, 7])]
        masked = e.masked_fill(e > 0.3, -1.0).to(torch.float16).float()
        tri = torch.tril(e[:, :, :6], diagonal=-1) + torch.triu(e[:, :, :6].transpose(1, 2))
        tiled = e[:, :2].repeat(1, 2, 1) + e.narrow(1, 1, 4) + e.select(1, -1).unsqueeze(1)
        moved = torch.movedim(e, 2, 0).reshape(8, -1).t()
        step = e[:, ::2, 1:7:3]
        mixed = torch.cat([step.reshape(-1), torch.arange(3, 9, 2).float(), (ids.sum() * 1.0).reshape(1)])
        addmm = torch.addmm(self.proj.bias, e[0], self.proj.weight.t(), beta=0.5, alpha=2.0)
        logic = ((e > 0) & (e < 0.5)) | ~(e > -0.5)
        return (
            torch.cat([a + b + stacked[:, :6], y + first.unsqueeze(1) + parts[1].sum(1, keepdim=True)], dim=-1),
            var + lsm + amax[None, :, None] + best.unsqueeze(-1) + where_best.unsqueeze(-1).float() + worst.float()[:, None, :2].sum(),
            picked + gathered + masked[..., :3] + tri[..., :3] + tiled.sum(1, keepdim=True)[..., :3] + logic[..., :3].float(),
            moved + addmm.sum() + mixed.sum(),
            torch.where(logic, 1.0, e).pow(2).reciprocal().clamp_max(10.0),
        )
