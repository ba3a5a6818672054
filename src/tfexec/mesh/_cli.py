"""``tfexec mesh``: run a program on every participant of its mesh, from the command line.

Started plainly, it is ``evaluate_mesh``: tfexec starts one process per participant on this
machine. Started by torchrun (each process then has ``RANK``, ``WORLD_SIZE``,
``MASTER_ADDR``, ``MASTER_PORT``), every process is one participant of the launcher's run,
possibly across machines::

    torchrun --nnodes 2 --nproc-per-node 2 ... -m tfexec mesh MODULE_DIR --mesh 2x2 --out out.safetensors

Rank 0 (or the one process) prints or writes the outputs and, on failure, the one error;
exit codes: 0 ok, 1 failure, 2 usage.
"""

import argparse
import math
import os
import signal
import sys
import traceback
from pathlib import Path

import torch

from tfexec.errors import EvalError, TfexecError
from tfexec.ir.dims import DimExpr, DimVar, resolve_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Function
from tfexec.ir.types import Mesh, TensorType, TupleType, Type
from tfexec.loading import LoadedModule, load_module, write_tensors
from tfexec.mesh._distributed import launched, run_distributed
from tfexec.mesh._launch import evaluate_mesh_batch
from tfexec.mesh._results import DEFAULT_TIMEOUT, MeshJob, MeshResult
from tfexec.mesh._wire import encode


class UsageError(TfexecError):
    """A command line ``tfexec mesh`` cannot run: exit code 2."""


MESH_HELP = "run on every participant of the mesh (tfexec starts them, or torchrun does)"
MESH_DESCRIPTION = (
    "Run a program on every participant of its mesh and print or write the logical outputs. Run plainly, tfexec "
    "starts one process per participant on this machine; run under torchrun (torchrun --nnodes N "
    "--nproc-per-node P -m tfexec mesh ...), every process is one participant, and rank 0 prints or writes the "
    "outputs. See docs/mesh.md."
)


def add_mesh_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``tfexec mesh``."""
    p.add_argument("module", metavar="MODULE_DIR", help="a saved module directory (or a .tf.py file)")
    p.add_argument("--function", help="the function to run (default: the entry)")
    p.add_argument("--mesh", metavar="SHAPE", help="the mesh shape, as 2, 4 or 2x2 (default: the mesh the program's layouts name)")
    p.add_argument("--inputs", help="a .safetensors file with one tensor per parameter name (default: random inputs)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE", help="size of a DimVar for random inputs")
    p.add_argument("--out", help="write the outputs to this .safetensors file (on rank 0)")
    p.add_argument("--locals", action="store_true", help="also write each participant's local values (rank<r>.output...)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help=f"seconds of evaluation (default {DEFAULT_TIMEOUT:g})")


def run_mesh_command(args: argparse.Namespace) -> int:
    """Run ``tfexec mesh`` as parsed into ``args``; the exit code."""
    distributed = launched()
    if not distributed:
        return _run(args, False, True)
    # The launcher sends SIGTERM to every process once one has ended with a failure; rank 0
    # must still print the run's error and end with its own exit status, so SIGTERM is
    # ignored from here until this process ends (the run itself notes it while it lasts).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    return _run(args, True, _rank() == 0)


def _run(args: argparse.Namespace, distributed: bool, lead: bool) -> int:
    try:
        shape = _mesh_shape(args.mesh)
        dims = _parse_dims(args.dim)
        if not args.timeout > 0:
            raise UsageError(f"--timeout must be a positive number of seconds, got {args.timeout:g}")

        def make_job() -> tuple[MeshJob, Mesh | None]:
            target, fn = _load(args.module, args.function)
            job = MeshJob(target, tuple(_inputs(fn, args.inputs, args.seed, dims)), return_locals=True)
            return job, None if shape is None else _mesh_for(fn, shape)

        if distributed:
            result = run_distributed(make_job, timeout=args.timeout)
        else:
            job, mesh = make_job()
            (outcome,) = evaluate_mesh_batch([job], mesh=mesh, timeout=args.timeout)
            result = outcome.unwrap()
        if lead:
            try:
                _deliver(result, args.out, args.locals)
            except BrokenPipeError:  # the reader (say, head) stopped reading: nothing more to say
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except UsageError as exc:
        return _fail(args, exc, 2, lead)
    except TfexecError as exc:
        return _fail(args, exc, 1, lead)


def _fail(args: argparse.Namespace, exc: BaseException, code: int, lead: bool) -> int:
    if lead:
        if getattr(args, "debug", False):
            traceback.print_exception(exc)
        print(f"tfexec mesh: {type(exc).__name__}: {exc}", file=sys.stderr)
    return code


def _rank() -> int:
    return int(os.environ.get("RANK", "0"))


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
    named = [m for m, _ in encode(fn, "").meshes]
    if not named:
        return Mesh(shape, tuple(f"m{i}" for i in range(len(shape))))
    if named[0].shape != shape:
        spelled = "x".join(map(str, named[0].shape))
        raise UsageError(f"--mesh {'x'.join(map(str, shape))}: the program's layouts name {named[0]} (--mesh {spelled})")
    return named[0]


def _parse_dims(items: list[str]) -> dict[str, int]:
    dims: dict[str, int] = {}
    for item in items:
        name, _, value = item.partition("=")
        if not name.isidentifier() or not value.isdigit():
            raise UsageError(f"--dim expects NAME=SIZE (e.g. B=4), got {item!r}")
        dims[name] = int(value)
    return dims


def _load(path_text: str, function: str | None) -> "tuple[Function | LoadedModule, Function]":
    path = Path(path_text)
    if not path.exists():
        raise UsageError(f"{path}: no such file or directory")
    if path.is_dir():
        loaded = load_module(path)
        if function is not None:
            loaded = loaded.function(function)
        if loaded.entry is None:
            raise UsageError(f"{path}: the module has no entry; pick one with --function ({', '.join(sorted(loaded.module.functions))})")
        return loaded, loaded.entry
    from tfexec.text import parse

    try:
        module = parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    name = function or module.entry or (next(iter(module.functions)) if len(module.functions) == 1 else None)
    if name is None or name not in module.functions:
        raise UsageError(f"{path}: pick a function with --function ({', '.join(sorted(module.functions))})")
    if module.constants:
        raise UsageError(f"{path}: the program names constants, which a .tf.py file has no weights for: save it as a module")
    return module.functions[name], module.functions[name]


def _inputs(fn: Function, inputs: str | None, seed: int, dims: dict[str, int]) -> list[object]:
    if inputs is not None:
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            tensors = load_file(inputs)
        except (OSError, SafetensorError) as exc:
            raise UsageError(f"{inputs}: cannot read inputs: {exc}") from None
        names = [p.name for p in fn.params]
        missing, extra = [n for n in names if n not in tensors], sorted(set(tensors) - set(names))
        if missing or extra:
            raise UsageError(
                f"{inputs}: inputs must be named after the parameters of {fn.name} ({', '.join(names)}); "
                f"missing: {', '.join(missing) or 'none'}; unexpected: {', '.join(extra) or 'none'}"
            )
        return [tensors[n] for n in names]
    gen = torch.Generator().manual_seed(seed)  # the same on every participant
    return [_random(p.type, dict(dims), gen) for p in fn.params]


def _random(t: Type, dims: dict[str, int], gen: torch.Generator) -> object:
    if isinstance(t, TupleType):
        return tuple(_random(f, dims, gen) for f in t.fields)
    assert isinstance(t, TensorType)
    for d in t.shape:
        for name in _dim_names(d):
            dims.setdefault(name, 4)
    shape = tuple(resolve_dim(d, dims) for d in t.shape)
    if t.dtype.is_floating:
        return torch.randn(shape, generator=gen).to(t.dtype.torch)
    if t.dtype is DType.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    return torch.randint(0, 4, shape, generator=gen).to(t.dtype.torch)


def _dim_names(d: object) -> list[str]:
    if isinstance(d, DimVar):
        return [d.name]
    if isinstance(d, DimExpr):
        return _dim_names(d.lhs) + _dim_names(d.rhs)
    return []


def _flatten(prefix: str, value: object, out: dict[str, torch.Tensor]) -> None:
    if isinstance(value, torch.Tensor):
        out[prefix] = value.detach().contiguous()
    elif isinstance(value, tuple):
        for i, v in enumerate(value):
            _flatten(f"{prefix}.{i}", v, out)


def _deliver(result: MeshResult, out: str | None, with_locals: bool) -> None:
    """Print or write the outputs (the logical ones; each participant's too with ``--locals``)."""
    flat: dict[str, torch.Tensor] = {}
    if result.logical is not None:
        _flatten("output", result.logical, flat)
    elif not with_locals:
        raise EvalError(
            "the result is a per-participant value (it depends on local of a value split over the mesh), so it has no "
            "single logical value: pass --locals to get each participant's value"
        )
    if with_locals and result.locals is not None:
        for rank, value in enumerate(result.locals):
            _flatten(f"rank{rank}.output", value, flat)
    if out is not None:
        write_tensors(flat, out)
        participants = math.prod(result.mesh.shape)
        print(f"wrote {len(flat)} tensor(s) to {out} ({participants} participants of {result.mesh})")
        return
    for key, t in flat.items():
        print(f"{key}: {TensorType(tuple(t.shape), DType.from_torch(t.dtype))}")
        print(f"  {t}")
