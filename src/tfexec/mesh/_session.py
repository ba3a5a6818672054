"""What every participant does, whichever launcher started it: join the mesh, evaluate a job
on DTensor values, and take its values apart into logical and local results.

``_participant`` (tfexec's own launcher: files and a shared progress file) and
``_distributed`` (an external launcher such as torchrun: the rendezvous store) differ only
in how they get a job and report back; both call these.
"""

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import Store
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, distribute_tensor
from torch.distributed.tensor import Replicate as DReplicate

from tfexec.ir.expr import Call, Function
from tfexec.ir.ops.base import Op
from tfexec.ir.types import Mesh, ShardLayout, TupleType, Type
from tfexec.loading import LoadedModule
from tfexec.mesh import _rules
from tfexec.mesh._internals import Handler, TensorValue, TupleValue, Value, evaluate_value
from tfexec.mesh._progress import Progress
from tfexec.mesh._wire import Item, Json


def join(store: "Store", rank: int, world: int, mesh: Mesh, timeout: float,
         progress: Progress) -> tuple[_rules.MeshState, dict[type, Handler]]:
    """Form the gloo process group and the device mesh, and install the mesh rules; the
    participant's state and the handlers the rules replaced (for ``_rules.restore``)."""
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world, timeout=timedelta(seconds=timeout))
    device_mesh = DeviceMesh("cpu", torch.arange(world).reshape(mesh.shape), mesh_dim_names=mesh.axis_names)
    state = _rules.MeshState(device_mesh, mesh, progress)
    return state, _rules.install(state)


def op_nodes(nodes: list[Item]) -> dict[int, int]:
    """The record index of each op instance in ``nodes`` (to say which node a participant is in)."""
    return {id(n.target): i for i, n in enumerate(nodes) if isinstance(n, Call) and isinstance(n.target, Op)}


def distributed_inputs(fn: Function, tensor: Callable[[str], torch.Tensor], state: _rules.MeshState) -> list[object]:
    """The inputs (``tensor`` reads ``in.<i>[.<field>]``), each leaf whose parameter type has a
    ``ShardLayout`` distributed with its placements."""

    def leaf(t: Type, key: str) -> object:
        if isinstance(t, TupleType):
            return tuple(leaf(f, f"{key}.{i}") for i, f in enumerate(t.fields))
        data = tensor(key)
        if isinstance(t.layout, ShardLayout):
            state.check_mesh(t.layout)
            return distribute_tensor(data, state.device_mesh, _rules.placements(t.layout, data.dim()))
        return data

    return [leaf(p.type, f"in.{i}") for i, p in enumerate(fn.params)]


class MemoryMark:
    """The resident memory at a point, to measure how far the peak grows past it (Linux
    ``/proc``: the peak is reset here; elsewhere nothing is known)."""

    def __init__(self) -> None:
        reset = False
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # reset the peak resident set size (VmHWM) to the current one
            reset = True
        except OSError:
            pass
        self.start = _status("VmRSS") if reset else None

    def growth(self) -> int | None:
        """Bytes the resident set's peak grew by since the mark, or None when unknown."""
        peak = _status("VmHWM")
        return None if self.start is None or peak is None else max(0, peak - self.start)


def _status(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                name, _, value = line.partition(":")
                if name == key:
                    return int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass(slots=True)
class JobValues:
    """A job's values on this participant: the result's tree of leaf paths, each leaf, each
    leaf's logical value (the participant-only ones have none) and each round's seconds."""

    tree: Json
    leaves: list[tuple[str, TensorValue]]
    logical: dict[str, torch.Tensor]
    seconds: list[float]


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


def run_rounds(target: "Function | LoadedModule", fn: Function, tensor: Callable[[str], torch.Tensor],
               state: _rules.MeshState, rounds: int) -> JobValues:
    """Evaluate ``target`` ``rounds`` times (inputs distributed afresh each round, every
    round timed by the slowest participant); the last round's values."""
    seconds: list[float] = []
    leaves: list[tuple[str, TensorValue]] = []
    tree: Json = None
    logical: dict[str, torch.Tensor] = {}
    for _ in range(rounds):
        inputs = distributed_inputs(fn, tensor, state)
        dist.barrier()
        start = time.perf_counter()
        value = evaluate_value(target, tuple(inputs))
        leaves = []
        tree = _leaves(value, "r", leaves)
        logical = _logical(leaves, state)
        elapsed = torch.tensor([time.perf_counter() - start], dtype=torch.float64)
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        seconds.append(float(elapsed.item()))
    return JobValues(tree, leaves, logical, seconds)


def is_per_participant(v: TensorValue, state: _rules.MeshState) -> bool:
    """Whether a leaf is a per-participant value (it depends on ``local`` of a split value)."""
    return not isinstance(v.data, DTensor) and state.is_local(v.data)


def local_of(v: TensorValue, state: _rules.MeshState) -> torch.Tensor:
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


def build_value(tree: Json, prefix: str, tensors: dict[str, torch.Tensor]) -> "torch.Tensor | tuple[object, ...]":
    """A result (a tensor or nested tuples) from its tree of leaf names and the tensors under ``prefix``."""
    if isinstance(tree, str):
        return tensors[f"{prefix}.{tree}"]
    assert isinstance(tree, dict) and isinstance(tree["tuple"], list)
    return tuple(build_value(t, prefix, tensors) for t in tree["tuple"])


def gather_all(t: torch.Tensor, world: int) -> list[torch.Tensor]:
    """Every participant's ``t`` (any dtype, any shape), on every participant: its bytes
    all-gathered, padded to the longest."""
    t = t.detach().contiguous()
    ndim = torch.tensor([t.dim()], dtype=torch.int64)
    ndims = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(ndims, ndim)
    most = max(int(n.item()) for n in ndims)
    shape = torch.tensor([*t.shape, *([0] * (most - t.dim()))], dtype=torch.int64)
    shapes = [torch.zeros(most, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(shapes, shape)
    dims = [[int(d) for d in s[: int(n.item())].tolist()] for s, n in zip(shapes, ndims)]
    sizes = [math.prod(d) * t.element_size() for d in dims]
    raw = t.reshape(-1).view(torch.uint8) if t.numel() else torch.zeros(0, dtype=torch.uint8)
    padded = torch.zeros(max(sizes), dtype=torch.uint8)
    padded[: raw.numel()] = raw
    parts = [torch.zeros(max(sizes), dtype=torch.uint8) for _ in range(world)]
    dist.all_gather(parts, padded)
    return [part[:size].clone().view(t.dtype).reshape(d) for part, size, d in zip(parts, sizes, dims)]
