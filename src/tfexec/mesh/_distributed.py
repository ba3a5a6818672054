"""A mesh run whose participants an external launcher started — torchrun, or any launcher
that sets ``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR`` and ``MASTER_PORT`` — one participant per
process, joined through the launcher's rendezvous (``env://``).

Every process calls ``run_distributed`` with the same job. Each prepares it itself (binding
and checking the inputs as ``evaluate`` does, reading no weight), they meet in the store,
form a gloo process group, and each evaluates as a participant of tfexec's own launcher
does (``_session``), reading its own share of the weights from the module's files. The
monitor thread of ``_coordinator`` watches for failures and timeouts; rank 0 raises the
run's one ``EvalError``, and every other participant's process ends (exit status 1).
"""

import contextlib
import itertools
import math
import os
import signal
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from types import FrameType

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import PrefixStore
from torch.distributed.rendezvous import rendezvous

from tfexec.errors import EvalError, TfexecError
from tfexec.ir.describe import describe_expr
from tfexec.ir.types import Mesh
from tfexec.mesh import _rules
from tfexec.mesh._coordinator import Coordinator
from tfexec.mesh._failures import FailureWords, failure_of, is_comm_error
from tfexec.mesh._internals import Handler, reason_of
from tfexec.mesh._prepare import choose_mesh, prepare
from tfexec.mesh._progress import Phase
from tfexec.mesh._results import STARTUP_TIMEOUT, MeshJob, MeshResult, RunUsageError
from tfexec.mesh._secret import run_secret
from tfexec.mesh._session import (
    JobValues,
    MemoryMark,
    build_value,
    gather_all,
    is_per_participant,
    join,
    local_of,
    op_nodes,
    run_rounds,
)
from tfexec.mesh._weights import weights_target

LAUNCH_VARIABLES = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
"""The environment a launcher sets for each process (torchrun does)."""
_calls = itertools.count()  # every participant calls in the same order: one store prefix per call


def launched() -> bool:
    """Whether this process was started by a torch.distributed launcher (its variables are set)."""
    return all(os.environ.get(name) for name in LAUNCH_VARIABLES)


JobMaker = Callable[[], "tuple[MeshJob, Mesh | None]"]
"""Builds the job of a run and the mesh it runs on (None: the one its layouts name)."""


def run_distributed(make_job: JobMaker, *, timeout: float) -> MeshResult:
    """Run the job ``make_job`` builds as this process's participant of the launcher's mesh.

    ``make_job`` runs in every participant after the rendezvous, so an error it raises (a
    missing module, bad inputs) is reported once, by rank 0, like any failure of the run.
    On success every participant returns the same ``MeshResult``; on failure rank 0 raises
    the run's ``EvalError`` and every other participant's process exits with status 1.
    """
    missing = [name for name in LAUNCH_VARIABLES if not os.environ.get(name)]
    if missing:
        raise EvalError(
            f"a distributed mesh run needs the environment a torch.distributed launcher sets ({', '.join(LAUNCH_VARIABLES)}; "
            f"torchrun sets them), but {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set: start every "
            "participant with torchrun, or call evaluate_mesh, which starts the participants itself"
        )
    if dist.is_initialized():
        raise EvalError(
            "this process has already initialised torch.distributed; a distributed mesh run forms and ends its own gloo "
            "process group: run it before init_process_group, or after destroy_process_group"
        )
    secret = run_secret()
    where = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
    try:
        store, rank, world = next(rendezvous("env://", timeout=timedelta(seconds=STARTUP_TIMEOUT)))
    except (RuntimeError, ValueError) as exc:
        raise EvalError(f"could not join the launcher's rendezvous (env:// at {where}): {reason_of(exc)}") from exc
    call = next(_calls)
    coordinator = Coordinator(store, f"tfexec-mesh/{call}", rank, world, timeout, secret)
    with _sigterm_noted(coordinator):
        try:
            return _participate(coordinator, PrefixStore(f"tfexec-mesh/{call}/pg/", store), make_job, timeout)
        finally:
            coordinator.close()
            if dist.is_initialized():
                dist.destroy_process_group()


@contextlib.contextmanager
def _sigterm_noted(coordinator: Coordinator) -> Iterator[None]:
    """While the run lasts, SIGTERM (the launcher stopping the run) is noted for the monitor
    instead of ending the process at once, so rank 0 can still say why the run stopped."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def note(signum: int, frame: FrameType | None) -> None:
        coordinator.terminated = True

    previous = signal.signal(signal.SIGTERM, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _participate(coordinator: Coordinator, pg_store: PrefixStore, make_job: JobMaker, timeout: float) -> MeshResult:
    rank, world, progress = coordinator.rank, coordinator.world, coordinator.progress
    try:
        job, mesh = make_job()
        prepared = prepare(job)
        chosen = choose_mesh([prepared], mesh)
        if math.prod(chosen.shape) != world:
            n = math.prod(chosen.shape)
            raise EvalError(
                f"{describe_expr(prepared.fn)}: {chosen} has {n} participants, but the launcher started {world} "
                f"processes: start {n} (torchrun --nnodes N --nproc-per-node P, with N x P = {n})"
            )
    except TfexecError as exc:
        usage = isinstance(exc, RunUsageError)
        kind = (exc.kind if isinstance(exc, RunUsageError) else None) or type(exc).__name__
        coordinator.report(-2, None, str(exc), kind, 2 if usage else 1)
        verdict = coordinator.outcome()
        raise (exc if str(verdict) == str(exc) else verdict) from None
    nodes = prepared.encoded.nodes
    coordinator.words = FailureWords(chosen, [(prepared.fn, nodes)], timeout)
    before: dict[type, Handler] = {}
    try:
        coordinator.wait_ready()
        state, before = join(pg_store, rank, world, chosen, STARTUP_TIMEOUT + timeout, progress)
        progress.set(Phase.JOINED)
        progress.set(Phase.RUNNING, 0)
        mark = MemoryMark()
        state.op_nodes = op_nodes(nodes)
        plan = prepared.weights.to_json() if prepared.weights is not None else None
        target = weights_target(prepared.fn, nodes, plan, prepared.tensors, state)
        values = run_rounds(target, prepared.fn, prepared.tensors.__getitem__, state, job.rounds)
        progress.set(Phase.RETURNING, 0)
        result = _collect(values, state, chosen, job.return_locals, mark)
        progress.set(Phase.DONE)
        dist.barrier()
        return result
    except Exception as exc:
        node, message = failure_of(exc, progress, nodes)
        if is_comm_error(exc):
            coordinator.met_comm_error(max(progress.job, 0), node, message)
        else:
            coordinator.report(max(progress.job, 0), node, message)
        raise coordinator.outcome() from None
    finally:
        if before:
            _rules.restore(before)


def _collect(values: JobValues, state: _rules.MeshState, mesh: Mesh, return_locals: bool, mark: MemoryMark) -> MeshResult:
    """The job's ``MeshResult``, the same on every participant: the logical values, each
    participant's local values when asked for (all-gathered), and its memory growth."""
    world = math.prod(mesh.shape)
    per_participant = any(is_per_participant(v, state) for _, v in values.leaves)
    logical = None if per_participant else build_value(values.tree, "G", {f"G.{k}": t for k, t in values.logical.items()})
    locals_ = None
    if return_locals:
        gathered: list[dict[str, torch.Tensor]] = [{} for _ in range(world)]
        for path, v in values.leaves:
            for r, t in enumerate(gather_all(local_of(v, state), world)):
                gathered[r][f"L.{path}"] = t
        locals_ = tuple(build_value(values.tree, "L", g) for g in gathered)
    growth = mark.growth()
    every = [int(t.item()) for t in gather_all(torch.tensor(-1 if growth is None else growth, dtype=torch.int64), world)]
    return MeshResult(mesh, logical, locals_, tuple(values.seconds), tuple(every) if min(every) >= 0 else None)
