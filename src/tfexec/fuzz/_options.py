"""What a fuzz run draws and how long it runs: ``FuzzOptions``, and ``draw_programs``.

Programs come from ``tfexec.testing.programs()`` drawn by Hypothesis itself, deterministically
for a seed: a batch is one ``@given`` run under ``@seed(...)`` with the generate phase alone
and no example database, whose body only collects the programs it is handed (nothing is
asserted in it, so Hypothesis never shrinks). Batch ``i`` of seed ``s`` uses the seed
``(s * 1000003 + i) mod 2**32``; the same seed, options and Hypothesis version give the same programs.
"""

import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from tfexec.compare import Tolerance
from tfexec.ir.dtypes import DType

BATCH = 20
"""Programs drawn per Hypothesis run (the first of each is its simplest; duplicates are skipped)."""


class FuzzUsageError(ValueError):
    """Options a fuzz run cannot start with (a bad budget, an unknown op name): exit code 2."""


@dataclass(frozen=True)
class FuzzOptions:
    """What to draw (the ``programs()`` switches), the seed, and the budget: ``count``
    distinct programs (a duplicate draw is skipped, not counted) or ``seconds`` of wall
    time, whichever ends first (at least one is set)."""

    seed: int = 0
    count: int | None = 50
    seconds: float | None = None
    ops: frozenset[str] | None = None
    """Op names the programs may call (None: every op in the catalogue)."""
    dtypes: tuple[DType, ...] = ()
    """The dtypes of new parameters and values (empty: the generator's f32, i64, b1, i32)."""
    max_size: int = 6
    max_ops: int = 6
    loops: bool = True
    calls: bool = True
    layouts: bool = True
    tuples: bool = True
    v2_ops: bool = True
    tolerances: Mapping[DType, Tolerance] = field(default_factory=dict)
    """Per-dtype overrides of ``tfexec.compare.DEFAULT_TOLERANCES``."""
    reduce: bool = True
    """Reduce each new finding to a 1-minimal program (else the whole program is the repro)."""
    max_checks: int | None = 200
    """At most this many checks per reduction (the repro then says it is not 1-minimal)."""

    def __post_init__(self) -> None:
        if self.count is None and self.seconds is None:
            raise FuzzUsageError("a fuzz run needs a budget: --count N or --seconds S (or both)")
        if self.count is not None and self.count < 1:
            raise FuzzUsageError(f"--count must be at least 1, got {self.count}")
        if self.seconds is not None and not self.seconds > 0:
            raise FuzzUsageError(f"--seconds must be a positive number, got {self.seconds}")
        if self.max_size < 1:
            raise FuzzUsageError(f"--max-size must be at least 1, got {self.max_size}")
        if self.max_ops < 1:
            raise FuzzUsageError(f"--max-ops must be at least 1, got {self.max_ops}")
        if self.max_checks is not None and self.max_checks < 1:
            raise FuzzUsageError(f"--max-checks must be at least 1, got {self.max_checks}")
        if self.ops is not None:
            from tfexec.ir.ops.catalogue import OPS_BY_NAME

            unknown = sorted(self.ops - set(OPS_BY_NAME))
            if unknown:
                raise FuzzUsageError(
                    f"unknown op name(s) {', '.join(unknown)} in --ops; the names are the text form's "
                    f"(gelu, slice, dim_add; `tfexec ops` lists them)"
                )
            if not self.ops:
                raise FuzzUsageError("--ops names no op")

    def budget(self) -> str:
        """The budget in words (``50 programs``, ``60 s``, ``50 programs or 60 s``)."""
        parts = ([f"{self.count} programs"] if self.count is not None else []) + (
            [f"{self.seconds:g} s"] if self.seconds is not None else [])
        return " or ".join(parts)


class Budget:
    """Counts programs against the options' budget (``count`` and/or ``seconds``)."""

    def __init__(self, options: FuzzOptions) -> None:
        self.options = options
        self.start = time.monotonic()
        self.used = 0

    def spent(self) -> bool:
        o = self.options
        if o.count is not None and self.used >= o.count:
            return True
        return o.seconds is not None and time.monotonic() - self.start >= o.seconds

    def elapsed(self) -> float:
        return time.monotonic() - self.start


def draw_programs(options: FuzzOptions) -> "Iterator[object]":
    """``tfexec.testing.Program``s for ``options``, batch after batch, without end (the
    caller stops); each batch is a seeded Hypothesis run (see the module docstring)."""
    from hypothesis import HealthCheck, Phase, given, seed, settings
    from hypothesis.errors import Unsatisfiable

    from tfexec.testing import programs

    strategy = programs(
        max_ops=options.max_ops, loops=options.loops, calls=options.calls, tuples=options.tuples,
        layouts=options.layouts, v2_ops=options.v2_ops, ops=options.ops, dtypes=options.dtypes,
        max_size=options.max_size, handlers=False, weights=False, cast_inputs=False,
    )
    batch = 0
    while True:
        found: list[object] = []

        @seed((options.seed * 1_000_003 + batch) % 2**32)
        @settings(
            database=None, phases=[Phase.generate], max_examples=BATCH, deadline=None, derandomize=False,
            suppress_health_check=list(HealthCheck), print_blob=False,
        )
        @given(strategy)
        def collect(program: object) -> None:
            found.append(program)

        try:
            collect()
        except Unsatisfiable:
            raise FuzzUsageError(
                "the options let no program be drawn (too few ops? a program needs at least one op, and "
                "its result `add`)"
            ) from None
        yield from found
        batch += 1


__all__ = ["BATCH", "Budget", "FuzzOptions", "FuzzUsageError", "draw_programs"]
