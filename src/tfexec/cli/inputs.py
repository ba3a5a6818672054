"""The inputs of a run and the sizes of its dims: ``--inputs``, ``--random``, ``--seed``, ``--dim``.

The rule: every dim the run uses is bound, from an input's axis or from ``--dim``, or the
run is refused naming the missing ones; nothing defaults. A run *uses* every dim its
function's text names — in the parameter and return types, the op attributes (shapes,
extents, sizes), loop extents and carried types of its body; a module constant's type is
checked against its weights and binds nothing. ``--dim`` naming a dim the function does not
use, or disagreeing with ``--inputs``, is refused; ``--inputs`` together with ``--random``
or ``--seed`` is refused (they are two sources of inputs).

A dim bound by no parameter axis (used only in the body, or only inside a dim expression
like ``f32[B * 2]``) reaches the run as an extra, empty parameter ``dim NAME: b1[NAME, 0]``
appended to the function, because ``evaluate`` binds dims from its inputs only. The keys of
every node are unchanged (parameters have none).
"""

import argparse
import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from tfexec.cli.common import Program, UsageError, note
from tfexec.ir.dims import DimVar, resolve_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, Function, GridRegionExpr, Var
from tfexec.ir.module import IRModule
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.ir.walk import dim_names, text_nodes
from tfexec.loading import LoadedModule

DIM_PARAM_PREFIX = "dim "
"""The name of the extra parameter that carries a body-only dim is this plus the dim's name."""


@dataclass(frozen=True)
class Run:
    """A run ready to start: the target and inputs to pass to ``evaluate``, the sizes of the
    dims no input binds (``evaluate``'s ``dims=``), the size of every dim it uses, and notes
    for the user (casts)."""

    target: "Function | LoadedModule"
    inputs: tuple[object, ...]
    dims: dict[str, int]
    notes: tuple[str, ...]
    body_dims: dict[str, int]
    """The dims only the body uses (no parameter axis binds them): passed as ``dims=``."""

    def dims_line(self) -> str | None:
        """``dims: B=2, S=8``: the sizes used, printed with the result (None without dims)."""
        if not self.dims:
            return None
        return "dims: " + ", ".join(f"{k}={v}" for k, v in self.dims.items())


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    """The flags that say where a run's inputs and dim sizes come from."""
    p.add_argument(
        "--inputs", metavar="FILE",
        help="a .safetensors file with one tensor per parameter, named after it; an input of another dtype is "
        "cast to the declared one (with a note). Write one without numpy: "
        "tfexec.loading.write_tensors({'x': x, ...}, 'in.safetensors')",
    )
    p.add_argument("--random", action="store_true", help="random inputs (the default without --inputs)")
    p.add_argument("--seed", type=int, default=None, help="seed of the random inputs (default 0)")
    p.add_argument(
        "--dim", action="append", default=[], metavar="NAME=SIZE",
        help="the size of a dim (repeatable); required for every dim no input binds, "
        "including dims used only in the body",
    )


def used_dims(fn: Function) -> list[str]:
    """The names of the dims ``fn``'s text names, parameters first (see the module docstring)."""
    named: list[object] = [p.type for p in fn.params]
    if fn.ret_type is not None:
        named.append(fn.ret_type)
    for node in text_nodes([fn.body]):
        if isinstance(node, Call) and dataclasses.is_dataclass(node.target) and not isinstance(node.target, Function):
            named.append(tuple(getattr(node.target, f.name) for f in dataclasses.fields(node.target)))
        elif isinstance(node, GridRegionExpr):
            named.append(node.extent)
        elif isinstance(node, (Var, Constant)):  # a loop's bound variables, a constant's type
            named.append(node.type)
    return dim_names(named)


def parse_dims(items: Sequence[str]) -> dict[str, int]:
    """``--dim NAME=SIZE`` flags as a mapping; a ``UsageError`` for a malformed one, a negative
    size, or one name given two sizes."""
    dims: dict[str, int] = {}
    for item in items:
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not eq or not name.isidentifier() or not value.lstrip("-").isdigit():
            raise UsageError(f"--dim expects NAME=SIZE (e.g. B=4), got {item!r}")
        size = int(value)
        if size < 0:
            raise UsageError(f"--dim {name}={size}: a size is a whole number, 0 or more")
        if name in dims and dims[name] != size:
            raise UsageError(f"--dim {name} is given twice, as {dims[name]} and {size}")
        dims[name] = size
    return dims


def prepare(program: Program, args: argparse.Namespace) -> Run:
    """The run's inputs and dims from the command line, or a ``UsageError`` saying what is
    missing, unknown or in conflict."""
    fn = program.function
    used = used_dims(fn)
    given = parse_dims(args.dim)
    unknown = [n for n in given if n not in used]
    if unknown:
        has = f"its dims are {', '.join(used)}" if used else "it has no symbolic dims"
        listed = ", ".join(f"{n}={given[n]}" for n in unknown)
        raise UsageError(f"--dim {listed}: {fn.name} uses no dim {' or '.join(unknown)} ({has})")
    axes = _axis_dims(fn.params)
    if args.inputs is not None:
        if args.random:
            raise UsageError("--inputs and --random are two sources of inputs: give one")
        if args.seed is not None:
            raise UsageError("--seed is the seed of random inputs; it does nothing with --inputs: drop one")
        inputs, bound, notes = _read_inputs(fn, args.inputs)
        for name, size in given.items():
            if name in bound and bound[name][0] != size:
                raise UsageError(f"--dim {name}={size} disagrees with --inputs: {bound[name][1]} has size {bound[name][0]}")
        # A parameter axis binds its dim (or evaluate refuses the input, e.g. of the wrong rank);
        # every other dim needs --dim.
        missing = [n for n in used if n not in axes and n not in given]
        if missing:
            raise UsageError(_missing(fn, missing, "no input binds them"))
        dims = {n: bound[n][0] if n in bound else given[n] for n in used if n in bound or n in given}
    else:
        notes = []
        missing = [n for n in used if n not in given]
        if missing:
            raise UsageError(_missing(fn, missing, "random inputs need a size for every dim"))
        dims = {n: given[n] for n in used}
        gen = torch.Generator().manual_seed(0 if args.seed is None else args.seed)
        inputs = [_random_input(p, dims, gen) for p in fn.params]
    body_dims = {n: dims[n] for n in used if n not in axes}
    return Run(program.target, tuple(inputs), dims, tuple(notes), body_dims)


def prepare_noted(program: Program, args: argparse.Namespace) -> Run:
    """``prepare``, with each of its notes printed on stderr (``tfexec run: note: ...``)."""
    run = prepare(program, args)
    for line in run.notes:
        note(args, line)
    return run


def _missing(fn: Function, missing: list[str], why: str) -> str:
    flags = " ".join(f"--dim {n}=SIZE" for n in missing)
    return f"{fn.name} uses dim(s) {', '.join(missing)} and {why}: give {flags}"


def _axis_dims(params: Iterable[Var]) -> set[str]:
    """Dims some parameter's axis is (a plain ``DimVar`` axis binds its dim from the input)."""
    out: set[str] = set()
    stack: list[Type] = [p.type for p in params]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        else:
            out.update(d.name for d in t.shape if isinstance(d, DimVar))
    return out


def _read_inputs(fn: Function, path: str) -> tuple[list[object], dict[str, tuple[int, str]], list[str]]:
    """The tensors of an ``--inputs`` file in parameter order, the dims their axes bind (size
    and which axis), and a note per input cast to its declared dtype."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from tfexec.loading.sniff import not_safetensors

    wrong = not_safetensors(path)
    if wrong is not None:
        raise UsageError(f"--inputs {wrong}")
    try:
        tensors = load_file(path)
    except (OSError, SafetensorError) as exc:
        raise UsageError(f"{path}: cannot read inputs: {exc}") from None
    names = [p.name for p in fn.params]
    missing = [n for n in names if n not in tensors]
    extra = sorted(set(tensors) - set(names))
    if missing or extra:
        raise UsageError(
            f"{path}: inputs must be named after the parameters of {fn.name} ({', '.join(names)}); "
            f"missing: {', '.join(missing) or 'none'}; unexpected: {', '.join(extra) or 'none'}"
        )
    bound: dict[str, tuple[int, str]] = {}
    notes: list[str] = []
    for p in fn.params:
        t, data = p.type, tensors[p.name]
        if not isinstance(t, TensorType):
            raise UsageError(f"{path}: parameter {p.name} is a tuple ({t}); --inputs holds tensors: use random inputs")
        if data.dtype != t.dtype.torch:
            notes.append(f"input {p.name} is {_dtype_name(data.dtype)} in {path}; it is cast to {t.dtype} as declared")
        _check_shape(path, p.name, t, data, bound)
    return [tensors[n] for n in names], bound, notes


def _check_shape(path: str, name: str, t: TensorType, data: torch.Tensor, bound: dict[str, tuple[int, str]]) -> None:
    """The file's tensor for parameter ``name`` has ``t``'s rank, static sizes, and the size its
    other axes of the same dim have (recorded in ``bound``): else a ``UsageError`` (the inputs
    file is wrong, as a missing tensor is)."""
    shape = [int(n) for n in data.shape]
    if data.dim() != t.rank:
        raise UsageError(f"{path}: parameter {name} is {t}: expected rank {t.rank}, found rank {data.dim()} (shape {shape})")
    for axis, (d, n) in enumerate(zip(t.shape, shape)):
        if isinstance(d, int) and d != n:
            raise UsageError(f"{path}: parameter {name} is {t}: axis {axis} must have size {d}, found {n} (shape {shape})")
        if isinstance(d, DimVar):
            size, where = bound.setdefault(d.name, (n, f"{name} axis {axis}"))
            if size != n:
                raise UsageError(
                    f"{path}: parameter {name} is {t}: axis {axis} is dim {d.name}, of size {size} at {where}, "
                    f"found {n} (shape {shape})"
                )


def _dtype_name(dtype: torch.dtype) -> str:
    known = {d.torch: d for d in DType}
    return str(known[dtype]) if dtype in known else str(dtype).removeprefix("torch.")


def _random_input(param: Var, dims: dict[str, int], gen: torch.Generator) -> object:
    """A random value for ``param``; sizes torch cannot allocate are the dims' fault (a usage error)."""
    try:
        return _random_value(param.type, dims, gen)
    except (RuntimeError, TypeError, ValueError, OverflowError, MemoryError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        sizes = ", ".join(f"{k}={v}" for k, v in dims.items())
        raise UsageError(f"cannot make a random input {param.name}: {param.type} with {sizes}: {first}") from None


def _random_value(t: Type, dims: dict[str, int], gen: torch.Generator) -> object:
    if isinstance(t, TupleType):
        return tuple(_random_value(f, dims, gen) for f in t.fields)
    shape = tuple(resolve_dim(d, dims) for d in t.shape)
    if any(s < 0 for s in shape):
        raise UsageError(f"the dims given make a negative size for {t}: {list(shape)}")
    if t.dtype.is_floating:
        return torch.randn(shape, generator=gen).to(t.dtype.torch)
    if t.dtype is DType.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    return torch.randint(0, 4, shape, generator=gen).to(t.dtype.torch)


def with_dim_params(program: Program, run: Run) -> Run:
    """``run`` with each body-only dim made an input: one empty parameter ``dim N: b1[N, 0]``
    per dim appended to the function. ``tfexec reduce`` uses this, so that the inputs file of a
    reduced program carries every size the program needs."""
    if not run.body_dims:
        return run
    names = list(run.body_dims)
    target = _with_dim_params(program, names)
    extra = tuple(torch.empty((run.body_dims[n], 0), dtype=torch.bool) for n in names)
    return Run(target, (*run.inputs, *extra), run.dims, run.notes, {})


def _with_dim_params(program: Program, names: list[str]) -> "Function | LoadedModule":
    """The program's target with one empty parameter per dim in ``names`` appended to its
    function, so that ``evaluate`` binds those dims from the inputs."""
    fn = program.function
    extra = tuple(Var(DIM_PARAM_PREFIX + n, TensorType((DimVar(n), 0), DType.bool)) for n in names)
    widened = Function(fn.name, fn.params + extra, fn.body, fn.ret_type, span=fn.span)
    if program.loaded is None:
        return widened
    module = program.module
    functions = {name: widened if f is fn else f for name, f in module.functions.items()}
    rebuilt = IRModule(functions, module.constants, module.entry, module.children)
    reading: "Path | dict[str, torch.Tensor]" = program.path if program.path.is_dir() else {}
    loaded = LoadedModule.from_reading(rebuilt, reading)
    loaded.name = program.loaded.name
    return loaded if fn.name == module.entry else loaded.function(fn.name)
