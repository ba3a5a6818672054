"""Timing harness shared by the benchmarks: ratios to torch eager, measured side by side.

Every executor of a workload runs in the same process, on one thread, round after round;
each round runs the executors in a fresh random order (so drift in a noisy machine's speed
lands on all of them alike) and times a block of calls per executor. What is reported is,
per executor, the median time per call and the median, min and max over rounds of its
ratio to the baseline (torch eager, written as straight-line code where the workload allows)
*in the same round*. ``pair_ratio`` takes the same per-round median for any two executors
(``evaluate`` against ``torch.fx.Interpreter``, say) and ``targets_line`` prints such ratios
against the limits issue #19 sets.

Run the workloads as scripts from the repository root, e.g.
``.venv/bin/python bench/w1_elementwise.py [--quick]``.
"""

import argparse
import gc
import math
import os
import platform
import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True, slots=True)
class Executor:
    """One way to run a workload: ``call()`` runs it once and returns its output."""

    name: str
    call: Callable[[], object]


@dataclass(slots=True)
class Timing:
    """An executor's measurements: seconds per call and ratio to the baseline, per round."""

    name: str
    seconds: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)

    @property
    def median_s(self) -> float:
        return statistics.median(self.seconds)


@contextmanager
def torch_settings() -> Iterator[None]:
    """One thread (ratios, not throughput), and denormals flushed so that a value drifting
    towards zero cannot make one round slower than another; both restored on exit, so a
    ``main`` run in-process (the smoke tests) leaves torch as it found it."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.set_flush_denormal(False)


def parser(description: str, *, rounds: int, quick_rounds: int = 3) -> argparse.ArgumentParser:
    """The flags every workload takes: ``--quick`` (tiny sizes, few rounds), ``--rounds``, ``--seed``."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="tiny sizes and few rounds (a smoke run)")
    p.add_argument("--rounds", type=int, default=None, help=f"timed rounds (default {rounds}, {quick_rounds} with --quick)")
    p.add_argument("--seed", type=int, default=0, help="seed of the program generator and the round order")
    p.set_defaults(default_rounds=rounds, quick_rounds=quick_rounds)
    return p


def rounds_of(args: argparse.Namespace) -> int:
    if args.rounds is not None:
        return int(args.rounds)
    return int(args.quick_rounds if args.quick else args.default_rounds)


def _time_block(call: Callable[[], object], inner: int) -> float:
    """Seconds per call over ``inner`` back-to-back calls (the garbage collector off, as timeit does)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in range(inner):
            call()
        stop = time.perf_counter_ns()
    finally:
        if enabled:
            gc.enable()
    return (stop - start) / 1e9 / inner


def measure(
    executors: Sequence[Executor],
    *,
    rounds: int,
    baseline: str = "eager",
    warmup: int = 2,
    block_s: float = 0.02,
    seed: int = 0,
) -> list[Timing]:
    """Time every executor for ``rounds`` shuffled rounds and return their timings.

    Each executor first runs ``warmup`` times; its block size (calls per timed block) is
    then chosen so that a block lasts about ``block_s`` seconds.
    """
    names = [e.name for e in executors]
    if baseline not in names:
        raise ValueError(f"baseline {baseline!r} is not one of the executors {names}")
    inner: dict[str, int] = {}
    for e in executors:
        for _ in range(max(1, warmup)):
            e.call()
        once = _time_block(e.call, 1)
        inner[e.name] = max(1, min(10_000, math.ceil(block_s / max(once, 1e-9))))
    rng = random.Random(seed)
    timings = {e.name: Timing(e.name) for e in executors}
    order = list(executors)
    for _ in range(rounds):
        rng.shuffle(order)
        gc.collect()
        this_round: dict[str, float] = {}
        for e in order:
            this_round[e.name] = _time_block(e.call, inner[e.name])
        for name, seconds in this_round.items():
            timings[name].seconds.append(seconds)
            timings[name].ratios.append(seconds / this_round[baseline])
    return [timings[n] for n in names]


def pair_ratio(timings: Sequence[Timing], numerator: str, denominator: str) -> float:
    """The median over rounds of ``numerator``'s time over ``denominator``'s in the same round."""
    by_name = {t.name: t for t in timings}
    top, bottom = by_name[numerator], by_name[denominator]
    return statistics.median(a / b for a, b in zip(top.seconds, bottom.seconds))


@dataclass(frozen=True, slots=True)
class Target:
    """A limit on the ratio of two executors' times (median over rounds): met when ≤ ``limit``."""

    numerator: str
    denominator: str
    limit: float


def targets_line(timings: Sequence[Timing], targets: Sequence[Target], *, quick: bool = False) -> str:
    """One line: each target's measured ratio and whether it is met. With ``quick`` the line says
    that the sizes are the smoke run's, not the workload the targets are set for."""
    parts = []
    for t in targets:
        ratio = pair_ratio(timings, t.numerator, t.denominator)
        verdict = "met" if ratio <= t.limit else "missed"
        parts.append(f"{t.numerator} / {t.denominator} {ratio:.3f} (≤ {t.limit:g}: {verdict})")
    note = " [--quick sizes: not the workload the targets are set for]" if quick else ""
    return "targets (issue #19, median of per-round ratios): " + "; ".join(parts) + note


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain-text table, columns right-aligned except the first."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def ratio_table(timings: Sequence[Timing], *, nodes: int | None = None, unit: str = "node", baseline: str = "eager") -> str:
    """The table of a timed workload: median time per call; ratio to the baseline in the same
    round (median [min, max]); the ratio of the two best times (the least noisy estimate on a
    busy machine); and, given ``nodes``, time per node and the median overhead per node over
    the baseline."""
    base = next(t for t in timings if t.name == baseline)
    headers = ["executor", "µs/call", "× eager (median)", "[min, max]", "best/best"]
    if nodes:
        headers += [f"µs/{unit}", f"overhead µs/{unit}"]
    rows: list[list[str]] = []
    for t in timings:
        us = t.median_s * 1e6
        row = [
            t.name, f"{us:,.1f}", f"{statistics.median(t.ratios):.3f}", f"[{min(t.ratios):.3f}, {max(t.ratios):.3f}]",
            f"{min(t.seconds) / min(base.seconds):.3f}",
        ]
        if nodes:
            overhead = statistics.median(s - b for s, b in zip(t.seconds, base.seconds)) * 1e6 / nodes
            row += [f"{us / nodes:.3f}", f"{overhead:+.3f}"]
        rows.append(row)
    return format_table(headers, rows)


def machine_line() -> str:
    """Where the numbers came from (they only mean something as ratios on one machine)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for text in f:
                if text.startswith("model name"):
                    cpu = text.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"python {platform.python_version()}, torch {torch.__version__}, {cpu}, {os.cpu_count()} cores, "
        f"torch threads {torch.get_num_threads()}"
    )


def max_deviation(out: torch.Tensor, ref: torch.Tensor, *, name: str, ref_name: str, rtol: float, atol: float) -> float:
    """For an executor that cannot be bitwise equal (ONNX's reference runs numpy, whose
    ``exp``/``tanh``/``matmul`` round differently): refuse it unless ``out`` is within
    ``|out - ref| <= atol + rtol * |ref|`` everywhere; return the largest ``|out - ref|``."""
    if out.shape != ref.shape or out.dtype != ref.dtype:
        raise AssertionError(
            f"benchmark executors disagree: {name} gives {out.dtype}{list(out.shape)}, {ref_name} {ref.dtype}{list(ref.shape)}"
        )
    if not torch.allclose(out, ref, rtol=rtol, atol=atol):
        worst = float((out - ref).abs().max())
        raise AssertionError(
            f"benchmark executors disagree: {name} differs from {ref_name} by up to {worst:.3g} "
            f"(tolerance rtol={rtol:g}, atol={atol:g})"
        )
    return float((out - ref).abs().max())


def same(outputs: Sequence[tuple[str, object]], *, exact: bool = True) -> None:
    """Refuse to time executors that disagree: every output must equal the first one
    (bitwise by default; the executors make the same torch calls)."""
    name0, ref = outputs[0]
    for name, out in outputs[1:]:
        a = ref if isinstance(ref, tuple) else (ref,)
        b = out if isinstance(out, tuple) else (out,)
        ok = len(a) == len(b) and all(
            isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape == y.shape and x.dtype == y.dtype
            and (torch.equal(x, y) if exact else torch.allclose(x, y, rtol=1e-5, atol=1e-5, equal_nan=True))
            for x, y in zip(a, b)
        )
        if not ok:
            raise AssertionError(f"benchmark executors disagree: {name} differs from {name0}")


__all__ = [
    "Executor", "Target", "Timing", "format_table", "machine_line", "max_deviation", "measure", "pair_ratio", "parser",
    "ratio_table", "rounds_of", "same", "targets_line", "torch_settings",
]
