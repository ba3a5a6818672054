"""Inputs that keep every intermediate finite: a small search in the spirit of NNSmith's.

The generator's inputs (multiples of 1/4 in [-2, 2]) come first; when tfexec's value of
some node is NaN or infinite on them, the float inputs are redrawn away from zero and
smaller (``sign * uniform(lo, hi)`` for a few ranges), a fresh draw per attempt. Integer and
boolean inputs never change (they may be indices). A program tfexec cannot evaluate on a
redrawn input skips that attempt. When no attempt keeps every node finite, the program is
reported as an *oracle non-finite* — tfexec itself computes a NaN or an infinity there —
and no backend runs on it.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch

RANGES: tuple[tuple[float, float], ...] = ((0.5, 1.5), (0.25, 1.0), (0.1, 0.5), (0.05, 0.2))
"""The magnitude ranges of the redrawn float inputs, tried in order after the generator's own."""


@dataclass(frozen=True)
class NonFinite:
    """The first node (in the table's order) whose value is NaN or infinite."""

    key: str
    what: str


def first_non_finite(table: Mapping[str, torch.Tensor]) -> NonFinite | None:
    """The first key of ``table`` holding a NaN or an infinity, or None."""
    for key, t in table.items():
        if t.dtype.is_floating_point and t.numel() and not bool(torch.isfinite(t).all()):
            what = "NaN" if bool(torch.isnan(t).any()) else "an infinity"
            return NonFinite(key, what)
    return None


def redrawn(inputs: Sequence[object], attempt: int, seed: int) -> tuple[object, ...]:
    """The inputs of attempt ``attempt`` (≥ 1): every float tensor redrawn in the attempt's
    magnitude range with a random sign; everything else as it was."""
    lo, hi = RANGES[(attempt - 1) % len(RANGES)]
    gen = torch.Generator().manual_seed(seed * 7919 + attempt)

    def one(x: object) -> object:
        if isinstance(x, torch.Tensor) and x.dtype.is_floating_point:
            magnitude = lo + (hi - lo) * torch.rand(x.shape, generator=gen, dtype=torch.float64)
            sign = torch.randint(0, 2, x.shape, generator=gen, dtype=torch.int64) * 2 - 1
            return (magnitude * sign).to(x.dtype)
        if isinstance(x, (tuple, list)):
            return type(x)(one(f) for f in x)
        return x

    return tuple(one(x) for x in inputs)


ATTEMPTS = 1 + len(RANGES)
"""How many input sets the search tries: the generator's, then one per range."""

__all__ = ["ATTEMPTS", "NonFinite", "RANGES", "first_non_finite", "redrawn"]
