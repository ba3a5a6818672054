"""W1 — a 2,000-op elementwise DAG on f32[16]: per-node overhead of each executor.

The tensors are tiny, so the torch kernels cost about the same everywhere and the
difference between executors is what each spends around an op: dispatch, environment
reads and writes, freeing, checking. Executors, all computing bitwise the same result:

* ``eager`` — a Python function making the torch calls (a tight loop over the op list);
* ``fx GraphModule`` — ``torch.fx.symbolic_trace`` of that function (straight-line code);
* ``fx Interpreter`` — ``torch.fx.Interpreter`` over the same graph;
* ``tfexec evaluate`` — the visitor (``tfexec.evaluate``);
* ``run check=…`` — ``tfexec.lower(fn).run(..., check=off|boundary|full)``.

Run: ``.venv/bin/python bench/w1_elementwise.py [--quick] [--nodes N] [--rounds R]``.
"""

import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.fx

import tfexec
from tfexec import Expr, Function, Var, f32, ops

import harness

KINDS = ("add", "mul", "neg", "exp", "tanh")
TORCH_FN: dict[str, Callable[..., torch.Tensor]] = {
    "add": torch.add, "mul": torch.mul, "neg": torch.neg, "exp": torch.exp, "tanh": torch.tanh,
}
BUILDER: dict[str, Callable[..., Expr]] = {"add": ops.add, "mul": ops.mul, "neg": ops.neg, "exp": ops.exp, "tanh": ops.tanh}
N_INPUTS = 4
WIDTH = 16
LIMIT = 64.0


@dataclass(frozen=True, slots=True)
class Program:
    """A DAG as an op list over value indices (``0..N_INPUTS-1`` are the inputs); ``b`` is -1
    for a unary op. Every value is read by a later op, except the last, the output."""

    ops: tuple[tuple[str, int, int], ...]


def generate(n: int, seed: int = 0) -> Program:
    """A random ``n``-op DAG mixing add/mul/neg/exp/tanh with sharing (values read twice or
    more) and branches, whose values stay bounded so no executor meets inf or NaN: an op whose
    result could exceed ``LIMIT`` in magnitude becomes a ``tanh``."""
    rng = random.Random(seed)
    bound = [2.0] * N_INPUTS  # inputs are uniform in [-1, 1]; a loose bound on |value|
    unread: list[int] = list(range(N_INPUTS))  # values no op has read yet
    out: list[tuple[str, int, int]] = []

    def window() -> int:
        return rng.randrange(max(0, len(bound) - 64), len(bound))

    while len(out) < n:
        remaining = n - len(out)
        if len(unread) - 1 >= remaining or len(unread) >= 16:  # merge two unread values
            a = unread.pop(rng.randrange(len(unread)))
            b = unread.pop(rng.randrange(len(unread)))
            out.append(("add", a, b))
            bound.append(bound[a] + bound[b])
            unread.append(len(bound) - 1)
            continue
        if rng.random() < 0.15:
            a = window()  # a branch off an already-read value: sharing
            if a in unread:
                unread.remove(a)
        else:
            a = unread.pop(rng.randrange(len(unread)))
        kind = rng.choice(KINDS)
        b = -1
        if kind in ("add", "mul"):
            others = [u for u in unread if u != a]
            if others and rng.random() < 0.4:
                b = others[rng.randrange(len(others))]
                unread.remove(b)
            else:
                b = window()
                if b in unread:
                    unread.remove(b)
        value_bound = {
            "add": bound[a] + (bound[b] if b >= 0 else 0.0),
            "mul": bound[a] * (bound[b] if b >= 0 else 1.0),
            "neg": bound[a],
            "exp": 2.718281828 ** bound[a],
            "tanh": 1.0,
        }[kind]
        if value_bound > LIMIT:
            if b >= 0 and b not in unread:
                unread.append(b)  # only a is consumed by the replacement
            kind, b, value_bound = "tanh", -1, 1.0
        out.append((kind, a, b))
        bound.append(value_bound)
        unread.append(len(bound) - 1)
    return Program(tuple(out))


def eager_fn(program: Program) -> Callable[..., torch.Tensor]:
    """The eager baseline: the program's torch calls in a tight Python loop."""
    steps = tuple((TORCH_FN[k], a, b) for k, a, b in program.ops)

    def eager(x0: torch.Tensor, x1: torch.Tensor, x2: torch.Tensor, x3: torch.Tensor) -> torch.Tensor:
        v = [x0, x1, x2, x3]
        append = v.append
        for f, a, b in steps:
            append(f(v[a]) if b < 0 else f(v[a], v[b]))
        return v[-1]

    return eager


def hir(program: Program) -> Function:
    """The program as a HIR function of four ``f32[16]`` inputs."""
    params = tuple(Var(f"x{i}", f32[WIDTH]) for i in range(N_INPUTS))
    values: list[Expr] = list(params)
    for kind, a, b in program.ops:
        values.append(BUILDER[kind](values[a]) if b < 0 else BUILDER[kind](values[a], values[b]))
    return Function("w1", params, values[-1])


def executors(n: int, seed: int) -> tuple[list[harness.Executor], int]:
    program = generate(n, seed)
    g = torch.Generator().manual_seed(seed)
    xs = tuple(torch.rand(WIDTH, generator=g) * 2 - 1 for _ in range(N_INPUTS))
    eager = eager_fn(program)
    gm = torch.fx.symbolic_trace(eager)
    interp = torch.fx.Interpreter(gm)
    fn = hir(program)
    graph = tfexec.lower(fn)
    ex = [
        harness.Executor("eager", lambda: eager(*xs)),
        harness.Executor("fx GraphModule", lambda: gm(*xs)),
        harness.Executor("fx Interpreter", lambda: interp.run(*xs)),
        harness.Executor("tfexec evaluate", lambda: tfexec.evaluate(fn, *xs)),
        harness.Executor("run check=off", lambda: graph.run(*xs, check="off")),
        harness.Executor("run check=boundary", lambda: graph.run(*xs, check="boundary")),
        harness.Executor("run check=full", lambda: graph.run(*xs, check="full")),
    ]
    harness.same([(e.name, e.call()) for e in ex])
    return ex, len(program.ops)


def main(argv: Sequence[str] | None = None) -> int:
    p = harness.parser(__doc__.splitlines()[0], rounds=15)
    p.add_argument("--nodes", type=int, default=None, help="op count (default 2000, 100 with --quick)")
    args = p.parse_args(argv)
    with harness.torch_settings():
        n = args.nodes or (100 if args.quick else 2000)
        ex, nodes = executors(n, args.seed)
        timings = harness.measure(ex, rounds=harness.rounds_of(args), seed=args.seed, block_s=0.005 if args.quick else 0.05)
        print(f"W1 elementwise DAG: {nodes} ops on f32[{WIDTH}], {harness.rounds_of(args)} shuffled rounds")
        print(harness.machine_line())
        print(harness.ratio_table(timings, nodes=nodes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
