"""The mesh evaluator: a program run by every participant of its mesh, on torch.distributed.

``evaluate`` models one mesh participant (evaluator spec §6) and so refuses ``local`` of a
value split over the mesh. ``evaluate_mesh`` runs the program as the mesh would: one
process per participant, joined in a ``gloo`` process group on 127.0.0.1, each holding its
shard of every distributed value as a DTensor (``torch.distributed.tensor``).
``evaluate_distributed`` does the same when a launcher such as ``torchrun`` started the
processes, possibly on several machines (``docs/mesh.md``; ``tfexec mesh`` on the command line).

Main definitions
----------------
* ``evaluate_mesh(target, *inputs, mesh=None, return_locals=False, timeout=300.0)`` — the
  logical result (as ``evaluate`` returns it), or with ``return_locals=True`` a
  ``MeshResult`` that also holds each participant's local values.
* ``evaluate_mesh_batch(jobs, mesh=None, timeout=...)`` — several ``MeshJob``s with one
  launch of the participants (each job may also repeat ``rounds`` times, timed).
* ``evaluate_distributed(target, *inputs, mesh=None, return_locals=False, timeout=300.0)``
  — called in every process of a torchrun (``env://``) launch: each process is one
  participant; the same result on every participant; on failure rank 0 raises the one
  ``EvalError`` and the other processes exit with status 1.
* ``MeshResult``, ``MeshOutcome``, ``MeshJob``.

Design
------
* **Values.** An input whose parameter type carries a ``ShardLayout`` becomes a DTensor
  with the matching placements (``Split(a)`` → ``Shard(a)``, ``Replicate()`` →
  ``Replicate()``, one per mesh axis; two mesh axes splitting one tensor axis split it in
  mesh-axis order). A DTensor *is* the logical value (its ``shape`` is the logical shape),
  which is what spec §6 says ops act on.
* **Ops.** Each participant runs the single-participant ``EvaluatorVisitor`` unchanged —
  binding, memo, function calls, loops, error prefixes — on DTensor values, and each op's
  own value rule (kernel) computes on DTensors, so DTensor's op propagation does the
  distributed arithmetic (a matmul contracting a split axis yields a ``Partial`` sum, a
  softmax over a split axis gathers it, …). What is mesh-specific lives in the separate
  registry ``mesh_rules`` (``reshard`` is a real ``redistribute``; ``local`` redistributes
  to its operand's ``ShardLayout`` and returns ``to_local()``) and in one generic wrapper
  of every other handler (logical plain tensors join DTensors as replicated ones; an op
  with a per-participant operand — the result of ``local`` on a split axis — runs on the
  logical value of its distributed operands and gives a per-participant result). A
  participant process exists only for the mesh run, so it installs these over its own
  ``eval_registry`` at start; the caller's registry is never touched.
* **Weights.** A loaded module's weights are read by the participants, not the caller:
  when they live in files (``load_module``, a ``.safetensors`` reading) each participant
  reads its block of every weight typed with a ``ShardLayout`` that splits it (a DTensor
  with that layout's placements) and the whole of every other weight, each checked
  against the manifest (per-block SHA-256s, manifest version 2; see
  ``FileSource.fetch_block`` for what a version 1 manifest allows). The caller reads none.
  An in-memory reading is already in the caller's memory; it travels with the job.
* **Processes.** The program travels as data, never pickled: JSON records that rebuild
  the same DAG with the same spans (custom op classes and their handlers are imported by
  module name) and safetensors files for tensors. The caller hosts the TCP store on an
  OS-chosen port of 127.0.0.1, starts the participants with ``subprocess``, and watches
  their exit codes, error reports and progress slots (the op each one is in). Under an
  external launcher there is no caller: every process prepares the job itself, and the
  participants keep in step through the launcher's rendezvous store (``_coordinator``).
* **Failures.** Any failure surfaces as one ``EvalError`` prefixed by ``describe_expr`` of
  the node and naming the participant (rank and mesh coordinate): an error in a handler,
  a participant that dies (``os._exit``, a signal) or one that stalls: ``timeout`` is a
  stall check, not a deadline — a participant that goes ``timeout`` seconds without
  reaching its next op while another waits for it, or without a heartbeat, is named
  (``_stall``); a run that advances is never stopped (start-up has its own
  ``STARTUP_TIMEOUT``). The first failure stops every participant, and no
  process outlives the call. An op DTensor cannot compute for the placements at hand
  (say ``rms_norm`` over a split axis) is such an error, naming the node and placements.

Equivalence and tolerance
-------------------------
Without ``local`` on a split axis, the mesh result is the single-participant result. It is
bitwise equal where the sharded computation does the same arithmetic per element:
elementwise ops, shape ops, ``reshard``, ops whose reduced or contracted axes are not
split, and ops DTensor computes after gathering (softmax, layer_norm over a split axis).
Where a split axis is reduced or contracted (``reduce``, ``matmul``, a mean over a split
axis), each participant reduces its shard and the partial results are combined, which
reassociates the sum: the results then agree within ``torch.testing.assert_close``'s
default tolerances for the dtype (float32: rtol 1.3e-6, atol 1e-5). A BLAS kernel may also
block a row-split matmul differently; the tests hold matmuls to the same tolerance.
For ``local`` of a split value, each participant's value is bitwise the matching slice of
the logical value.

Implementation notes
--------------------
* Inputs and constants must be on CPU (gloo); each participant uses
  ``cpu_count // participants`` intra-op threads.
* Inputs are whole (logical) tensors in every participant, which distributes its part.
* ``MeshResult.rss_growth`` gives each participant's peak resident growth during its job.
* Per-participant values are tracked by tensor identity within a participant; a
  per-participant output has no logical value (``MeshResult.logical`` is None and
  ``evaluate_mesh`` without ``return_locals`` refuses).
"""

from typing import Literal, overload

import torch

from tfexec.api_checks import public
from tfexec.ir.expr import Function
from tfexec.ir.types import Mesh
from tfexec.loading import LoadedModule
from tfexec.mesh._distributed import run_distributed
from tfexec.mesh._launch import evaluate_mesh_batch as evaluate_mesh_batch
from tfexec.mesh._results import (
    DEFAULT_TIMEOUT as DEFAULT_TIMEOUT,
    MAX_PARTICIPANTS as MAX_PARTICIPANTS,
    STARTUP_TIMEOUT as STARTUP_TIMEOUT,
    MeshJob as MeshJob,
    MeshOutcome as MeshOutcome,
    MeshResult as MeshResult,
    coordinate as coordinate,
    check_timeout,
    logical_result,
)


@overload
def evaluate_mesh(
    target: "Function | LoadedModule", *inputs: object, mesh: Mesh | None = None,
    return_locals: Literal[False] = False, timeout: float = DEFAULT_TIMEOUT,
) -> "torch.Tensor | tuple[object, ...]": ...


@overload
def evaluate_mesh(
    target: "Function | LoadedModule", *inputs: object, mesh: Mesh | None = None,
    return_locals: Literal[True], timeout: float = DEFAULT_TIMEOUT,
) -> MeshResult: ...


@public
def evaluate_mesh(
    target: "Function | LoadedModule", *inputs: object, mesh: Mesh | None = None,
    return_locals: bool = False, timeout: float = DEFAULT_TIMEOUT,
) -> "torch.Tensor | tuple[object, ...] | MeshResult":
    """Run ``target`` on ``inputs`` on every participant of ``mesh`` (by default the one mesh
    its ``ShardLayout``s name), as one process each, and return the logical result — or,
    with ``return_locals=True``, a ``MeshResult`` with each participant's local values too.

    Inputs are logical (whole) tensors, bound as ``evaluate`` binds them; a failure in any
    participant, one that dies, or one that stalls (``timeout`` seconds without reaching its
    next op while another waits for it) is an ``EvalError`` naming the node and the participant.
    """
    (outcome,) = evaluate_mesh_batch([MeshJob(target, tuple(inputs), bool(return_locals))], mesh=mesh, timeout=timeout)
    result = outcome.unwrap()
    return result if return_locals else logical_result(target, result)


@overload
def evaluate_distributed(
    target: "Function | LoadedModule", *inputs: object, mesh: Mesh | None = None,
    return_locals: Literal[False] = False, timeout: float = DEFAULT_TIMEOUT,
) -> "torch.Tensor | tuple[object, ...]": ...


@overload
def evaluate_distributed(
    target: "Function | LoadedModule", *inputs: object, mesh: Mesh | None = None,
    return_locals: Literal[True], timeout: float = DEFAULT_TIMEOUT,
) -> MeshResult: ...


@public
def evaluate_distributed(
    target: "Function | LoadedModule", *inputs: object, mesh: Mesh | None = None,
    return_locals: bool = False, timeout: float = DEFAULT_TIMEOUT,
) -> "torch.Tensor | tuple[object, ...] | MeshResult":
    """``evaluate_mesh`` for a launcher you run yourself: call it in every process that
    ``torchrun`` (or any launcher setting ``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
    ``MASTER_PORT``) started, with the same ``target`` and ``inputs``; each process is one
    participant, joined through the launcher's rendezvous (``env://``).

    It returns what ``evaluate_mesh`` returns, on every participant. When the run fails,
    rank 0 raises the one ``EvalError`` (naming the node and the participant), and every
    other participant's process ends with exit status 1 (so does rank 0's, after printing
    the error, when it is rank 0 that hangs; the rank deciding in its place does when rank 0
    stops answering). Every participant needs the run's secret (``TFEXEC_MESH_SECRET`` or
    ``TFEXEC_MESH_SECRET_FILE``): tfexec signs its records in the launcher's store. See
    ``docs/mesh.md``. Run it on CPU tensors, outside any
    process group of your own; it sets up and tears down its own gloo group.
    """
    check_timeout(timeout)
    job = MeshJob(target, tuple(inputs), bool(return_locals))
    result = run_distributed(lambda: (job, mesh), timeout=float(timeout))
    return result if return_locals else logical_result(target, result)


__all__ = [
    "DEFAULT_TIMEOUT", "MAX_PARTICIPANTS", "STARTUP_TIMEOUT", "MeshJob", "MeshOutcome", "MeshResult", "coordinate",
    "evaluate_distributed", "evaluate_mesh", "evaluate_mesh_batch",
]
