"""W1 — a 2,000-op elementwise DAG on f32[16]: per-node overhead of each executor.

The tensors are tiny, so the torch kernels cost about the same everywhere and the
difference between executors is what each spends around an op: dispatch, environment
reads and writes, freeing, checking. Executors, timed side by side in the same rounds:

* ``eager (straight-line)`` — the baseline, the limit an interpreter is measured against:
  the DAG written out as Python statements, one per op (``v4 = torch.add(v0, v1)`` …, each
  value ``del``-eted after its last read), as a code generator would emit it. The benchmark
  builds that text from the op list and ``compile``s it (``straight_line_source``); tfexec
  itself generates no code;
* ``eager (op-list loop)`` — the same torch calls from a tight Python loop over the op list
  (the old baseline: it adds a loop step per op);
* ``fx GraphModule`` — ``torch.fx.symbolic_trace`` of the straight-line function (fx's own
  generated straight-line code, the same calls and frees);
* ``fx Interpreter`` — ``torch.fx.Interpreter`` over the same graph;
* ``onnx ReferenceEvaluator`` — when ``onnx`` is installed: ``onnx.reference.ReferenceEvaluator``
  on an ONNX model of the DAG (``Add``/``Mul``/``Neg``/``Exp``/``Tanh`` nodes over four float
  inputs of shape [16]) fed numpy inputs;
* ``tfexec evaluate`` — the visitor (``tfexec.evaluate``);
* ``run check=…`` — ``tfexec.lower(fn).run(..., check=off|boundary|full)``.

Every executor's result is bitwise eager's, except ONNX's (numpy's ``exp``/``tanh`` may
round differently), which must be within ``ONNX_RTOL``/``ONNX_ATOL``. After the table, a
line gives issue #19's targets: ``evaluate`` ≤ 0.5× the fx Interpreter, ``run`` (check off)
≤ 1.15× and ``check="full"`` ≤ 2× straight-line eager.

Run: ``.venv/bin/python bench/w1_elementwise.py [--quick] [--nodes N] [--rounds R]``.
"""

import linecache
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import torch
import torch.fx

import tfexec
from tfexec import Expr, Function, Var, f32, ops

import harness
import onnx_peer

if TYPE_CHECKING:  # onnx is optional: imported where the model is built, only when installed
    import onnx

KINDS = ("add", "mul", "neg", "exp", "tanh")
TORCH_FN: dict[str, Callable[..., torch.Tensor]] = {
    "add": torch.add, "mul": torch.mul, "neg": torch.neg, "exp": torch.exp, "tanh": torch.tanh,
}
ONNX_OP = {"add": "Add", "mul": "Mul", "neg": "Neg", "exp": "Exp", "tanh": "Tanh"}
BUILDER: dict[str, Callable[..., Expr]] = {"add": ops.add, "mul": ops.mul, "neg": ops.neg, "exp": ops.exp, "tanh": ops.tanh}
N_INPUTS = 4
WIDTH = 16
LIMIT = 64.0
BASELINE = "eager (straight-line)"
# ONNX's result against eager: |onnx - eager| <= ONNX_ATOL + ONNX_RTOL * |eager| everywhere.
# numpy's exp/tanh differ from torch's in the last bit or two, and 2,000 ops carry that along:
# over seeds 0-39 the worst |Δ| / (|eager| + 1) was 2.4e-5, so 1e-4 leaves a 4× margin.
ONNX_RTOL = 1e-4
ONNX_ATOL = 1e-4
TARGETS = (
    harness.Target("tfexec evaluate", "fx Interpreter", 0.5),
    harness.Target("run check=off", BASELINE, 1.15),
    harness.Target("run check=full", BASELINE, 2.0),
)


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


def straight_line_source(program: Program) -> str:
    """The program as Python source, one statement per op, as a code generator would emit it
    (``torch.fx``'s does the same): ``v4 = torch.add(v0, v1)`` …, each value deleted after the
    op that reads it last (``del v0, v1``), as the lowering's run frees its slots — measured
    here, keeping every value to the end instead was 10–15% slower — then ``return v<last>``."""
    last_read: dict[int, int] = {}
    for index, (_kind, a, b) in enumerate(program.ops):
        last_read[a] = index
        if b >= 0:
            last_read[b] = index
    params = ", ".join(f"v{i}" for i in range(N_INPUTS))
    lines = [f"def w1_straight_line({params}):"]
    for index, (kind, a, b) in enumerate(program.ops):
        assert kind in TORCH_FN, kind
        operands = f"v{a}" if b < 0 else f"v{a}, v{b}"
        lines.append(f"    v{N_INPUTS + index} = torch.{kind}({operands})")
        dead = sorted({v for v in (a, b) if v >= 0 and last_read[v] == index})
        if dead:
            lines.append("    del " + ", ".join(f"v{v}" for v in dead))
    lines.append(f"    return v{N_INPUTS + len(program.ops) - 1}")
    return "\n".join(lines) + "\n"


def straight_line_fn(program: Program) -> Callable[..., torch.Tensor]:
    """The baseline: ``straight_line_source`` compiled. The text is the benchmark's own, made
    from its op list (never user input); it is registered with ``linecache`` so a traceback
    through it shows the line."""
    source = straight_line_source(program)
    filename = f"<bench w1: straight-line eager, {len(program.ops)} ops>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace: dict[str, object] = {"torch": torch}
    exec(compile(source, filename, "exec"), namespace)
    return cast(Callable[..., torch.Tensor], namespace["w1_straight_line"])


def onnx_model(program: Program) -> "onnx.ModelProto":
    """The program as an ONNX model: one ``Add``/``Mul``/``Neg``/``Exp``/``Tanh`` node per op, over
    float inputs ``x0..x3`` of shape [16], values named ``v<index>`` as in the straight-line source."""
    from onnx import TensorProto, helper

    name = {i: f"x{i}" for i in range(N_INPUTS)}
    nodes = []
    for index, (kind, a, b) in enumerate(program.ops):
        here = N_INPUTS + index
        name[here] = f"v{here}"
        operands = [name[a]] if b < 0 else [name[a], name[b]]
        nodes.append(helper.make_node(ONNX_OP[kind], operands, [name[here]]))
    graph = helper.make_graph(
        nodes, "w1",
        [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [WIDTH]) for i in range(N_INPUTS)],
        [helper.make_tensor_value_info(name[N_INPUTS + len(program.ops) - 1], TensorProto.FLOAT, [WIDTH])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx_peer.OPSET)])


def loop_fn(program: Program) -> Callable[..., torch.Tensor]:
    """The same torch calls in a tight Python loop over the op list."""
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


def executors(n: int, seed: int) -> tuple[list[harness.Executor], int, str]:
    """Every executor of an ``n``-op program, checked against the baseline; the op count; and
    the line about ONNX (its tolerance, or why its row is absent)."""
    program = generate(n, seed)
    g = torch.Generator().manual_seed(seed)
    xs = tuple(torch.rand(WIDTH, generator=g) * 2 - 1 for _ in range(N_INPUTS))
    eager = straight_line_fn(program)
    loop = loop_fn(program)
    gm = torch.fx.symbolic_trace(eager)
    interp = torch.fx.Interpreter(gm)
    fn = hir(program)
    graph = tfexec.lower(fn)
    ex = [
        harness.Executor(BASELINE, lambda: eager(*xs)),
        harness.Executor("eager (op-list loop)", lambda: loop(*xs)),
        harness.Executor("fx GraphModule", lambda: gm(*xs)),
        harness.Executor("fx Interpreter", lambda: interp.run(*xs)),
        harness.Executor("tfexec evaluate", lambda: tfexec.evaluate(fn, *xs)),
        harness.Executor("run check=off", lambda: graph.run(*xs, check="off")),
        harness.Executor("run check=boundary", lambda: graph.run(*xs, check="boundary")),
        harness.Executor("run check=full", lambda: graph.run(*xs, check="full")),
    ]
    harness.same([(e.name, e.call()) for e in ex])
    note = onnx_peer.ABSENT
    if onnx_peer.available():
        feeds = {f"x{i}": x for i, x in enumerate(xs)}
        peer, note = onnx_peer.executor(
            onnx_model(program), feeds, eager(*xs), ref_name=BASELINE, rtol=ONNX_RTOL, atol=ONNX_ATOL
        )
        ex.insert(4, peer)  # after the fx rows: the Python peers side by side
    return ex, len(program.ops), note


def main(argv: Sequence[str] | None = None) -> int:
    p = harness.parser(__doc__.splitlines()[0], rounds=15)
    p.add_argument("--nodes", type=int, default=None, help="op count (default 2000, 100 with --quick)")
    args = p.parse_args(argv)
    with harness.torch_settings():
        n = args.nodes or (100 if args.quick else 2000)
        ex, nodes, onnx_note = executors(n, args.seed)
        timings = harness.measure(
            ex, rounds=harness.rounds_of(args), baseline=BASELINE, seed=args.seed, block_s=0.005 if args.quick else 0.05
        )
        print(f"W1 elementwise DAG: {nodes} ops on f32[{WIDTH}], {harness.rounds_of(args)} shuffled rounds")
        print(harness.machine_line())
        print(harness.ratio_table(timings, nodes=nodes, baseline=BASELINE))
        print(onnx_note)
        print(harness.targets_line(timings, TARGETS, quick=args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
