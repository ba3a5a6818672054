"""Liveness: after which step each value is read for the last time, written once for both
routes (the direct route frees its environment by node, the lowered graph its slots)."""

from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def last_reads(reads: Sequence[Iterable[K]], kept: Iterable[K] = ()) -> tuple[tuple[K, ...], ...]:
    """For each step, the keys it is the last reader of. ``reads[i]`` are the keys step ``i``
    reads; keys in ``kept`` (outputs) are never freed."""
    last: dict[K, int] = {}
    for i, keys in enumerate(reads):
        for key in keys:
            last[key] = i
    for key in kept:
        last.pop(key, None)
    frees: list[list[K]] = [[] for _ in reads]
    for key, i in last.items():
        frees[i].append(key)
    return tuple(tuple(f) for f in frees)
