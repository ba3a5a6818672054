"""One mesh participant: ``python -m tfexec.mesh._participant RUN_DIR RANK``.

It reads the run description the caller wrote in ``RUN_DIR``, joins the gloo process
group through the caller's store on 127.0.0.1, makes its ``eval_registry`` the mesh one
(``_rules.install``) and runs each job with the single-participant evaluator on DTensor
values. Results go back as safetensors files, failures as a JSON report; its position is
kept in its progress slot throughout. A participant never waits on a failed peer: after
an error it reports and exits at once, and the caller stops the others.
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
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, distribute_tensor
from torch.distributed.tensor import Replicate as DReplicate

from tfexec.semantics.messages import reason_of
from tfexec.semantics.values import TensorValue, TupleValue, Value
from tfexec.evaluator.visitor import evaluate_value
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Function
from tfexec.ir.module import IRModule
from tfexec.ir.types import Mesh, ShardLayout, TupleType, Type
from tfexec.loading import LoadedModule, write_tensors
from tfexec.mesh import _rules
from tfexec.mesh._progress import Phase, Slot
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


def _inputs(fn: Function, tensors: "safe_open", state: _rules.MeshState) -> list[object]:
    """The bound inputs, each leaf whose parameter type has a ``ShardLayout`` distributed."""

    def leaf(t: Type, key: str) -> object:
        if isinstance(t, TupleType):
            return tuple(leaf(f, f"{key}.{i}") for i, f in enumerate(t.fields))
        data = tensors.get_tensor(key)
        if isinstance(t.layout, ShardLayout):
            state.check_mesh(t.layout)
            return distribute_tensor(data, state.device_mesh, _rules.placements(t.layout, data.dim()))
        return data

    return [leaf(p.type, f"in.{i}") for i, p in enumerate(fn.params)]


def _leaves(value: Value, path: str, out: list[tuple[str, TensorValue]]) -> Json:
    if isinstance(value, TensorValue):
        out.append((path, value))
        return path
    assert isinstance(value, TupleValue)
    return {"tuple": [_leaves(v, f"{path}.{i}", out) for i, v in enumerate(value.elements)]}


def _logical(leaves: list[tuple[str, TensorValue]], state: _rules.MeshState) -> dict[str, torch.Tensor]:
    """Each leaf's logical value (a collective per distributed leaf; per-participant leaves have none)."""
    out = {}
    for path, v in leaves:
        if isinstance(v.data, DTensor):
            out[path] = v.data.full_tensor()
        elif not state.is_local(v.data):
            out[path] = v.data
    return out


def _local_of(v: TensorValue, state: _rules.MeshState) -> torch.Tensor:
    """A leaf's local value: the shard of its type's layout, else of DTensor's placement
    with pending reductions done."""
    data = v.data
    if not isinstance(data, DTensor):
        return data
    layout = v.type.layout
    if isinstance(layout, ShardLayout) and layout.mesh == state.mesh:
        return data.redistribute(state.device_mesh, _rules.placements(layout, data.dim())).to_local()
    done = [DReplicate() if p.is_partial() else p for p in data.placements]
    return data.redistribute(state.device_mesh, done).to_local()


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
        with safe_open(run_dir / f"job{j}.safetensors", "pt") as tensors:
            decoded = decode(job["records"], tensors.get_tensor)  # type: ignore[arg-type]
            _evaluate(run_dir, rank, j, job, decoded, tensors, state, slot)
    except Exception as exc:
        message = reason_of(exc)
        node: int | None = slot.node if slot.phase == Phase.RUNNING and slot.node >= 0 else None
        if node is not None and decoded is not None:
            prefix = describe_expr(decoded.nodes[node]) + ": "
            if message.startswith(prefix):
                message = message[len(prefix):]
            else:
                node = None
        raise _Failure(node, message) from exc


def _evaluate(
    run_dir: Path, rank: int, j: int, job: dict[str, Json], decoded: Decoded, tensors: "safe_open",
    state: _rules.MeshState, slot: Slot,
) -> None:
    state.op_nodes = decoded.op_nodes
    fn = decoded.function
    target: Function | LoadedModule = fn
    weights = job.get("weights")
    if isinstance(weights, list):
        reading = {str(name): tensors.get_tensor(f"w.{name}") for name in weights}
        target = LoadedModule.from_reading(IRModule({fn.name: fn}, entry=fn.name), reading)
    rounds = job["rounds"]
    assert isinstance(rounds, int) and rounds >= 1
    seconds: list[float] = []
    leaves: list[tuple[str, TensorValue]] = []
    tree: Json = None
    logical: dict[str, torch.Tensor] = {}
    for _ in range(rounds):
        inputs = _inputs(fn, tensors, state)
        dist.barrier()
        start = time.perf_counter()
        value = evaluate_value(target, tuple(inputs))
        leaves = []
        tree = _leaves(value, "r", leaves)
        logical = _logical(leaves, state)
        elapsed = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        seconds.append(float(elapsed.item()))
    slot.set(Phase.RETURNING, j)
    out: dict[str, torch.Tensor] = {"done": torch.zeros(0)}  # never empty: safetensors cannot read an empty file back
    kinds: dict[str, Json] = {}
    for path, v in leaves:
        participant = not isinstance(v.data, DTensor) and state.is_local(v.data)
        kinds[path] = "participant" if participant else "logical"
        if job["return_locals"] or participant:
            out[f"L.{path}"] = _local_of(v, state).clone()
        if rank == 0 and path in logical:
            out[f"G.{path}"] = logical[path].clone()
    if rank == 0:
        (run_dir / f"out{j}.json").write_text(json.dumps({"tree": tree, "kinds": kinds, "seconds": seconds}))
    tmp = run_dir / f"out{j}.{rank}.tmp"
    write_tensors(out, tmp)
    tmp.rename(run_dir / f"out{j}.{rank}.safetensors")


def main(argv: list[str]) -> int:
    """Run as participant ``argv[1]`` of the run described in directory ``argv[0]``."""
    run_dir, rank = Path(argv[0]), int(argv[1])
    spec = json.loads((run_dir / "run.json").read_text())
    _die_with_parent(int(spec["parent"]))
    slot = Slot(run_dir / "progress.bin", rank)
    try:
        sys.path[:0] = [p for p in spec["sys_path"] if p not in sys.path]
        for module in spec["imports"]:
            importlib.import_module(module)
        torch.set_num_threads(int(spec["threads"]))
        shape, names = spec["mesh"]
        mesh = Mesh(tuple(shape), tuple(names))
        world = int(spec["world"])
        timeout = timedelta(seconds=float(spec["timeout"]))
        store = dist.TCPStore("127.0.0.1", int(spec["port"]), is_master=False, timeout=timeout)  # type: ignore[attr-defined]
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world, timeout=timeout)
        device_mesh = DeviceMesh("cpu", torch.arange(world).reshape(mesh.shape), mesh_dim_names=mesh.axis_names)
        state = _rules.MeshState(device_mesh, mesh, slot)
        _rules.install(state)
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
