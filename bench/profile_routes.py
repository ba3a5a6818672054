"""Where tfexec's time goes: cProfile of both routes on W1 (elementwise DAG) and W3 (tiled loop).

For each route it prints the functions with the most internal time, as µs per W1 node or
per W3 iteration (so the numbers read as the overhead columns of the benchmark tables).
cProfile itself inflates every Python call by a roughly constant amount, so compare rows
with each other, not with the benchmark's absolute times.

Run: ``.venv/bin/python bench/profile_routes.py [--quick] [--top N] [--route NAME]``.
"""

import cProfile
import pstats
import sys
from collections.abc import Callable, Sequence

import torch

import tfexec

import harness
import w1_elementwise
import w3_tiled


def routes(quick: bool) -> list[tuple[str, int, str, Callable[[], object]]]:
    """``(route name, units, unit name, call)`` for every profiled route."""
    program = w1_elementwise.generate(100 if quick else 2000)
    g = torch.Generator().manual_seed(0)
    xs = tuple(torch.rand(w1_elementwise.WIDTH, generator=g) * 2 - 1 for _ in range(w1_elementwise.N_INPUTS))
    fn1 = w1_elementwise.hir(program)
    graph1 = tfexec.lower(fn1)
    sizes = w3_tiled.QUICK if quick else w3_tiled.FULL
    a, b = torch.randn(sizes.m, sizes.k, generator=g), torch.randn(sizes.k, sizes.n, generator=g)
    fn3 = w3_tiled.hir(sizes)
    graph3 = tfexec.lower(fn3)
    n1, n3 = len(program.ops), sizes.iterations
    return [
        ("W1 evaluate", n1, "node", lambda: tfexec.evaluate(fn1, *xs)),
        ("W1 run check=off", n1, "node", lambda: graph1.run(*xs, check="off")),
        ("W1 run check=full", n1, "node", lambda: graph1.run(*xs, check="full")),
        ("W3 evaluate", n3, "iter", lambda: tfexec.evaluate(fn3, a, b)),
        ("W3 run check=off", n3, "iter", lambda: graph3.run(a, b, check="off")),
    ]


def profile(call: Callable[[], object], repeats: int) -> pstats.Stats:
    for _ in range(2):
        call()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(repeats):
        call()
    prof.disable()
    return pstats.Stats(prof)


def top_table(stats: pstats.Stats, units: int, unit: str, repeats: int, top: int) -> str:
    entries = stats.stats  # type: ignore[attr-defined]
    rows = []
    total = sum(v[2] for v in entries.values())
    for (file, line, name), (_cc, ncalls, tottime, cumtime, _callers) in sorted(
        entries.items(), key=lambda kv: -kv[1][2]
    )[:top]:
        where = f"{file.split('/src/')[-1].split('site-packages/')[-1]}:{line}({name})" if line else name
        rows.append([
            where, f"{ncalls / repeats / units:.2f}", f"{tottime * 1e6 / repeats / units:.3f}",
            f"{cumtime * 1e6 / repeats / units:.3f}", f"{100 * tottime / total:.1f}",
        ])
    return harness.format_table(
        ["function", f"calls/{unit}", f"self µs/{unit}", f"cum µs/{unit}", "% self"], rows,
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = harness.parser(__doc__.splitlines()[0], rounds=20, quick_rounds=2)
    p.add_argument("--top", type=int, default=15, help="rows per route")
    p.add_argument("--route", default=None, help="profile only routes whose name contains this")
    args = p.parse_args(argv)
    with harness.torch_settings():
        repeats = harness.rounds_of(args)
        print(harness.machine_line())
        for name, units, unit, call in routes(args.quick):
            if args.route and args.route not in name:
                continue
            stats = profile(call, repeats)
            print(f"\n{name}: {units} {unit}s, {repeats} profiled calls")
            print(top_table(stats, units, unit, repeats, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
