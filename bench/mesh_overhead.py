"""Mesh overhead — ``evaluate_mesh`` against the single-participant ``evaluate``.

Two tensor-parallel programs: a column-split matmul (``x @ w``, ``w`` split on its columns)
and an MLP (column-split up-projection, GELU, row-split down-projection, whose output is a
partial sum the participants add up). Each is timed

* in this process: torch eager and ``tfexec.evaluate`` on logical tensors (one thread,
  shuffled rounds, ``harness.measure``);
* on the mesh: one ``evaluate_mesh_batch`` launch runs both programs ``rounds`` times
  inside the participants; a round is distributing the inputs, evaluating, and gathering
  the logical result, timed by the slowest participant.

The table gives per program the median ms per call, the mesh's ratio to ``evaluate``
(median/median) and, once, the launch: the wall time of the whole batch call less the
timed rounds — what starting the participants (Python, torch, the gloo group) costs.
Mesh results are checked against ``evaluate`` before anything is reported.

Run: ``.venv/bin/python bench/mesh_overhead.py [--quick] [--mesh 2 | 2x2] [--rounds R]``.
"""

import math
import statistics
import sys
import time
from collections.abc import Sequence

import torch

import tfexec
from tfexec import Function, Mesh, Replicate, ShardLayout, Split, Var, f32, ops
from tfexec.mesh import MeshJob, evaluate_mesh_batch

import harness


def _mesh(spec: str) -> Mesh:
    shape = tuple(int(n) for n in spec.lower().split("x"))
    names = ("tp",) if len(shape) == 1 else tuple(f"m{i}" for i in range(len(shape) - 1)) + ("tp",)
    return Mesh(shape, names)


def _split(mesh: Mesh, axis: int) -> ShardLayout:
    """Split ``axis`` over the last mesh axis, replicated over the others."""
    return ShardLayout(mesh, tuple(Replicate() for _ in mesh.shape[:-1]) + (Split(axis),))


def programs(mesh: Mesh, b: int, d: int, h: int) -> dict[str, Function]:
    """The column-split matmul and the tensor-parallel MLP on ``mesh``."""
    x, w = Var("x", f32[b, d]), Var("w", f32[d, h] @ _split(mesh, 1))
    matmul = Function("column_matmul", (x, w), ops.matmul(x, w))
    x2, w1, w2 = Var("x", f32[b, d]), Var("w1", f32[d, h] @ _split(mesh, 1)), Var("w2", f32[h, d] @ _split(mesh, 0))
    mlp = Function("mlp", (x2, w1, w2), ops.matmul(ops.gelu(ops.matmul(x2, w1)), w2))
    return {"column matmul": matmul, "mlp": mlp}


def main(argv: Sequence[str] | None = None) -> int:
    p = harness.parser(__doc__.splitlines()[0] if __doc__ else "mesh overhead", rounds=20, quick_rounds=3)
    p.add_argument("--mesh", default="2", help="mesh shape: 2, 4, 2x2, ... (default 2)")
    args = p.parse_args(argv)
    rounds = harness.rounds_of(args)
    mesh = _mesh(args.mesh)
    b, d, h = (16, 64, 256) if args.quick else (64, 512, 2048)
    g = torch.Generator().manual_seed(args.seed)
    x, w1, w2 = torch.randn(b, d, generator=g), torch.randn(d, h, generator=g) / d**0.5, torch.randn(h, d, generator=g) / h**0.5
    fns = programs(mesh, b, d, h)
    inputs = {"column matmul": (x, w1), "mlp": (x, w1, w2)}
    eager = {
        "column matmul": lambda: torch.matmul(x, w1),
        "mlp": lambda: torch.matmul(torch.nn.functional.gelu(torch.matmul(x, w1)), w2),
    }

    start = time.perf_counter()
    outcomes = evaluate_mesh_batch([MeshJob(fns[n], inputs[n], rounds=rounds) for n in fns], timeout=600)
    wall = time.perf_counter() - start
    results = {n: o.unwrap() for n, o in zip(fns, outcomes)}

    rows: list[list[str]] = []
    with harness.torch_settings():
        for name, fn in fns.items():
            single = tfexec.evaluate(fn, *inputs[name])
            assert isinstance(single, torch.Tensor)
            mesh_value = results[name].logical
            assert isinstance(mesh_value, torch.Tensor)
            torch.testing.assert_close(mesh_value, single)  # the tolerance policy of tfexec.mesh
            timings = harness.measure(
                [harness.Executor("eager", eager[name]), harness.Executor("evaluate", lambda f=fn, i=inputs[name]: tfexec.evaluate(f, *i))],
                rounds=rounds, seed=args.seed,
            )
            single_s = timings[1].median_s
            mesh_s = statistics.median(results[name].seconds)
            rows.append([name, f"{timings[0].median_s * 1e3:.3f}", f"{single_s * 1e3:.3f}", f"{mesh_s * 1e3:.3f}",
                         f"{mesh_s / single_s:.2f}"])
    launch = wall - sum(sum(r.seconds) for r in results.values())
    print(f"Mesh overhead: {mesh} ({math.prod(mesh.shape)} participants), "
          f"x f32[{b}, {d}], hidden {h}, {rounds} rounds")
    print(harness.machine_line())
    print(harness.format_table(["program", "eager ms", "evaluate ms", "mesh ms/round", "mesh / evaluate"], rows))
    print(f"launch: {wall:.2f} s for the batch call, {launch:.2f} s of it outside the timed rounds (start-up, I/O)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
