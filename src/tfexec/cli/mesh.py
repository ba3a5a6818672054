"""``tfexec mesh PROGRAM --mesh 2x2``: run a program on every participant of its mesh and print
or write the logical outputs (docs/mesh.md).

Started plainly, it is ``evaluate_mesh``: tfexec starts one process per participant on this
machine. Started by torchrun (each process then has ``RANK``, ``WORLD_SIZE``,
``MASTER_ADDR``, ``MASTER_PORT``), every process is one participant of the launcher's run,
possibly across machines::

    torchrun --nnodes 2 --nproc-per-node 2 ... -m tfexec mesh MODULE_DIR --mesh 2x2 --out out.safetensors

The program, its inputs and dims are read as ``tfexec run`` reads them (``cli.common``,
``cli.inputs``: nothing defaults). Under torchrun they are read in every participant after
the rendezvous, so a mistake is reported once, by rank 0, which alone prints or writes.
"""

import argparse
import math
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from tfexec.cli.common import (
    Subparsers, UsageError, add_program_arguments, flatten, load_program, show, type_check,
)
from tfexec.cli.outputs import TENSORS, add_force_argument, claim, command_inputs, write_tensors_out
from tfexec.cli.inputs import add_input_arguments, prepare, with_dim_params
from tfexec.errors import EvalError, TfexecError
from tfexec.ir.expr import Function
from tfexec.ir.types import Mesh

if TYPE_CHECKING:  # the mesh machinery (torch.distributed.tensor) is imported when the command runs
    from tfexec.mesh._results import MeshJob, MeshResult

JobMaker = Callable[[], "tuple[MeshJob, Mesh | None]"]


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``mesh``."""
    from tfexec.mesh._results import DEFAULT_TIMEOUT

    p = sub.add_parser(
        "mesh", parents=[parent], help="run on every participant of the mesh (tfexec starts them, or torchrun does)",
        description="Run a program on every participant of its mesh and print or write the logical outputs. Run "
        "plainly, tfexec starts one process per participant on this machine; run under torchrun (torchrun --nnodes N "
        "--nproc-per-node P -m tfexec mesh ...), every process is one participant, and rank 0 prints or writes the "
        "outputs. See docs/mesh.md.",
    )
    add_program_arguments(p)
    p.add_argument("--mesh", metavar="SHAPE", help="the mesh shape, as 2, 4 or 2x2 (default: the mesh the program's layouts name)")
    add_input_arguments(p)
    p.add_argument("--out", metavar="FILE", help="write the outputs to this .safetensors file (on rank 0)")
    add_force_argument(p)
    p.add_argument("--locals", action="store_true", help="also write each participant's local values (rank<r>.output...)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="the stall check: seconds a participant may go without reaching its next op while the others wait for it, "
                   f"or without a heartbeat (default {DEFAULT_TIMEOUT:g}); a run that advances is never stopped")
    return p


def run(args: argparse.Namespace) -> int:
    """Run the mesh job; 0 on success (errors are raised, and ``main`` reports them)."""
    from tfexec.mesh._distributed import launched, run_distributed
    from tfexec.mesh._launch import evaluate_mesh_batch
    from tfexec.mesh._results import RunUsageError

    shape = _mesh_shape(args.mesh)
    if not args.timeout > 0:
        raise UsageError(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    out = claim(args.out, TENSORS, command_inputs(args), force=args.force) if args.out else None
    if not launched():
        job, mesh = _make_job(args, shape)
        (outcome,) = evaluate_mesh_batch([job], mesh=mesh, timeout=args.timeout)
        _deliver(outcome.unwrap(), out, args.locals)
        return 0
    # The launcher sends SIGTERM to every process once one has ended with a failure; rank 0
    # must still print the run's error and end with its own exit status, so SIGTERM is
    # ignored from here until this process ends (the run itself notes it while it lasts).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    lead = _rank() == 0
    try:
        result = run_distributed(_in_run(lambda: _make_job(args, shape)), timeout=args.timeout)
    except RunUsageError as exc:
        if not lead:
            return 2
        raise UsageError(str(exc), exc.kind) from None
    except TfexecError:
        if not lead:
            return 1
        raise
    if lead:
        _deliver(result, out, args.locals)
    return 0


def _rank() -> int:
    return int(os.environ.get("RANK", "0"))


def _in_run(make: JobMaker) -> JobMaker:
    """``make`` raising a usage error as the run's own failure (``RunUsageError``, keeping
    the kind of tfexec error it came from), so that it is reported once, with exit status 2."""

    from tfexec.mesh._results import RunUsageError

    def made() -> "tuple[MeshJob, Mesh | None]":
        try:
            return make()
        except UsageError as exc:
            raise RunUsageError(str(exc), exc.kind) from None

    return made


def _make_job(args: argparse.Namespace, shape: tuple[int, ...] | None) -> "tuple[MeshJob, Mesh | None]":
    """The job (program, inputs) and the mesh to run it on, read as ``tfexec run`` reads them."""
    from tfexec.mesh._results import MeshJob

    program = load_program(args.file, args.function)
    type_check(program)
    prepared = with_dim_params(program, prepare(program, args))  # a body-only dim travels as an input
    job = MeshJob(prepared.target, prepared.inputs, return_locals=True)
    return job, None if shape is None else _mesh_for(program.function, shape)


def _mesh_shape(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    parts = text.lower().split("x")
    if not all(p.isdigit() and int(p) > 0 for p in parts):
        raise UsageError(f"--mesh expects a shape like 2, 4 or 2x2, got {text!r}")
    return tuple(int(p) for p in parts)


def _mesh_for(fn: Function, shape: tuple[int, ...]) -> Mesh:
    """The mesh of shape ``shape``: the one the program's layouts name (its axis names), or
    a new one with axes m0, m1, … when the program names none."""
    from tfexec.mesh._wire import encode

    named = [m for m, _ in encode(fn, "").meshes]
    if not named:
        return Mesh(shape, tuple(f"m{i}" for i in range(len(shape))))
    if named[0].shape != shape:
        spelled = "x".join(map(str, named[0].shape))
        raise UsageError(f"--mesh {'x'.join(map(str, shape))}: the program's layouts name {named[0]} (--mesh {spelled})")
    return named[0]


def _deliver(result: "MeshResult", out: Path | None, with_locals: bool) -> None:
    """Print or write the outputs (the logical ones; each participant's too with ``--locals``)."""
    flat: dict[str, torch.Tensor] = {}
    if result.logical is not None:
        flatten("output", result.logical, flat)
    elif not with_locals:
        raise EvalError(
            "the result is a per-participant value (it depends on local of a value split over the mesh), so it has no "
            "single logical value: pass --locals to get each participant's value"
        )
    if with_locals and result.locals is not None:
        for rank, value in enumerate(result.locals):
            flatten(f"rank{rank}.output", value, flat)
    if out is not None:
        write_tensors_out(flat, out)
        print(f"wrote {len(flat)} tensor(s) to {out} ({math.prod(result.mesh.shape)} participants of {result.mesh})")
        return
    for key, t in flat.items():
        show(key, t)
