"""A participant's weights: each read by the participant itself, only as much as it holds.

``MeshWeights`` is the reading a participant's ``LoadedModule`` is bound to. A weight whose
declared type carries a ``ShardLayout`` that splits it is read as this participant's block
only (``FileSource.fetch_block``: its bytes and nothing else, checked against the manifest
as far as it allows) and becomes a DTensor with that layout's placements; any other weight
is read whole, checked against its SHA-256, and is a logical value as on one participant.
"""

from collections.abc import Iterator, Mapping

import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor

from tfexec.ir.expr import ConstTensor, Function
from tfexec.ir.module import IRModule
from tfexec.ir.types import ShardLayout, TensorType
from tfexec.loading import LoadedModule
from tfexec.loading.sources import FileSource, open_weights
from tfexec.mesh import _rules
from tfexec.mesh._results import coordinate
from tfexec.mesh._wire import Item, Json


class MeshWeights(Mapping[str, torch.Tensor]):
    """The weights of one job as this participant holds them, read at first use.

    ``source`` is the files the weights live in, or the tensors of an in-memory reading;
    ``names`` maps each constant the program names to its name there and ``types`` gives
    the type each is declared with (its ``ShardLayout`` says what this participant reads).
    """

    def __init__(self, source: "FileSource | Mapping[str, torch.Tensor]", names: dict[str, str],
                 types: dict[str, TensorType], state: _rules.MeshState) -> None:
        self.source = source
        self.names = names
        self.types = types
        self.state = state

    def __getitem__(self, name: str) -> torch.Tensor:
        full = self.names[name]
        layout = self.types[name].layout
        split = isinstance(layout, ShardLayout) and bool(layout.splits)
        if isinstance(self.source, FileSource):
            if not split:
                data = self.source.fetch(full)
                assert isinstance(data, torch.Tensor)
                return data
            assert isinstance(layout, ShardLayout)
            self.state.check_mesh(layout)
            shard = self.source.fetch_block(full, layout, coordinate(self.state.mesh, dist.get_rank()))
            shape = self.source.tensors[full].file.entries[full].shape
            return DTensor.from_local(
                shard, self.state.device_mesh, _rules.placements(layout, len(shape)), run_check=False,
                shape=torch.Size(shape), stride=_contiguous_strides(shape),
            )
        whole = self.source[full]
        if not split:
            return whole
        assert isinstance(layout, ShardLayout)
        return self.state.distribute(whole, layout)  # a local split of a value every participant holds

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = [1] * len(shape)
    for axis in range(len(shape) - 2, -1, -1):
        strides[axis] = strides[axis + 1] * shape[axis + 1]
    return tuple(strides)


def weights_target(fn: Function, nodes: list[Item], plan: Json, tensors: "FileSource | Mapping[str, torch.Tensor]",
                   state: _rules.MeshState) -> "Function | LoadedModule":
    """What a participant evaluates for a job: ``fn``, bound to its weights when it names any.

    ``plan`` is the job's ``WeightPlan`` as JSON (None: no loaded module); weights with no
    file reading are read from ``tensors``, the job's own tensors."""
    if not isinstance(plan, dict):
        return fn
    reading, names = plan["reading"], plan["names"]
    assert isinstance(names, dict)
    source: FileSource | Mapping[str, torch.Tensor] = tensors
    if isinstance(reading, dict):
        path, verify = reading["path"], reading["verify"]
        assert isinstance(path, str) and isinstance(verify, bool)
        source = open_weights(path, verify=verify)
    types = {node.name: node.type for node in nodes if isinstance(node, ConstTensor)}
    weights = MeshWeights(source, {str(k): str(v) for k, v in names.items()}, types, state)
    return LoadedModule.from_reading(IRModule({fn.name: fn}, entry=fn.name), weights)
