"""W5 — scaling: lowering cost and both routes' time on 10^5- and 10^6-node chains.

The program is ``h = add(h, x)`` repeated n times on ``f32[1]`` — as deep as a program
gets, one node per op. Per size it reports, in µs per node: building the HIR with the
builders, ``infer_types``, ``lower`` (on the typed function), and one call of eager torch,
``tfexec.evaluate`` and ``ForwardGraph.run(check="off")``; then the same costs in units of
eager's time per node measured at that size (so a machine that got busier between sizes
does not look like non-linearity), and the last column divides that relative cost at the
largest size by the one at the smallest (≈ 1.0: linear). Building and
lowering are timed with the garbage collector on, as a user meets them; the runs with it
off, in shuffled rounds.

Run: ``.venv/bin/python bench/w5_scaling.py [--quick] [--sizes 100000,1000000] [--rounds R]``
(the 10^6 size takes a few minutes and a few GB).
"""

import gc
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import torch

import tfexec
from tfexec import Expr, Function, Var, f32, ops

import harness


def build(n: int) -> Function:
    x = Var("x", f32[1])
    h: Expr = x
    for _ in range(n):
        h = ops.add(h, x)
    return Function("chain", (x,), h)


def eager_fn(n: int) -> Callable[[torch.Tensor], torch.Tensor]:
    def chain(x: torch.Tensor) -> torch.Tensor:
        h = x
        add = torch.add
        for _ in range(n):
            h = add(h, x)
        return h

    return chain


def _timed(f: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    out = f()
    return time.perf_counter() - start, out


def measure_size(n: int, rounds: int, seed: int) -> dict[str, float]:
    """Median seconds per phase and per executor for an ``n``-node chain."""
    phases: dict[str, list[float]] = {"build": [], "infer_types": [], "lower": []}
    fn: Function | None = None
    graph: tfexec.ForwardGraph | None = None
    for _ in range(rounds):
        fn = graph = None
        gc.collect()
        t, built = _timed(lambda: build(n))
        phases["build"].append(t)
        assert isinstance(built, Function)
        fn = built
        t, _ = _timed(lambda: tfexec.infer_types(built))
        phases["infer_types"].append(t)
        t, lowered = _timed(lambda: tfexec.lower(built))
        phases["lower"].append(t)
        assert isinstance(lowered, tfexec.ForwardGraph)
        graph = lowered
    assert fn is not None and graph is not None
    x = torch.tensor([1e-3])
    eager = eager_fn(n)
    g, f = graph, fn
    ex = [
        harness.Executor("eager", lambda: eager(x)),
        harness.Executor("tfexec evaluate", lambda: tfexec.evaluate(f, x)),
        harness.Executor("run check=off", lambda: g.run(x, check="off")),
    ]
    harness.same([(e.name, e.call()) for e in ex])
    timings = harness.measure(ex, rounds=rounds, warmup=1, block_s=0.0, seed=seed)
    out = {k: statistics.median(v) for k, v in phases.items()}
    out.update({t.name: t.median_s for t in timings})
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = harness.parser(__doc__.splitlines()[0], rounds=3, quick_rounds=2)
    p.add_argument("--sizes", default=None, help="comma-separated node counts (default 100000,1000000; 500,2000 with --quick)")
    args = p.parse_args(argv)
    with harness.torch_settings():
        sizes = [int(s) for s in (args.sizes or ("500,2000" if args.quick else "100000,1000000")).split(",")]
        rounds = harness.rounds_of(args)
        results = {n: measure_size(n, rounds, args.seed) for n in sizes}
        names = list(results[sizes[0]])
        headers = ["phase / executor", *(f"µs/node @ {n:,}" for n in sizes), *(f"× eager @ {n:,}" for n in sizes)]
        if len(sizes) > 1:
            headers.append(f"{sizes[-1]:,} / {sizes[0]:,} (× eager)")
        rows = []
        for name in names:
            per_node = [results[n][name] * 1e6 / n for n in sizes]
            relative = [results[n][name] / results[n]["eager"] for n in sizes]
            row = [name, *(f"{v:.3f}" for v in per_node), *(f"{r:.2f}" for r in relative)]
            if len(sizes) > 1:
                row.append(f"{relative[-1] / relative[0]:.2f}")
            rows.append(row)
        print(f"W5 scaling: chains of add on f32[1]; median of {rounds} round(s) per size")
        print(harness.machine_line())
        print(harness.format_table(headers, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
