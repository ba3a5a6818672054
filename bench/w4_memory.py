"""W4 — peak memory of a 200-op chain of 4 MiB values, each executor in a fresh process.

The chain ``x → neg → tanh → abs → sin → neg → …`` on ``f32[N]`` (N = 2^20, 4 MiB a value)
needs only two values alive at a time: eager Python drops each intermediate when its name
is rebound. An executor that keeps its environment keeps all 200. Each executor runs in
its own subprocess (so one's high-water mark cannot hide another's), is warmed up on a
small input, and its peak is measured as the resident-set high-water mark over the RSS
just before the call, the input already allocated. The high-water mark is reset through
``/proc/self/clear_refs`` where Linux allows it (else ``getrusage`` maxrss deltas are used).
glibc's malloc is told to ``mmap`` every block over 64 KiB so freed tensors leave the
resident set at once (``MALLOC_MMAP_THRESHOLD_``), which makes RSS track live tensors.

Run: ``.venv/bin/python bench/w4_memory.py [--quick] [--ops N] [--mib M] [--rounds R]``.
"""

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence

import torch

import tfexec
from tfexec import DimVar, Expr, Function, Var, f32, ops

import harness

EXECUTORS = ("eager", "tfexec evaluate", "run check=off", "run check=boundary", "run check=full")
CHAIN: tuple[tuple[Callable[[torch.Tensor], torch.Tensor], Callable[[Expr], Expr]], ...] = (
    (torch.neg, ops.neg), (torch.tanh, ops.tanh), (torch.abs, ops.abs), (torch.sin, ops.sin),
)
N = DimVar("N")


def eager_fn(n_ops: int) -> Callable[[torch.Tensor], torch.Tensor]:
    fns = tuple(CHAIN[i % len(CHAIN)][0] for i in range(n_ops))

    def chain(x: torch.Tensor) -> torch.Tensor:
        for f in fns:
            x = f(x)
        return x

    return chain


def hir(n_ops: int) -> Function:
    x = Var("x", f32[N])
    h: Expr = x
    for i in range(n_ops):
        h = CHAIN[i % len(CHAIN)][1](h)
    return Function("chain", (x,), h)


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
    except OSError:
        return False
    return _status_kib("VmHWM") is not None


def child(executor: str, n_ops: int, mib: float) -> dict[str, object]:
    """Measure one executor's peak in this (fresh) process."""
    with harness.torch_settings():
        return _child(executor, n_ops, mib)


def _child(executor: str, n_ops: int, mib: float) -> dict[str, object]:
    numel = int(mib * 2**20) // 4
    eager = eager_fn(n_ops)
    fn = hir(n_ops)
    graph = tfexec.lower(fn)
    call: Callable[[torch.Tensor], object] = {
        "eager": eager,
        "tfexec evaluate": lambda x: tfexec.evaluate(fn, x),
        "run check=off": lambda x: graph.run(x, check="off"),
        "run check=boundary": lambda x: graph.run(x, check="boundary"),
        "run check=full": lambda x: graph.run(x, check="full"),
    }[executor]
    for _ in range(2):
        call(torch.rand(1024))
    x = torch.rand(numel)
    gc.collect()
    gc.disable()
    if _reset_peak():
        method = "VmHWM (reset via clear_refs)"
        before = _status_kib("VmRSS") or 0
        out = call(x)
        peak = _status_kib("VmHWM") or 0
    else:
        method = "getrusage maxrss delta"
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out = call(x)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    gc.enable()
    ok = isinstance(out, torch.Tensor) and torch.equal(out, eager(x))
    return {"executor": executor, "peak_kib": peak - before, "method": method, "agrees": ok}


def measure(executors: Sequence[str], n_ops: int, mib: float) -> list[dict[str, object]]:
    """Run one child process per executor, concurrently (each measures only itself)."""
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536", OMP_NUM_THREADS="1")
    procs = [
        (e, subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--child", e, "--ops", str(n_ops), "--mib", str(mib)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        ))
        for e in executors
    ]
    results: list[dict[str, object]] = []
    for e, proc in procs:
        out, err = proc.communicate(timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"W4 child for {e} failed ({proc.returncode}):\n{err[-4000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    p = harness.parser(__doc__.splitlines()[0], rounds=3, quick_rounds=1)
    p.add_argument("--ops", type=int, default=None, help="chain length (default 200, 20 with --quick)")
    p.add_argument("--mib", type=float, default=None, help="MiB per value (default 4, 1 with --quick)")
    p.add_argument("--executors", default=",".join(EXECUTORS), help=f"comma-separated subset of: {', '.join(EXECUTORS)}")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    n_ops = args.ops or (20 if args.quick else 200)
    mib = args.mib or (1.0 if args.quick else 4.0)
    if args.child is not None:
        print(json.dumps(child(args.child, n_ops, mib)))
        return 0
    chosen = tuple(e.strip() for e in args.executors.split(",") if e.strip())
    unknown = [e for e in chosen if e not in EXECUTORS]
    if unknown:
        p.error(f"unknown executor(s) {unknown}; choose from {list(EXECUTORS)}")
    rounds = harness.rounds_of(args)
    peaks: dict[str, list[float]] = {e: [] for e in chosen}
    methods: set[str] = set()
    for _ in range(rounds):
        for r in measure(chosen, n_ops, mib):
            e = str(r["executor"])
            if not r["agrees"]:
                raise AssertionError(f"W4: {e} disagrees with eager")
            peaks[e].append(int(r["peak_kib"]) / 1024)  # type: ignore[call-overload]
            methods.add(str(r["method"]))
    eager = statistics.median(peaks["eager"]) if "eager" in peaks else None
    rows = []
    for e in chosen:
        m = statistics.median(peaks[e])
        rows.append([
            e, f"{m:,.1f}", f"{m / mib:.1f}", f"{m / eager:.2f}" if eager else "-",
            f"{(m - eager) / mib:+.1f}" if eager is not None else "-", f"[{min(peaks[e]):,.1f}, {max(peaks[e]):,.1f}]",
        ])
    print(f"W4 peak memory: {n_ops}-op chain of {mib:g} MiB values (f32[{int(mib * 2**20) // 4}]), "
          f"fresh process per executor, {rounds} round(s); peak over the RSS before the call, by {', '.join(sorted(methods))}")
    with harness.torch_settings():
        print(harness.machine_line())  # the children's settings
    print(harness.format_table(
        ["executor", "peak MiB", "values", "× eager", "values over eager", "[min, max] MiB"], rows,
    ))
    return 0


if __name__ == "__main__":
    sys.exit(main())
