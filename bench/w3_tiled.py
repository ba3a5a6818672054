"""W3 — a tiled matmul as a ``GridRegionExpr``: loop overhead per iteration.

``C = A @ B`` with M = N = 128 and K = 2048, accumulated over K in tiles of 32: 64
iterations, each slicing a ``128×32`` panel of A and a ``32×128`` panel of B at a start
computed from the induction variable (``dim_mul(k, 32)``), multiplying them and adding the
product to the carried accumulator. The eager baseline is the Python loop doing the same
slices, matmuls and adds; the results are bitwise equal.

Run: ``.venv/bin/python bench/w3_tiled.py [--quick] [--rounds R]``.
"""

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

import tfexec
from tfexec import Function, GridRegionExpr, Var, f32, i64, ops

import harness


@dataclass(frozen=True, slots=True)
class Sizes:
    m: int
    n: int
    k: int
    tile: int

    @property
    def iterations(self) -> int:
        return self.k // self.tile


FULL = Sizes(m=128, n=128, k=2048, tile=32)
QUICK = Sizes(m=16, n=16, k=128, tile=32)


def eager_fn(s: Sizes) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """The eager loop: the same slices, matmuls and adds as the HIR's value rules."""

    def tiled(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        acc = torch.full((s.m, s.n), 0.0, dtype=torch.float32)
        for i in range(s.iterations):
            t = i * s.tile
            pa = a[0 : s.m : 1, t : t + s.tile : 1]
            pb = b[t : t + s.tile : 1, 0 : s.n : 1]
            acc = torch.add(acc, torch.matmul(pa, pb))
        return acc

    return tiled


def hir(s: Sizes) -> Function:
    """The tiled matmul as a ``GridRegionExpr`` carrying the accumulator."""
    a, b = Var("a", f32[s.m, s.k]), Var("b", f32[s.k, s.n])
    k, acc = Var("k", i64[()]), Var("acc", f32[s.m, s.n])
    t = ops.dim_mul(k, s.tile)
    pa = ops.slice(a, (0, t), sizes=(s.m, s.tile))
    pb = ops.slice(b, (t, 0), sizes=(s.tile, s.n))
    step = ops.add(acc, ops.matmul(pa, pb))
    init = ops.full(shape=(s.m, s.n), value=0.0, dtype=f32)
    return Function("tiled_matmul", (a, b), GridRegionExpr(s.iterations, k, (init,), (acc,), step, (step,)))


def executors(s: Sizes, seed: int) -> list[harness.Executor]:
    g = torch.Generator().manual_seed(seed)
    a, b = torch.randn(s.m, s.k, generator=g), torch.randn(s.k, s.n, generator=g)
    eager = eager_fn(s)
    fn = hir(s)
    graph = tfexec.lower(fn)
    ex = [
        harness.Executor("eager", lambda: eager(a, b)),
        harness.Executor("tfexec evaluate", lambda: tfexec.evaluate(fn, a, b)),
        harness.Executor("run check=off", lambda: graph.run(a, b, check="off")),
        harness.Executor("run check=boundary", lambda: graph.run(a, b, check="boundary")),
        harness.Executor("run check=full", lambda: graph.run(a, b, check="full")),
    ]
    harness.same([(e.name, e.call()) for e in ex])
    return ex


def main(argv: Sequence[str] | None = None) -> int:
    p = harness.parser(__doc__.splitlines()[0], rounds=21)
    args = p.parse_args(argv)
    with harness.torch_settings():
        s = QUICK if args.quick else FULL
        ex = executors(s, args.seed)
        timings = harness.measure(ex, rounds=harness.rounds_of(args), seed=args.seed, block_s=0.005 if args.quick else 0.05)
        print(
            f"W3 tiled matmul: M={s.m} N={s.n} K={s.k}, tile {s.tile} ({s.iterations} iterations); "
            f"{harness.rounds_of(args)} shuffled rounds"
        )
        print(harness.machine_line())
        print(harness.ratio_table(timings, nodes=s.iterations, unit="iter"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
