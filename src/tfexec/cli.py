"""The ``tfexec`` command: run, check, print, graph, dump, diff and reduce HIR programs.

Exit codes scripts can rely on: 0 ok, 1 mismatch or failure, 2 usage (bad arguments,
missing files, unknown names). Errors are one line on stderr; ``--debug`` shows the traceback.
"""

import argparse
import contextlib
import sys
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path

import torch

from tfexec.errors import TfexecError
from tfexec.ir.dims import DimExpr, DimVar, resolve_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Function
from tfexec.loading import LoadedModule
from tfexec.ir.types import TensorType, TupleType, Type


class UsageError(Exception):
    """Bad command-line input: exit code 2."""


@contextlib.contextmanager
def _progress(args: argparse.Namespace, what: str) -> Iterator[None]:
    """A spinner with the elapsed time on stderr while a long step runs, on a TTY only
    (rich); nothing when stderr is piped or with --no-progress, so scripts see plain output."""
    if getattr(args, "no_progress", False) or not sys.stderr.isatty():
        yield
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        bar.add_task(what, total=None)
        yield


def _load_target(path_text: str, function: str | None) -> "tuple[Function | LoadedModule, Function]":
    """A file or saved-module directory as an evaluation target and the function it runs."""
    path = Path(path_text)
    if not path.exists():
        raise UsageError(f"{path}: no such file or directory")
    if path.is_dir():
        from tfexec.loading import load_module

        loaded = load_module(path)
        if function is not None:
            loaded = loaded.function(function)
        if loaded.entry is None:
            names = ", ".join(sorted(loaded.module.functions))
            raise UsageError(f"{path}: the module has no entry; pick one with --function ({names})")
        return loaded, loaded.entry
    from tfexec.text import parse

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    module = parse(text, filename=str(path))
    name = function or module.entry or (next(iter(module.functions)) if len(module.functions) == 1 else None)
    if name is None:
        names = ", ".join(sorted(module.functions))
        raise UsageError(f"{path}: several functions and no entry; pick one with --function ({names})")
    if name not in module.functions:
        names = ", ".join(sorted(module.functions))
        raise UsageError(f"{path}: no function {name!r} (functions: {names})")
    fn = module.functions[name]
    if module.constants:
        from tfexec.loading import LoadedModule

        loaded = LoadedModule.from_reading(module, {}).function(name)
        return loaded, fn
    return fn, fn


def _parse_dims(items: Sequence[str]) -> dict[str, int]:
    dims: dict[str, int] = {}
    for item in items:
        name, _, value = item.partition("=")
        if not name.isidentifier() or not value.lstrip("-").isdigit():
            raise UsageError(f"--dim expects NAME=SIZE (e.g. B=4), got {item!r}")
        dims[name] = int(value)
    return dims


def _random_value(t: Type, dims: dict[str, int], gen: torch.Generator) -> object:
    if isinstance(t, TupleType):
        return tuple(_random_value(f, dims, gen) for f in t.fields)
    for d in t.shape:
        if isinstance(d, (DimVar, DimExpr)):
            for name in _names(d):
                dims.setdefault(name, 4)
    shape = tuple(resolve_dim(d, dims) for d in t.shape)
    if t.dtype.is_floating:
        return torch.randn(shape, generator=gen).to(t.dtype.torch)
    if t.dtype is DType.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    return torch.randint(0, 4, shape, generator=gen).to(t.dtype.torch)


def _names(d: object) -> list[str]:
    if isinstance(d, DimVar):
        return [d.name]
    if isinstance(d, DimExpr):
        return _names(d.lhs) + _names(d.rhs)
    return []


def _inputs(fn: Function, args: argparse.Namespace) -> list[object]:
    if args.inputs is not None:
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            tensors = load_file(args.inputs)
        except (OSError, SafetensorError) as exc:
            raise UsageError(f"{args.inputs}: cannot read inputs: {exc}") from None
        names = [p.name for p in fn.params]
        missing = [n for n in names if n not in tensors]
        extra = sorted(set(tensors) - set(names))
        if missing or extra:
            raise UsageError(
                f"{args.inputs}: inputs must be named after the parameters of {fn.name} ({', '.join(names)}); "
                f"missing: {', '.join(missing) or 'none'}; unexpected: {', '.join(extra) or 'none'}"
            )
        return [tensors[n] for n in names]
    gen = torch.Generator().manual_seed(args.seed)
    dims = _parse_dims(args.dim)
    return [_random_value(p.type, dims, gen) for p in fn.params]


def _flatten(prefix: str, value: object, out: dict[str, torch.Tensor]) -> None:
    if isinstance(value, torch.Tensor):
        out[prefix] = value.detach().contiguous().cpu()
    elif isinstance(value, tuple):
        for i, v in enumerate(value):
            _flatten(f"{prefix}.{i}", v, out)
    elif hasattr(value, "data"):
        _flatten(prefix, getattr(value, "data"), out)
    elif hasattr(value, "elements"):
        _flatten(prefix, tuple(getattr(value, "elements")), out)


def _show(name: str, value: object) -> None:
    flat: dict[str, torch.Tensor] = {}
    _flatten(name, value, flat)
    for key, t in flat.items():
        dtype = DType.from_torch(t.dtype) if t.dtype in {d.torch for d in DType} else t.dtype
        print(f"{key}: {TensorType(tuple(t.shape), dtype) if isinstance(dtype, DType) else t.dtype}")
        print(f"  {t}")


def cmd_run(args: argparse.Namespace) -> int:
    from tfexec.evaluator.visitor import evaluate

    target, fn = _load_target(args.file, args.function)
    inputs = _inputs(fn, args)
    with _progress(args, f"evaluating {fn.name}"):
        out = evaluate(target, *inputs)
    if args.out:
        from tfexec.loading import write_tensors

        flat: dict[str, torch.Tensor] = {}
        _flatten("output", out, flat)
        write_tensors(flat, args.out)
        print(f"wrote {len(flat)} tensor(s) to {args.out}")
    else:
        _show("output", out)
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from tfexec.equivalence import check_equivalence

    target, fn = _load_target(args.file, args.function)
    inputs = _inputs(fn, args)
    with _progress(args, f"checking {fn.name}: visitor, lowering, node-by-node comparison"):
        report = check_equivalence(target, *inputs, rtol=args.rtol, atol=args.atol, loops=args.loops)
    print(report)
    return 0 if report.ok else 1


def cmd_print(args: argparse.Namespace) -> int:
    from tfexec.text import parse, print_ir

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    print(print_ir(parse(path.read_text(encoding="utf-8"), filename=str(path))), end="")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from tfexec.forward.lower import lower
    from tfexec.forward.picture import render

    target, _ = _load_target(args.file, args.function)
    print(render(lower(target), args.format), end="")
    return 0


def cmd_dump(args: argparse.Namespace) -> int:
    from tfexec.compare._cli import run_dump

    target, fn = _load_target(args.file, args.function)
    inputs = _inputs(fn, args)
    with _progress(args, f"evaluating {fn.name}, keeping every value"):
        return run_dump(args, target, fn, inputs)


def cmd_diff(args: argparse.Namespace) -> int:
    from tfexec.compare._cli import CompareUsageError, run_diff

    try:
        return run_diff(args)
    except CompareUsageError as exc:
        raise UsageError(str(exc)) from None


def cmd_reduce(args: argparse.Namespace) -> int:
    from tfexec.reduce._cli import ReduceUsageError, run_reduce

    target, fn = _load_target(args.file, args.function)
    try:
        return run_reduce(args, target, fn, _inputs(fn, args))
    except ReduceUsageError as exc:
        raise UsageError(str(exc)) from None


def cmd_explain(args: argparse.Namespace) -> int:
    from tfexec.explain._cli import ExplainUsageError, run_explain

    target, fn = _load_target(args.file, args.function)
    try:
        return run_explain(args, target, fn, _inputs(fn, args))
    except ExplainUsageError as exc:
        raise UsageError(str(exc)) from None


def cmd_import(args: argparse.Namespace) -> int:
    from tfexec.frontends.torch._cli import ImportUsageError, run_import

    try:
        print(run_import(args.target, args.example_shape, args.out, args.name, args.seed))
    except ImportUsageError as exc:
        raise UsageError(str(exc)) from None
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    from tfexec.docs._check import NoCheckout
    from tfexec.docs._cli import run_docs

    try:
        return run_docs(args.action, args.root, args.out)
    except NoCheckout as exc:
        raise UsageError(str(exc)) from None


def cmd_ops(args: argparse.Namespace) -> int:
    from tfexec.docs._cli import UnknownOp, run_ops

    try:
        return run_ops(args.name)
    except UnknownOp as exc:
        raise UsageError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tfexec", description="The reference interpreter of the TileFoundry HIR.")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks on errors")
    parser.add_argument("--no-progress", action="store_true", help="no progress spinner, even on a terminal")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def program(p: argparse.ArgumentParser, inputs: bool = True) -> None:
        p.add_argument("file", help="a .tf.py file or a saved module directory")
        p.add_argument("--function", help="the function to run (default: the entry)")
        if inputs:
            p.add_argument("--inputs", help="a .safetensors file with one tensor per parameter name")
            p.add_argument("--random", action="store_true", help="random inputs (the default without --inputs)")
            p.add_argument("--seed", type=int, default=0, help="seed for --random (default 0)")
            p.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE", help="size of a DimVar for --random")

    p = sub.add_parser("run", help="evaluate and print or write the outputs")
    program(p)
    p.add_argument("--out", help="write the outputs to this .safetensors file")
    p.set_defaults(handler=cmd_run)
    p = sub.add_parser("check", help="run both routes and print the per-node comparison")
    program(p)
    p.add_argument("--rtol", type=float, default=None)
    p.add_argument("--atol", type=float, default=None)
    p.add_argument("--loops", choices=("collapse", "expand"), default="collapse")
    p.set_defaults(handler=cmd_check)
    p = sub.add_parser("print", help="print the canonical text form")
    p.add_argument("file")
    p.set_defaults(handler=cmd_print)
    p = sub.add_parser("graph", help="the lowered graph as Mermaid or dot")
    program(p, inputs=False)
    p.add_argument("--format", choices=("mermaid", "dot"), default="mermaid")
    p.set_defaults(handler=cmd_graph)
    from tfexec.compare._cli import register_diff, register_dump
    from tfexec.reduce._cli import register_reduce

    register_dump(sub, program).set_defaults(handler=cmd_dump)
    register_diff(sub).set_defaults(handler=cmd_diff)
    register_reduce(sub, program).set_defaults(handler=cmd_reduce)
    from tfexec.explain._cli import register_explain

    register_explain(sub, program).set_defaults(handler=cmd_explain)
    p = sub.add_parser(
        "import", help="import a PyTorch model via torch.export (runs MODEL.py's Python code)",
        description="Import a PyTorch model through torch.export and save it as a module directory. "
        "This imports MODEL.py and calls FACTORY(): it runs the Python code of MODEL.py, so use it "
        "only on code you trust (every other command only reads text). A returned nn.Module is put "
        "in eval mode.",
    )
    p.add_argument("target", metavar="MODEL.py:FACTORY", help="a Python file and a function in it returning the model")
    p.add_argument(
        "--example-shape", action="append", default=[], metavar="SHAPE",
        help="one example input per use, in forward's order: sizes like 2,8,32; NAME=SIZE makes that axis "
        "a dynamic torch.export.Dim (B=2,S=8,32); a dtype prefix like i64:2,8 (default f32)",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="the module directory to write")
    p.add_argument("--name", default="forward", help="the HIR function's name (default forward)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random example inputs (default 0)")
    p.set_defaults(handler=cmd_import)
    p = sub.add_parser("docs", help="print, write or check the generated docs (docs/ops.md, docs/spec-coverage.md)")
    p.add_argument("action", choices=("ops", "coverage", "check", "write"))
    p.add_argument("--root", help="the checkout (default: found from the working directory)")
    p.add_argument("-o", "--out", help="write the page here instead of stdout (ops, coverage)")
    p.set_defaults(handler=cmd_docs)
    p = sub.add_parser("ops", help="one op's reference entry (every op's name without NAME)")
    p.add_argument("name", nargs="?", metavar="NAME")
    p.set_defaults(handler=cmd_ops)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
        return code
    except UsageError as exc:
        _fail(args, exc)
        return 2
    except TfexecError as exc:
        _fail(args, exc)
        return 1
    except KeyboardInterrupt:
        return 130


def _fail(args: argparse.Namespace, exc: BaseException) -> None:
    if args.debug:
        traceback.print_exception(exc)
    print(f"tfexec {args.command}: {type(exc).__name__}: {exc}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
