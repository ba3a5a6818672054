"""Delta debugging over the candidate nodes: bisect first, then linear, to 1-minimality.

The state is the set of kept candidates, listed in topological order. **Bisect** is
Zeller's ddmin over contiguous runs of that order: split the kept set into ``g`` runs; keep
one run alone if that still fails, else drop one run if that still fails, else split finer
— until the runs would be single nodes. **Linear** then tries dropping each kept node in
turn, from the output side, and repeats until a whole pass drops nothing: no single
removal keeps the failure, so the result is 1-minimal. Each distinct set is tested once.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

Phase = Literal["start", "bisect", "linear", "done"]


@dataclass(frozen=True, slots=True)
class Step:
    """Where a reduction stands: its phase, how many checks ran, how many nodes are left
    of how many, and whether the last check kept the failure (so the set shrank)."""

    phase: Phase
    checks: int
    nodes_left: int
    nodes_total: int
    shrank: bool


class _Budget(Exception):
    """The check budget ran out; the search stops with the smallest failing set so far."""


class Search:
    """One delta-debugging run over ``n`` candidates with ``test(kept) -> still fails``."""

    def __init__(
        self, n: int, test: Callable[[tuple[int, ...]], bool], progress: Callable[[Step], None] | None = None,
        max_checks: int | None = None,
    ) -> None:
        self.n = n
        self.test = test
        self.progress = progress
        self.max_checks = max_checks
        self.checks = 0
        self.cache: dict[tuple[int, ...], bool] = {}
        self.kept: tuple[int, ...] = tuple(range(n))
        self.phase: Phase = "start"

    def run(self) -> bool:
        """Reduce ``self.kept``; True when it ended 1-minimal, False when the budget ran out."""
        self._report(False)
        try:
            self.phase = "bisect"
            self._bisect()
            self.phase = "linear"
            self._linear()
        except _Budget:
            self.phase = "done"
            self._report(False)
            return False
        self.phase = "done"
        self._report(False)
        return True

    def _fails(self, kept: Sequence[int]) -> bool:
        key = tuple(sorted(kept))
        if not key:
            return False
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        if self.max_checks is not None and self.checks >= self.max_checks:
            raise _Budget
        self.checks += 1
        result = self.cache[key] = self.test(key)
        if result:
            self.kept = key
        self._report(result)
        return result

    def _report(self, shrank: bool) -> None:
        if self.progress is not None:
            self.progress(Step(self.phase, self.checks, len(self.kept), self.n, shrank))

    def _bisect(self) -> None:
        g = 2
        while len(self.kept) >= 2 and g < len(self.kept):
            runs = _split(self.kept, g)
            if any(self._fails(run) for run in runs):
                g = 2
                continue
            if any(self._fails(_without(self.kept, run)) for run in runs):
                g = max(g - 1, 2)
                continue
            g = min(2 * g, len(self.kept))

    def _linear(self) -> None:
        changed = True
        while changed and len(self.kept) > 1:
            changed = False
            for node in reversed(self.kept):
                if node in self.kept and len(self.kept) > 1 and self._fails([i for i in self.kept if i != node]):
                    changed = True


def _without(items: tuple[int, ...], run: tuple[int, ...]) -> list[int]:
    dropped = set(run)
    return [i for i in items if i not in dropped]


def _split(items: tuple[int, ...], g: int) -> list[tuple[int, ...]]:
    """``items`` in ``g`` contiguous runs whose lengths differ by at most one."""
    size, extra = divmod(len(items), g)
    runs, start = [], 0
    for k in range(g):
        end = start + size + (1 if k < extra else 0)
        runs.append(items[start:end])
        start = end
    return [r for r in runs if r]
