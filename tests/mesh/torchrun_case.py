"""One mesh program, run by every process of a torchrun launch (``torchrun ... torchrun_case.py CASE``):
``evaluate_distributed`` on a 2-participant mesh. Rank 0 prints the outcome; it exits 1 on an
``EvalError`` (every other rank's process is ended by tfexec itself on a failure).

Cases: ``ok`` (a tensor-parallel matmul, checked against ``evaluate``), ``fail`` (a ValueError
on rank 1), ``exit`` (rank 1 exits with code 3), ``kill`` (rank 1 gets SIGKILL), ``kill0``
(rank 0 does), ``hang`` (rank 1 sleeps), ``hang0`` (rank 0 sleeps), ``stop`` / ``stop0``
(rank 1 / rank 0 stops itself with SIGSTOP), ``forge`` (rank 1 sleeps while a store client
without the secret writes a failure report for it), ``twice`` (two runs in one launch).
The stall cases run with a timeout of 10 s, the others 60 s.
"""

import os
import signal
import subprocess
import sys

import torch
from mesh_ops import ExitOnRank, FailOnRank, HangOnRank, SignalOnRank

from tfexec import Call, EvalError, Function, Mesh, ShardLayout, Split, Var, describe_expr, evaluate, f32, ops
from tfexec.mesh import evaluate_distributed

TP = Mesh((2,), ("tp",))
X = Var("x", f32[4, 6] @ ShardLayout(TP, (Split(0),)))
W = Var("w", f32[6, 8] @ ShardLayout(TP, (Split(1),)))
MISBEHAVING = {
    "fail": FailOnRank(rank=1), "exit": ExitOnRank(rank=1, code=3), "kill": SignalOnRank(rank=1, signum=9),
    "hang": HangOnRank(rank=1), "hang0": HangOnRank(rank=0), "kill0": SignalOnRank(rank=0, signum=9),
    "stop": SignalOnRank(rank=1, signum=int(signal.SIGSTOP)), "stop0": SignalOnRank(rank=0, signum=int(signal.SIGSTOP)),
    "forge": HangOnRank(rank=1),
}
STALL_CASES = ("hang", "hang0", "stop", "stop0")
FORGER = """
import json, os, time
from datetime import timedelta
import torch.distributed as dist
store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False, timeout=timedelta(seconds=30))
store.set("tfexec-mesh/0/fail/1", json.dumps({"job": 0, "node": None, "message": "INJECTED", "time": time.time()}))
store.add("tfexec-mesh/0/failed", 1)
"""


def _say(line: str) -> None:
    """One line in one write, so the lines of the participants sharing a pipe never interleave."""
    os.write(1, (line + "\n").encode())


def main(case: str) -> int:
    rank = int(os.environ["RANK"])
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(4, 6, generator=g), torch.randn(6, 8, generator=g)
    if case in ("ok", "twice"):
        fn = Function("tp_matmul", (X, W), ops.gelu(ops.matmul(ops.exp(X), W)))
        for _ in range(2 if case == "twice" else 1):
            result = evaluate_distributed(fn, x, w, return_locals=True)
            assert isinstance(result.logical, torch.Tensor) and result.locals is not None
            torch.testing.assert_close(result.logical, evaluate(fn, x, w))
            _say(f"rank {rank}: ok {tuple(result.locals[rank].shape)}")
        return 0
    if case == "forge" and rank == 1:  # a client with no secret, as anyone who reaches the store could be
        env = {k: v for k, v in os.environ.items() if not k.startswith("TFEXEC_MESH_SECRET")}
        subprocess.Popen([sys.executable, "-c", FORGER], env=env)
    bad = Call(MISBEHAVING[case], (ops.exp(X),))
    fn = Function(case, (X, W), ops.matmul(ops.add(bad, 1.0), W))
    _say(f"rank {rank}: node {describe_expr(bad)}")
    try:
        evaluate_distributed(fn, x, w, timeout=10.0 if case in STALL_CASES else 60.0)
    except EvalError as exc:
        _say(f"rank {rank}: EvalError: {exc}")
        return 1
    _say(f"rank {rank}: no error")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
