"""The caller's side of a mesh run: check, write, launch, supervise, collect.

``evaluate_mesh_batch`` binds and checks every job's inputs here (the same rules and
messages as ``evaluate``), writes the programs and tensors to a private temporary
directory, starts one ``tfexec.mesh._participant`` process per mesh participant against
a TCP store it hosts on 127.0.0.1 (an OS-chosen free port), and watches them: their exit
codes, their error reports and their progress slots. The first failure stops every
participant; no process outlives the call.
"""

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import IO

import torch
import torch.distributed as dist
from safetensors import safe_open

from tfexec.errors import EvalError
from tfexec.semantics.binding import bind_inputs
from tfexec.semantics.constants import const_tensor_value
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.targets import resolve_target
from tfexec.semantics.values import TensorValue, TupleValue, Value
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import ConstTensor, Function, Var
from tfexec.ir.types import Mesh, ShardLayout
from tfexec.loading import LoadedModule, write_tensors
from tfexec.mesh import _progress
from tfexec.mesh._progress import Phase, Position
from tfexec.mesh._layouts import split_axis_error, uneven_split
from tfexec.mesh._wire import Encoded, Item, Json, encode

DEFAULT_TIMEOUT = 300.0
"""Seconds the participants may spend evaluating, from when all have joined the process group."""
STARTUP_TIMEOUT = 120.0
"""Seconds the participants may take to start (import torch, form the gloo group)."""
MAX_PARTICIPANTS = 64
"""The most participants (processes) one run starts."""
_GRACE = 2.0  # after a failure, how long the others get to report before they are stopped
_POLL = 0.01
_NUMPY_WARNING = "ignore:Failed to initialize NumPy:UserWarning"  # torch's import-time warning without numpy


@dataclass(frozen=True, slots=True)
class MeshJob:
    """One program to run on the mesh: ``target`` on ``inputs``; ``rounds`` times (the
    last round's values are returned, every round is timed)."""

    target: "Function | LoadedModule"
    inputs: tuple[object, ...] = ()
    return_locals: bool = False
    rounds: int = 1


@dataclass(frozen=True, slots=True)
class MeshResult:
    """What a mesh run computed.

    ``logical`` is the result as ``evaluate`` returns it (a tensor or a tuple), or None when
    some output is a per-participant value (it depends on ``local`` of a split value), which
    has no single logical value. ``locals`` (when asked for) holds each participant's own
    values, indexed by rank: the shard of a distributed output (under its type's
    ``ShardLayout``, else under DTensor's placement with pending reductions done), the whole
    value of a replicated one, the participant's value of a per-participant one.
    ``seconds`` is the evaluation time of each round (the slowest participant's).
    """

    mesh: Mesh
    logical: "torch.Tensor | tuple[object, ...] | None"
    locals: "tuple[torch.Tensor | tuple[object, ...], ...] | None"
    seconds: tuple[float, ...]

    def coordinate(self, rank: int) -> tuple[int, ...]:
        """The mesh coordinate of participant ``rank`` (row-major: the last mesh axis varies fastest)."""
        return coordinate(self.mesh, rank)

    def local(self, *coord: int) -> "torch.Tensor | tuple[object, ...]":
        """The local values of the participant at mesh coordinate ``coord``."""
        if self.locals is None:
            raise ValueError("this result holds no local values: run with return_locals=True")
        if len(coord) != len(self.mesh.shape) or not all(0 <= c < n for c, n in zip(coord, self.mesh.shape)):
            raise ValueError(f"{coord} is not a coordinate of {self.mesh}")
        return self.locals[sum(c * math.prod(self.mesh.shape[i + 1:]) for i, c in enumerate(coord))]


@dataclass(frozen=True, slots=True)
class MeshOutcome:
    """One job's outcome in a batch: its result, or the error that stopped it."""

    result: MeshResult | None
    error: EvalError | None

    def unwrap(self) -> MeshResult:
        """The result, or the job's error raised."""
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


def coordinate(mesh: Mesh, rank: int) -> tuple[int, ...]:
    """Participant ``rank``'s coordinate in ``mesh`` (row-major, as DTensor's ``DeviceMesh``)."""
    out = []
    for n in reversed(mesh.shape):
        out.append(rank % n)
        rank //= n
    return tuple(reversed(out))


def _who(mesh: Mesh, rank: int) -> str:
    return f"rank {rank} at coordinate {coordinate(mesh, rank)} of {mesh}"


# -- preparing a job (in the caller) ------------------------------------------------------------


@dataclass(slots=True)
class _Prepared:
    fn: Function
    encoded: Encoded
    tensors: dict[str, torch.Tensor]
    weights: list[str] | None
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


def _prepare(job: MeshJob) -> _Prepared:
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
    weights: list[str] | None = None
    if loaded is not None:
        weights = []
        ctx = EvaluateContext(loaded_module=loaded, device=device)
        for node in encoded.nodes:
            if isinstance(node, ConstTensor) and node.name not in weights:
                data = const_tensor_value(node, ctx).data
                if data.device.type != "cpu":
                    raise EvalError(f"{describe_expr(node)}: weight {node.name} is on {data.device}; mesh runs are on CPU")
                tensors[f"w.{node.name}"] = data
                weights.append(node.name)
    return _Prepared(fn, encoded, tensors, weights, job)


def _run_mesh(prepared: Sequence[_Prepared], mesh: Mesh | None) -> Mesh:
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


# -- launching and supervising ------------------------------------------------------------------


def _store(seconds: float) -> "tuple[object, int]":
    """The run's TCP store, listening on 127.0.0.1 only, on a port the OS chose; and that port.

    TCPStore would listen on every interface; given a socket bound to loopback, it listens
    there (and owns the descriptor: it closes it when it is destroyed)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = int(listener.getsockname()[1])
        store = dist.TCPStore(  # type: ignore[attr-defined]
            "127.0.0.1", port, None, True, timedelta(seconds=seconds), wait_for_workers=False,
            master_listen_fd=listener.fileno(),
        )
    except BaseException:
        listener.close()
        raise
    listener.detach()
    return store, port


def _loopback() -> str | None:
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return None
    for name in ("lo", "lo0"):
        if name in names:
            return name
    return None


@dataclass(slots=True)
class _Run:
    run_dir: Path
    mesh: Mesh
    world: int
    prepared: Sequence[_Prepared]
    timeout: float
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[IO[bytes]] = field(default_factory=list)
    stopped: set[int] = field(default_factory=set)

    def positions(self) -> list[Position]:
        return _progress.read_all(self.run_dir / "progress.bin", self.world)

    def start(self, port: int) -> None:
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join([package_root, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
        loopback = _loopback()
        if loopback is not None:
            env["GLOO_SOCKET_IFNAME"] = loopback
        modules = sorted({m for p in self.prepared for m in p.encoded.modules})
        spec = {
            "parent": os.getpid(), "world": self.world, "mesh": [list(self.mesh.shape), list(self.mesh.axis_names)],
            "port": port, "threads": max(1, (os.cpu_count() or 1) // self.world),
            "timeout": self.timeout + STARTUP_TIMEOUT, "sys_path": [p for p in sys.path if p], "imports": modules,
            "jobs": [
                {"records": p.encoded.records, "return_locals": p.job.return_locals, "rounds": p.job.rounds,
                 "weights": p.weights}
                for p in self.prepared
            ],
        }
        for j, p in enumerate(self.prepared):
            write_tensors(p.tensors, self.run_dir / f"job{j}.safetensors")
        (self.run_dir / "run.json").write_text(json.dumps(spec))
        _progress.create(self.run_dir / "progress.bin", self.world)
        for rank in range(self.world):
            log = open(self.run_dir / f"rank{rank}.log", "wb")
            self.logs.append(log)
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, "-W", _NUMPY_WARNING, "-m", "tfexec.mesh._participant", str(self.run_dir), str(rank)],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                )
            )

    def supervise(self) -> "list[Position] | None":
        """Wait for the participants; the positions at a timeout (None when none occurred)."""
        began = time.monotonic()
        joined: float | None = None
        failed_at: float | None = None
        while True:
            codes = [p.poll() for p in self.procs]
            if all(c == 0 for c in codes):
                return None
            now = time.monotonic()
            positions = self.positions()
            if joined is None and all(pos.phase >= Phase.JOINED or c is not None for pos, c in zip(positions, codes)):
                joined = now
            failed = any(c not in (None, 0) for c in codes) or any(pos.phase == Phase.FAILED for pos in positions)
            if failed and failed_at is None:
                failed_at = now
            if failed_at is not None and (all(c is not None for c in codes) or now - failed_at > _GRACE):
                return None
            if failed_at is None and (
                (joined is None and now - began > STARTUP_TIMEOUT) or (joined is not None and now - joined > self.timeout)
            ):
                return positions
            time.sleep(_POLL)

    def stop(self) -> None:
        """Kill every participant still running (only those this run started) and reap all."""
        for rank, p in enumerate(self.procs):
            if p.poll() is None:
                self.stopped.add(rank)
                p.kill()
        for p in self.procs:
            p.wait()
        for log in self.logs:
            log.close()

    # -- reading back ---------------------------------------------------------------------

    def completed(self, j: int) -> bool:
        return (self.run_dir / f"out{j}.json").exists() and all(
            (self.run_dir / f"out{j}.{r}.safetensors").exists() for r in range(self.world)
        )

    def result(self, j: int) -> MeshResult:
        meta = json.loads((self.run_dir / f"out{j}.json").read_text())
        files = [_read_all(self.run_dir / f"out{j}.{r}.safetensors") for r in range(self.world)]
        kinds: dict[str, str] = meta["kinds"]
        logical = None if "participant" in kinds.values() else _build(meta["tree"], "G", files[0])
        locals_ = tuple(_build(meta["tree"], "L", f) for f in files) if self.prepared[j].job.return_locals else None
        return MeshResult(self.mesh, logical, locals_, tuple(float(s) for s in meta["seconds"]))

    def log_tail(self, rank: int) -> str:
        try:
            text = (self.run_dir / f"rank{rank}.log").read_text(errors="replace")
        except OSError:
            return ""
        lines = [line for line in text.splitlines() if line.strip()][-6:]
        tail = " | ".join(lines)
        return tail if len(tail) <= 600 else "..." + tail[-597:]


def _read_all(path: Path) -> dict[str, torch.Tensor]:
    with safe_open(path, "pt") as f:
        return {k: f.get_tensor(k).clone() for k in f.keys()}


def _build(tree: Json, prefix: str, tensors: dict[str, torch.Tensor]) -> "torch.Tensor | tuple[object, ...]":
    if isinstance(tree, str):
        return tensors[f"{prefix}.{tree}"]
    assert isinstance(tree, dict) and isinstance(tree["tuple"], list)
    return tuple(_build(t, prefix, tensors) for t in tree["tuple"])


# -- errors ----------------------------------------------------------------------------------------


def _node(run: _Run, job: int, index: int) -> Item | None:
    if 0 <= job < len(run.prepared) and 0 <= index < len(run.prepared[job].encoded.nodes):
        return run.prepared[job].encoded.nodes[index]
    return None


def _where(run: _Run, pos: Position) -> str:
    if pos.phase == Phase.DONE:
        return "finished"
    if pos.phase == Phase.RETURNING:
        return f"returning the results of job {pos.job}"
    if pos.phase == Phase.LAUNCHED:
        return "starting"
    node = _node(run, pos.job, pos.node)
    return f"in {describe_expr(node)}" if node is not None else "before its first op"


def _failure(run: _Run, positions: "list[Position] | None") -> tuple[int, EvalError]:
    """The job that failed and the one error to raise for it."""
    mesh = run.mesh
    target = describe_expr(run.prepared[0].fn)
    if positions is not None:
        alive = [r for r in range(run.world) if r in run.stopped]
        if not all(pos.phase >= Phase.JOINED for pos in positions):
            late = ", ".join(str(r) for r, pos in enumerate(positions) if pos.phase < Phase.JOINED)
            return 0, EvalError(
                f"{target}: the mesh participants did not all start within {STARTUP_TIMEOUT:g} s "
                f"(ranks {late} had not joined the process group); the run was stopped"
            )
        laggard = min(alive or range(run.world), key=lambda r: (positions[r].job, positions[r].dispatches, r))
        pos = positions[laggard]
        node = _node(run, pos.job, pos.node)
        head = describe_expr(node) if node is not None else describe_expr(run.prepared[max(pos.job, 0)].fn)
        others = "; ".join(f"rank {r} at {coordinate(mesh, r)}: {_where(run, positions[r])}" for r in range(run.world) if r != laggard)
        return max(pos.job, 0), EvalError(
            f"{head}: mesh participant {_who(mesh, laggard)} made no progress {_where(run, pos)} within the "
            f"{run.timeout:g} s timeout, and the run was stopped" + (f" (the others: {others})" if others else "")
        )
    final = run.positions()
    codes = [p.returncode for p in run.procs]
    reports: dict[int, dict[str, Json]] = {}
    for r in range(run.world):
        path = run.run_dir / f"error.{r}.json"
        if path.exists():
            reports[r] = json.loads(path.read_text())
    crashed = [r for r in range(run.world) if r not in reports and r not in run.stopped and codes[r] not in (0, None)]
    if crashed:
        r = crashed[0]
        pos = final[r]
        code = codes[r]
        assert code is not None
        how = f"killed by signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        node = _node(run, pos.job, pos.node) if pos.phase == Phase.RUNNING else None
        tail = run.log_tail(r)
        output = f"; its output ended with: {tail}" if tail else ""
        if node is not None:
            return pos.job, EvalError(f"{describe_expr(node)}: mesh participant {_who(mesh, r)} died ({how}) in this op{output}")
        job = max(pos.job, 0)
        return job, EvalError(
            f"{describe_expr(run.prepared[job].fn)}: mesh participant {_who(mesh, r)} died ({how}) "
            f"{_where(run, pos)}{output}"
        )
    if not reports:
        return 0, EvalError(f"{target}: the mesh run failed without a report (exit codes {codes})")
    first = min(reports, key=lambda r: (float(reports[r]["time"]), r))  # type: ignore[arg-type]
    key = (reports[first]["job"], reports[first]["node"], reports[first]["message"])
    same = sorted(r for r in reports if (reports[r]["job"], reports[r]["node"], reports[r]["message"]) == key)
    rank = same[0]
    failed_job, index, message = key
    assert isinstance(failed_job, int) and isinstance(message, str)
    also = f" (ranks {', '.join(map(str, same))} failed the same way)" if len(same) > 1 else ""
    if failed_job < 0:
        return 0, EvalError(f"{target}: mesh participant {_who(mesh, rank)} {message}{also}")
    at = _node(run, failed_job, index) if isinstance(index, int) else None
    if at is not None:
        return failed_job, EvalError(f"{describe_expr(at)}: on mesh participant {_who(mesh, rank)}: {message}{also}")
    return failed_job, EvalError(f"{message} (on mesh participant {_who(mesh, rank)}){also}")


# -- entry points -------------------------------------------------------------------------------


def evaluate_mesh_batch(
    jobs: Sequence[MeshJob], *, mesh: Mesh | None = None, timeout: float = DEFAULT_TIMEOUT
) -> list[MeshOutcome]:
    """Run several programs on one mesh with one launch of its participants, in order.

    Inputs are bound and checked in the caller first (the errors ``evaluate`` raises, raised
    here). A failing job stops the run: the jobs before it keep their results, it gets the
    error, and the jobs after it an error saying they did not run.
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if not jobs:
        return []
    prepared = [_prepare(job) for job in jobs]
    chosen = _run_mesh(prepared, mesh)
    run_dir = Path(tempfile.mkdtemp(prefix="tfexec-mesh-"))
    run = _Run(run_dir, chosen, math.prod(chosen.shape), prepared, float(timeout))
    try:
        store, port = _store(STARTUP_TIMEOUT + float(timeout))
        try:
            run.start(port)
            timed_out = run.supervise()
        finally:
            run.stop()
            del store
        outcomes: list[MeshOutcome] = []
        for j in range(len(prepared)):
            if not run.completed(j):
                break
            outcomes.append(MeshOutcome(run.result(j), None))
        if len(outcomes) < len(prepared):
            failed_job, error = _failure(run, timed_out)
            outcomes.append(MeshOutcome(None, error))
            for j in range(len(outcomes), len(prepared)):
                outcomes.append(
                    MeshOutcome(None, EvalError(f"{describe_expr(prepared[j].fn)}: not run: job {failed_job} of this mesh batch failed"))
                )
        return outcomes
    finally:
        run.stop()
        shutil.rmtree(run_dir, ignore_errors=True)
