"""Writes in place, the everyday ways: into slices of ``zeros``/``new_empty``/a clone, through
``view``/``transpose``/``narrow``/``select``, by ``copy_``/``fill_``/``add_``/``masked_fill_``/
``scatter_``/``index_put_``, in loops (``out[:, t] = ...``), into a KV cache cloned from a
buffer, and through two overlapping views of one tensor. Each is imported (functionalized)
and compared with PyTorch by ``test_mutation.py``; every one of them was once a silently
wrong import, or right only by accident.
"""

import torch
from torch import nn

from frontends.idioms import _G, Idiom, randn


def new_empty_copy(x: torch.Tensor) -> torch.Tensor:
    """MiniCPM3/DeepSeek-V3.2's rotary split: an uninitialised tensor filled by two copies."""
    n = x.shape[-1]
    k = x.new_empty(*x.shape[:-1], n + 2)
    k[..., :n].copy_(x)
    k[..., n:].copy_(x[..., :2])
    return k


def zeros_slice_assign(x: torch.Tensor) -> torch.Tensor:
    y = torch.zeros(2, 4)
    y[:, :2] = x
    return y * 3


def row_from_row(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[0] = y[1] + 1
    return y


def recurrent(x: torch.Tensor) -> torch.Tensor:
    """RWKV/RecurrentGemma: ``out = zeros_like``, then a loop writing ``out[:, t]``."""
    out = torch.zeros_like(x)
    state = torch.zeros_like(x[:, 0])
    for t in range(x.shape[1]):
        state = 0.5 * state + x[:, t]
        out[:, t] = state.tanh()
    return out


class KVCache(nn.Module):
    """A cache write into a clone of a buffer, then attention-like reads of the whole cache."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("cache", torch.arange(12.0).reshape(2, 6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cache = self.cache.clone()
        cache[:, 2:4] = x
        return cache.softmax(-1)


def through_transpose(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.t()[1] = 7.0
    return y


def through_view(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.view(3, 4)[1] = -1.0
    return y + 1


def through_narrow(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.narrow(1, 1, 2).mul_(10.0)
    return y


def through_transpose_slice(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.transpose(0, 1)[1:3].copy_(torch.ones(2, 2))
    return y


def fill_slice(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[:, 1].fill_(3.0)
    y[0].zero_()
    return y


def masked_fill_slice(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[1:].masked_fill_(y[1:] > 0, 0.0)
    return y


def add_div_slice(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[:, :2].add_(1.0)
    y[:, 2:].div_(4.0)
    return y


def scatter_slice(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    y = torch.zeros(3, 4)
    y[1:].scatter_(1, index, x)
    return y


def overlapping_views(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Two views of one tensor: a write through the first is seen through the second."""
    y = x.clone()
    a, b = y[:, :3], y[:, 1:]
    a.mul_(2.0)
    b.add_(b[:, :1].clone())  # reads through b what was written through a, and writes where they overlap
    return y, a.clone()


def index_put_tensor(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    y = torch.zeros(5, 3)
    y[rows] = x
    y[rows[:1]] += 1.0
    return y


def write_into_input_clone_returned_twice(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    y = x.clone()
    before = y * 1
    y[0, 0] = 100.0
    return before, y


WRITES: list[Idiom] = [
    Idiom("new_empty copy_ into slices", new_empty_copy, (randn(2, 3, 4),)),
    Idiom("zeros slice assignment", zeros_slice_assign, (randn(2, 2),)),
    Idiom("row from row", row_from_row, (randn(3, 4),)),
    Idiom("recurrent out[:, t]", recurrent, (randn(2, 5, 3),)),
    Idiom("kv cache in a buffer clone", KVCache().eval(), (randn(2, 2),)),
    Idiom("write through t()[1]", through_transpose, (randn(3, 4),)),
    Idiom("write through view(3, 4)[1]", through_view, (randn(2, 6),)),
    Idiom("mul_ through narrow", through_narrow, (randn(3, 4),)),
    Idiom("copy_ through transpose slice", through_transpose_slice, (randn(2, 4),)),
    Idiom("fill_ and zero_ on slices", fill_slice, (randn(3, 4),)),
    Idiom("masked_fill_ on a slice", masked_fill_slice, (randn(3, 4),)),
    Idiom("add_ and div_ on slices", add_div_slice, (randn(3, 4),)),
    Idiom("scatter_ into a slice", scatter_slice, (randn(2, 4), torch.stack([torch.randperm(4, generator=_G) for _ in range(2)]))),
    Idiom("two overlapping views", overlapping_views, (randn(3, 4),)),
    Idiom("index_put with a tensor index", index_put_tensor, (randn(2, 3), torch.tensor([3, 1]))),
    Idiom("a value read before a later write", write_into_input_clone_returned_twice, (randn(2, 2),)),
]
