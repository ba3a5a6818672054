"""Resident-memory cost of loading a large module and running a function that uses one weight.

Writes a module with ~1 GiB of weights (256 f32 tensors of 4 MiB each), then, in a fresh
process, opens it and runs a function that reads one 4 MiB weight, printing how much the
resident set grew at each step. The goal (hir.md §modules): well under 64 MiB, since
``load_module`` reads only headers and each constant is read at first use.

    .venv/bin/python bench/loading_memory.py [--dir DIR] [--tensors 256] [--keep]

With ``tfexec.text`` available the module is written by ``save_module`` and opened with
``load_module``; without it the weights are written as one ``.safetensors`` file and opened
with ``LoadedModule.from_reading`` (the same lazy reader). Linux only (reads /proc).
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfexec import IRModule

SIDE = 1024  # each weight is f32[SIDE, SIDE] = 4 MiB
USED = 17  # the one weight the entry function reads


def _rss() -> dict[str, int]:
    out: dict[str, int] = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) * 1024
    return out


def _reset_peak() -> None:
    """Reset the resident high-water mark (VmHWM), so the peak is measured from here on."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass  # older kernels: the peak then also covers the warm-up


def _module(n: int) -> "IRModule":
    from tfexec import ConstTensor, Function, IRModule, Var, f32, ops

    x = Var("x", f32[1, SIDE])
    fn = Function("forward", (x,), ops.matmul(x, ConstTensor(f"layer{USED}.w", f32[SIDE, SIDE])))
    return IRModule({"forward": fn}, {f"layer{i}.w": f32[SIDE, SIDE] for i in range(n)}, entry="forward")


def _has_text() -> bool:
    try:
        import tfexec.text as text
    except ImportError:
        return False
    return callable(getattr(text, "parse", None)) and callable(getattr(text, "print_ir", None))


def write(target: Path, n: int) -> str:
    """Write the module (or, without the text form, its weights file); return how it is opened."""
    import safetensors
    import torch

    from tfexec.loading import save_module

    weights = {f"layer{i}.w": torch.full((SIDE, SIDE), float(i)) for i in range(n)}
    if _has_text():
        save_module(_module(n), weights, target)
        return "load_module"
    target.mkdir(parents=True)
    specs = {
        k: safetensors.TensorSpec(dtype="float32", shape=[SIDE, SIDE], data_ptr=v.data_ptr(), data_len=v.numel() * 4)
        for k, v in weights.items()
    }
    safetensors.serialize_file(specs, target / "weights.safetensors")
    return "from_reading"


def measure(target: Path, n: int, how: str) -> dict[str, object]:
    """Open the module in this (fresh) process and run its entry; resident-memory deltas in bytes."""
    import torch

    from tfexec import Function, LoadedModule, Var, evaluate, f32, ops
    from tfexec.loading import load_module

    x, w = Var("x", f32[1, SIDE]), Var("w", f32[SIDE, SIDE])
    warm = torch.ones(SIDE, SIDE)
    evaluate(Function("warm", (x, w), ops.matmul(x, w)), torch.ones(1, SIDE), warm)  # warm up before measuring
    del warm
    _reset_peak()
    base = _rss()
    t0 = time.perf_counter()
    if how == "load_module":
        loaded = load_module(target)
    else:
        loaded = LoadedModule.from_reading(_module(n), target / "weights.safetensors")
    t_open = time.perf_counter() - t0
    opened = _rss()
    t0 = time.perf_counter()
    out = evaluate(loaded, torch.ones(1, SIDE))
    t_run = time.perf_counter() - t0
    ran = _rss()
    assert isinstance(out, torch.Tensor) and float(out[0, 0]) == float(USED * SIDE)
    assert loaded.reads() == {f"layer{USED}.w": 1}
    return {
        "how": how,
        "weights_bytes": n * SIDE * SIDE * 4,
        "rss_growth_open": opened["VmRSS"] - base["VmRSS"],
        "rss_growth_open_and_run": ran["VmRSS"] - base["VmRSS"],
        "peak_growth": ran["VmHWM"] - base["VmRSS"],
        "open_seconds": t_open,
        "run_seconds": t_run,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, help="where to write the module (default: a temporary directory)")
    parser.add_argument("--tensors", type=int, default=256, help="number of 4 MiB weights (256 = 1 GiB)")
    parser.add_argument("--keep", action="store_true", help="keep the written module")
    parser.add_argument("--_measure", nargs=2, metavar=("DIR", "HOW"), help=argparse.SUPPRESS)
    parser.add_argument("--_write", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._write:
        print(write(Path(args._write), args.tensors))
        return
    if args._measure:
        print(json.dumps(measure(Path(args._measure[0]), args.tensors, args._measure[1])))
        return
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="tfexec-bench-"))
    target = root / "module"
    try:
        # write and measure in separate processes, so the writer's memory is not counted
        how = subprocess.run(
            [sys.executable, __file__, "--_write", str(target), "--tensors", str(args.tensors)],
            check=True, capture_output=True, text=True,
        ).stdout.split()[-1]
        result = json.loads(subprocess.run(
            [sys.executable, __file__, "--_measure", str(target), how, "--tensors", str(args.tensors)],
            check=True, capture_output=True, text=True,
        ).stdout.splitlines()[-1])
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    mib = 2**20
    print(f"weights: {result['weights_bytes'] / mib:.0f} MiB, opened with {result['how']}, one {SIDE * SIDE * 4 // mib} MiB weight used")
    print(f"resident growth after open:          {result['rss_growth_open'] / mib:7.2f} MiB  ({result['open_seconds'] * 1e3:.1f} ms)")
    print(f"resident growth after open + run:    {result['rss_growth_open_and_run'] / mib:7.2f} MiB  ({result['run_seconds'] * 1e3:.1f} ms)")
    print(f"peak resident growth:                {result['peak_growth'] / mib:7.2f} MiB")


if __name__ == "__main__":
    main()
