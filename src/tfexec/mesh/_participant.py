"""One mesh participant of tfexec's own launcher: ``python -m tfexec.mesh._participant RUN_DIR RANK``.

It reads the run description the caller wrote in ``RUN_DIR``, joins the gloo process
group through the caller's store on 127.0.0.1, makes its ``eval_registry`` the mesh one
and runs each job with the single-participant evaluator on DTensor values, reading its own
share of each job's weights (``_weights``). Results go back as safetensors files, failures
as a JSON report; its position is kept in its progress slot throughout. A participant
never waits on a failed peer: after an error it reports and exits at once, and the caller
stops the others.
"""

import ctypes
import importlib
import json
import os
import signal
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import NoReturn

import torch
import torch.distributed as dist
from safetensors import safe_open

from tfexec.ir.types import Mesh
from tfexec.loading import write_tensors
from tfexec.loading.sources import open_weights
from tfexec.mesh import _rules
from tfexec.mesh._internals import reason_of
from tfexec.mesh._failures import failure_of
from tfexec.mesh._progress import Heartbeat, Phase, Slot
from tfexec.mesh._session import JobValues, MemoryMark, is_per_participant, join, local_of, run_rounds
from tfexec.mesh._weights import weights_target
from tfexec.mesh._wire import Decoded, Json, decode


def _die_with_parent(parent: int) -> None:
    """On Linux, be killed when the caller dies, so no participant outlives its run."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(70)


def _report(run_dir: Path, rank: int, job: int, node: int | None, message: str, slot: Slot | None) -> NoReturn:
    """Write this participant's error report (atomically), mark the slot failed and exit."""
    report = {"job": job, "node": node, "message": message, "time": time.time(),
              "dispatches": slot.dispatches if slot is not None else 0}
    tmp = run_dir / f"error.{rank}.tmp"
    tmp.write_text(json.dumps(report))
    tmp.rename(run_dir / f"error.{rank}.json")
    if slot is not None:
        slot.set(Phase.FAILED)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1)


class _Failure(Exception):
    """A job failed: the record index of the op it failed in (None when the message names
    its own node, or none) and the message without that node's prefix."""

    def __init__(self, node: int | None, message: str) -> None:
        super().__init__(message)
        self.node = node
        self.message = message


def _run_job(run_dir: Path, rank: int, j: int, job: dict[str, Json], state: _rules.MeshState, slot: Slot) -> None:
    decoded: Decoded | None = None
    try:
        mark = MemoryMark()
        path = run_dir / f"job{j}.safetensors"
        with safe_open(path, "pt") as tensors:
            decoded = decode(job["records"], tensors.get_tensor)  # type: ignore[arg-type]
            state.op_nodes = decoded.op_nodes
            fn = decoded.function
            target = weights_target(fn, decoded.nodes, job.get("weights"), open_weights(path, verify=False), state)
            rounds = job["rounds"]
            assert isinstance(rounds, int) and rounds >= 1
            values = run_rounds(target, fn, tensors.get_tensor, state, rounds)
        _write_results(run_dir, rank, j, job, values, state, slot, mark)
    except Exception as exc:
        node, message = failure_of(exc, slot, decoded.nodes if decoded is not None else None)
        raise _Failure(node, message) from exc


def _write_results(run_dir: Path, rank: int, j: int, job: dict[str, Json], values: JobValues, state: _rules.MeshState,
                   slot: Slot, mark: MemoryMark) -> None:
    slot.set(Phase.RETURNING, j)
    out: dict[str, torch.Tensor] = {"done": torch.zeros(0)}  # never empty: safetensors cannot read an empty file back
    kinds: dict[str, Json] = {}
    for path, v in values.leaves:
        participant = is_per_participant(v, state)
        kinds[path] = "participant" if participant else "logical"
        if job["return_locals"] or participant:
            out[f"L.{path}"] = local_of(v, state).clone()
        if rank == 0 and path in values.logical:
            out[f"G.{path}"] = values.logical[path].clone()
    growth = mark.growth()
    out["M"] = torch.tensor([-1 if growth is None else growth], dtype=torch.int64)
    if rank == 0:
        meta = {"tree": values.tree, "kinds": kinds, "seconds": values.seconds}
        (run_dir / f"out{j}.json").write_text(json.dumps(meta))
    tmp = run_dir / f"out{j}.{rank}.tmp"
    write_tensors(out, tmp)
    tmp.rename(run_dir / f"out{j}.{rank}.safetensors")


def main(argv: list[str]) -> int:
    """Run as participant ``argv[1]`` of the run described in directory ``argv[0]``."""
    run_dir, rank = Path(argv[0]), int(argv[1])
    spec = json.loads((run_dir / "run.json").read_text())
    _die_with_parent(int(spec["parent"]))
    slot = Slot(run_dir / "progress.bin", rank)
    Heartbeat(slot.beat)  # the caller's stall check reads it: alive, and waiting in a collective or not
    try:
        sys.path[:0] = [p for p in spec["sys_path"] if p not in sys.path]
        for module in spec["imports"]:
            importlib.import_module(module)
        torch.set_num_threads(int(spec["threads"]))
        shape, names = spec["mesh"]
        mesh = Mesh(tuple(shape), tuple(names))
        timeout = float(spec["timeout"])
        store = dist.TCPStore(  # type: ignore[attr-defined]
            "127.0.0.1", int(spec["port"]), is_master=False, timeout=timedelta(seconds=timeout)
        )
        state, _ = join(store, rank, int(spec["world"]), mesh, timeout, slot)
    except Exception as exc:
        _report(run_dir, rank, -1, None, f"could not start: {reason_of(exc)}", slot)
    slot.set(Phase.JOINED)
    for j, job in enumerate(spec["jobs"]):
        slot.set(Phase.RUNNING, j)
        try:
            _run_job(run_dir, rank, j, job, state, slot)
        except _Failure as failure:
            _report(run_dir, rank, j, failure.node, failure.message, slot)
    slot.set(Phase.DONE)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
