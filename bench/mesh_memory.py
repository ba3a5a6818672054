"""Resident-memory cost of a mesh run over a saved module whose weights are split between the participants.

Writes a module of ~1 GiB of weights: ``layers`` tensor-parallel MLP blocks, each an
up-projection ``f32[side, side]`` split on its columns and a down-projection split on its
rows (``ShardLayout`` over a 2-participant mesh; 8 blocks of side 4096 = 16 weights of
64 MiB). Then, in a fresh process (the *caller*), opens it with ``load_module`` and runs it
with ``evaluate_mesh`` on a small input, and reports

* each participant's resident growth (``MeshResult.rss_growth``: its peak during the job
  over its resident set at the job's start) — it reads only its block of each weight, so
  about half the weights; goal ≤ 0.6 GiB for 1 GiB;
* the caller's peak resident growth over its resident set after import — it reads no
  weight at all; goal ≤ 64 MiB;
* the time of the call, the participants' evaluation time and the difference (the launch:
  processes, torch import, gloo group, weights read at first use inside the evaluation).

The mesh result is then checked against ``evaluate`` of the same module (which reads every
weight, after the measurement). Linux only (reads ``/proc``).

    .venv/bin/python bench/mesh_memory.py [--quick] [--layers 8] [--side 4096] [--dir DIR] [--keep] [--no-check]
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

BATCH = 8  # rows of the input


def _status() -> dict[str, int]:
    out: dict[str, int] = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
    return out


def _reset_peak() -> None:
    """Reset the resident high-water mark (VmHWM), so the peak is measured from here on."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _module(layers: int, side: int) -> "object":
    from tfexec import ConstTensor, Function, IRModule, Mesh, ShardLayout, Split, Var, f32, ops

    mesh = Mesh((2,), ("tp",))
    columns, rows = ShardLayout(mesh, (Split(1),)), ShardLayout(mesh, (Split(0),))
    x = Var("x", f32[BATCH, side])
    h: object = x
    types = {}
    for i in range(layers):
        up, down = ConstTensor(f"up{i}", f32[side, side] @ columns), ConstTensor(f"down{i}", f32[side, side] @ rows)
        h = ops.matmul(ops.gelu(ops.matmul(h, up)), down)
        types[up.name], types[down.name] = up.type, down.type
    return IRModule({"forward": Function("forward", (x,), h)}, types, entry="forward")


def write(target: Path, layers: int, side: int) -> None:
    """Write the module with random weights (scaled so activations stay of order one)."""
    import torch

    from tfexec import save_module

    g = torch.Generator().manual_seed(0)
    weights = {}
    for i in range(layers):
        weights[f"up{i}"] = torch.randn(side, side, generator=g) / side**0.5
        weights[f"down{i}"] = torch.randn(side, side, generator=g) / side**0.5
    save_module(_module(layers, side), weights, target)


def measure(target: Path, check: bool) -> dict[str, object]:
    """In this fresh process: open the module, run it on the mesh, report memory and time."""
    import torch

    import tfexec
    from tfexec.mesh import MeshJob, evaluate_mesh_batch

    x = torch.randn(BATCH, int(json.loads((target / "manifest.json").read_text())["tensors"]["up0"]["shape"][0]),
                    generator=torch.Generator().manual_seed(1))
    _reset_peak()
    base = _status()["VmRSS"]
    start = time.perf_counter()
    loaded = tfexec.load_module(target)
    (outcome,) = evaluate_mesh_batch([MeshJob(loaded, (x,))], timeout=600)
    wall = time.perf_counter() - start
    peak = _status()["VmHWM"]
    result = outcome.unwrap()
    assert loaded.reads() == {}, loaded.reads()  # the caller read no weight
    weights = sum(int(f["bytes"]) for f in json.loads((target / "manifest.json").read_text())["files"].values())
    out: dict[str, object] = {
        "weights_bytes": weights, "participants_growth": list(result.rss_growth or ()), "caller_growth": peak - base,
        "wall_seconds": wall, "evaluation_seconds": sum(result.seconds), "checked": False,
    }
    if check:
        single = tfexec.evaluate(tfexec.load_module(target), x)
        assert isinstance(single, torch.Tensor) and isinstance(result.logical, torch.Tensor)
        torch.testing.assert_close(result.logical, single)  # the tolerance policy of tfexec.mesh
        out["checked"] = True
    return out


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "mesh memory")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2 blocks of side 512 (4 MiB)")
    parser.add_argument("--layers", type=int, default=8, help="MLP blocks, two weights each (default 8)")
    parser.add_argument("--side", type=int, default=4096, help="each weight is f32[side, side] (default 4096: 64 MiB)")
    parser.add_argument("--dir", type=Path, help="where to write the module (default: a temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the written module")
    parser.add_argument("--no-check", action="store_true", help="skip the check against evaluate (it reads every weight)")
    parser.add_argument("--_write", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--_measure", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    layers, side = (2, 512) if args.quick else (args.layers, args.side)
    if args._write:
        write(Path(args._write), layers, side)
        return {}
    if args._measure:
        result = measure(Path(args._measure), not args.no_check)
        print(json.dumps(result))
        return result
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="tfexec-bench-"))
    target = root / "module"
    try:  # write and measure in separate processes, so the writer's memory is not counted
        subprocess.run([sys.executable, __file__, "--_write", str(target), "--layers", str(layers), "--side", str(side)],
                       check=True, capture_output=True, text=True)
        command = [sys.executable, __file__, "--_measure", str(target), *(["--no-check"] if args.no_check else [])]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the measuring process failed:\n{done.stderr}")
        result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    mib = 2**20
    weights = int(result["weights_bytes"])
    growth = [int(g) for g in result["participants_growth"]]
    print(f"Mesh memory: {weights / mib:.0f} MiB of weights ({2 * layers} of f32[{side}, {side}]) split over Mesh((2,), ('tp',))")
    for rank, g in enumerate(growth):
        print(f"participant rank {rank} resident growth: {g / mib:8.1f} MiB  ({g / weights:.2f} of the weights)")
    print(f"caller peak resident growth:     {int(result['caller_growth']) / mib:8.1f} MiB")
    launch = float(result["wall_seconds"]) - float(result["evaluation_seconds"])
    print(f"time: {float(result['wall_seconds']):.2f} s for the call, {float(result['evaluation_seconds']):.2f} s evaluating "
          f"(weights read inside), {launch:.2f} s launching and collecting")
    print("checked against evaluate: " + ("yes" if result["checked"] else "no (--no-check)"))
    return result


if __name__ == "__main__":
    main()
