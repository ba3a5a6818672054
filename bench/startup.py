"""Startup — what every command-line call pays before it computes anything.

Three whole processes, each run ``--rounds`` times in a fresh random order per round:

* ``python -c "import torch"`` — the baseline: tfexec cannot start faster than torch;
* ``python -c "import tfexec"``;
* ``python -m tfexec run examples/mlp.tf.py --dim B=2`` — a whole small command (the
  ``tfexec`` console script runs the same ``tfexec.cli.main``).

A first, untimed round writes the bytecode caches. Measured is the **CPU time** of each child (user + system, from ``resource.getrusage`` of
the children), which a busy machine disturbs far less than wall time; wall time is shown
too. The ratio of a row is taken against ``import torch`` in the same round; reported are
the median ratio ``[min, max]`` and the target of issue #32 (``import tfexec`` ≤ 1.15×).

Run: ``.venv/bin/python bench/startup.py [--quick] [--rounds R] [--seed S]``.
"""

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.15
"""Issue #32: ``import tfexec`` costs at most this much of ``import torch``'s CPU time."""

COMMANDS: dict[str, list[str]] = {
    "import torch": ["-c", "import torch"],
    "import tfexec": ["-c", "import tfexec"],
    "tfexec run mlp --dim B=2": ["-m", "tfexec", "run", str(ROOT / "examples" / "mlp.tf.py"), "--dim", "B=2"],
}


def _environment() -> dict[str, str]:
    """This checkout's src/ first on the path, so the tfexec measured is the one beside this script.

    Bytecode is written and read as in an ordinary install (``PYTHONDONTWRITEBYTECODE`` is
    dropped; the first, untimed round writes ``__pycache__``): otherwise every run would
    compile tfexec's sources while torch's come compiled, and the ratio would measure that."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    src = str(ROOT / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def measure_once(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one ``python ARGS`` process; a failing process is an error."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], env=env, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"startup: python {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two rounds: a smoke run")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args(argv)
    rounds = 2 if opts.quick else opts.rounds
    rng = random.Random(opts.seed)
    env = _environment()
    names = list(COMMANDS)
    cpu: dict[str, list[float]] = {n: [] for n in names}
    wall: dict[str, list[float]] = {n: [] for n in names}
    ratios: dict[str, list[float]] = {n: [] for n in names}
    for name in names:  # warm-up, untimed: bytecode caches written, files in the page cache
        measure_once(COMMANDS[name], env)
    for _ in range(rounds):
        order = names[:]
        rng.shuffle(order)
        this: dict[str, float] = {}
        for name in order:
            c, w = measure_once(COMMANDS[name], env)
            cpu[name].append(c)
            wall[name].append(w)
            this[name] = c
        for name in names:
            ratios[name].append(this[name] / this["import torch"])
    print(f"Startup: whole processes, {rounds} shuffled rounds, CPU time (user+sys) of each child")
    header = f"{'process':<26} {'cpu s (median)':>15} {'wall s (median)':>16} {'cpu / import torch':>26}"
    print(header)
    print("-" * len(header))
    for name in names:
        r = ratios[name]
        spread = f"{statistics.median(r):.2f}x [{min(r):.2f}, {max(r):.2f}]"
        print(f"{name:<26} {statistics.median(cpu[name]):>15.2f} {statistics.median(wall[name]):>16.2f} {spread:>26}")
    got = statistics.median(ratios["import tfexec"])
    verdict = "met" if got <= TARGET else "MISSED"
    print(f"target (issue #32): import tfexec <= {TARGET:.2f}x import torch: {got:.2f}x, {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
