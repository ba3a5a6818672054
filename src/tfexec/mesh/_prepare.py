"""A job made ready for the participants, in the process that was given it: inputs bound and
checked (the same rules and messages as ``evaluate``), the program in its wire form, the
mesh chosen, and a plan for the weights that reads none of them from files.

A loaded module's weights stay where they are: when they live in files (``load_module``, a
``.safetensors`` reading), each participant reads what it holds from those files itself —
its block of a weight typed with a ``ShardLayout``, the whole of any other — so the caller
reads no weight at all. Weights of an in-memory reading are already in the caller's memory;
they travel with the job's tensors.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from tfexec.errors import EvalError, TfexecError
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import ConstTensor, Function, Var
from tfexec.ir.types import Mesh, ShardLayout
from tfexec.loading import LoadedModule
from tfexec.loading.sources import FileReading
from tfexec.mesh._internals import TensorValue, TupleValue, Value, bind_inputs, resolve_target
from tfexec.mesh._layouts import split_axis_error, uneven_split
from tfexec.mesh._results import MAX_PARTICIPANTS, MeshJob
from tfexec.mesh._wire import Encoded, Item, Json, encode


@dataclass(frozen=True, slots=True)
class WeightPlan:
    """Where the participants read a job's weights: ``reading`` (files on disk), or, when it
    is None, the job's own tensors (under ``w.<name>``); ``names`` maps each constant a
    ``ConstTensor`` names to its name there."""

    reading: FileReading | None
    names: dict[str, str]

    def to_json(self) -> Json:
        reading: Json = None if self.reading is None else {"path": str(self.reading.path.resolve()), "verify": self.reading.verify}
        names: dict[str, Json] = dict(self.names)
        return {"reading": reading, "names": names}


@dataclass(slots=True)
class Prepared:
    """One job ready to run: its function, wire form, tensors (inputs as ``in.<i>[.<field>]``,
    tensor constants, in-memory weights) and weight plan."""

    fn: Function
    encoded: Encoded
    tensors: dict[str, torch.Tensor]
    weights: WeightPlan | None
    job: MeshJob


def _param_label(fn: Function, index: int, param: Var) -> str:
    where = f"{param.span.location()} " if param.span is not None else ""
    return f"{where}{fn.name}: parameter {param.name} (input {index})"


def _flatten(value: Value, key: str, label: str, out: dict[str, torch.Tensor]) -> None:
    if isinstance(value, TupleValue):
        for i, v in enumerate(value.elements):
            _flatten(v, f"{key}.{i}", f"{label} field {i}", out)
        return
    assert isinstance(value, TensorValue)
    layout = value.type.layout
    if isinstance(layout, ShardLayout):
        why = split_axis_error(layout, value.data.dim()) or uneven_split(layout, tuple(value.data.shape))
        if why is not None:
            raise EvalError(f"{label}: {why}")
    out[key] = value.data


def _weight_plan(loaded: LoadedModule, nodes: list[Item], tensors: dict[str, torch.Tensor]) -> WeightPlan:
    """Check every constant the program names against the module (no data read from files)."""
    reading = loaded.file_reading
    names: dict[str, str] = {}
    for node in nodes:
        if not isinstance(node, ConstTensor) or node.name in names:
            continue
        try:
            loaded.constant_type(node.name, node.type)
            if reading is None:
                data = loaded.constant(node.name, node.type)
                if data.device.type != "cpu":
                    raise EvalError(f"weight {node.name} is on {data.device}; mesh runs are on CPU")
                tensors[f"w.{node.name}"] = data
        except TfexecError as exc:
            raise EvalError(f"{describe_expr(node)}: {exc}") from exc
        if reading is not None and loaded.device is not None and loaded.device.type != "cpu":
            raise EvalError(
                f"{describe_expr(node)}: weight {node.name} is loaded for {loaded.device}, but mesh runs are on CPU: "
                "load the module without device="
            )
        names[node.name] = loaded.qualified_name(node.name) if reading is not None else f"w.{node.name}"
    return WeightPlan(reading, names)


def prepare(job: MeshJob) -> Prepared:
    """Bind and check ``job``'s inputs and plan its weights (``EvalError`` as ``evaluate`` raises)."""
    if not isinstance(job, MeshJob):
        raise TypeError(f"evaluate_mesh_batch takes MeshJob values, got {type(job).__name__}")
    if not isinstance(job.rounds, int) or job.rounds < 1:
        raise ValueError(f"MeshJob.rounds must be a positive int, got {job.rounds!r}")
    fn, loaded = resolve_target(job.target)
    values, device, _ = bind_inputs(fn, job.inputs)
    if device is not None and torch.device(device).type != "cpu":
        raise EvalError(
            f"{fn.name}: evaluate_mesh runs its participants on CPU with gloo, but the inputs are on {device}; "
            "pass CPU tensors"
        )
    encoded = encode(fn, "")
    tensors = dict(encoded.tensors)
    for i, (param, value) in enumerate(zip(fn.params, values)):
        _flatten(value, f"in.{i}", _param_label(fn, i, param), tensors)
    weights = _weight_plan(loaded, encoded.nodes, tensors) if loaded is not None else None
    return Prepared(fn, encoded, tensors, weights, job)


def choose_mesh(prepared: Sequence[Prepared], mesh: Mesh | None) -> Mesh:
    """The one mesh of a run: ``mesh`` when given (every layout must name it), else the one
    every ``ShardLayout`` of the jobs names."""
    found = [(m, item) for p in prepared for m, item in p.encoded.meshes]
    if mesh is not None:
        if not isinstance(mesh, Mesh):
            raise TypeError(f"mesh must be a tfexec Mesh, got {type(mesh).__name__}")
        for m, item in found:
            if m != mesh:
                raise EvalError(f"{describe_expr(item)}: names {m}, but this mesh run is on {mesh}")
        chosen = mesh
    else:
        if not found:
            raise EvalError(
                f"{describe_expr(prepared[0].fn)}: no ShardLayout names a mesh, so there is no mesh to run on: "
                "pass mesh=Mesh(...)"
            )
        chosen, first = found[0]
        for m, item in found:
            if m != chosen:
                raise EvalError(
                    f"{describe_expr(item)}: names {m}, but {describe_expr(first)} names {chosen}; one mesh run has "
                    "one mesh"
                )
    world = math.prod(chosen.shape)
    if world > MAX_PARTICIPANTS:
        raise EvalError(f"{chosen} has {world} participants; a mesh run starts at most {MAX_PARTICIPANTS} processes")
    return chosen
