"""What the subcommands share: the usage error, the program a command runs, progress, output.

A *program* on the command line is a ``.tf.py`` file or a saved module directory
(``tfexec.save_module``); ``load_program`` reads it into the target ``evaluate`` takes and the
function that runs, and refuses (a ``UsageError``, exit 2) what cannot be read as one.
"""

import argparse
import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

import torch

from tfexec import infer_types
from tfexec.errors import ModuleLoadError, ParseError, TfexecError
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Function
from tfexec.ir.module import IRModule
from tfexec.ir.types import TensorType
from tfexec.loading import LoadedModule, load_module
from tfexec.text import parse

TEXT_FORM_DOC = "docs/text-form.md"
"""Where the text form is described (named in messages about programs that are not one)."""


Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What ``add_subparsers`` returns: each subcommand's ``add_parser(sub, parent)`` adds itself to it."""


class UsageError(Exception):
    """The command line is wrong: exit status 2. ``kind`` names the tfexec error it came from
    (``ParseError``, ``ModuleLoadError``) when there is one."""

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind


def usage_from(exc: TfexecError) -> UsageError:
    """A tfexec error about reading the command line's input, as a usage error that keeps its kind."""
    return UsageError(str(exc), type(exc).__name__)


@dataclass(frozen=True)
class Program:
    """What a command runs, read from ``path``: ``target`` is what ``evaluate`` takes (the
    ``function``, or the ``loaded`` module with it selected when the program has module
    constants); ``loaded`` holds the weights of a directory, none for a text file."""

    path: Path
    target: "Function | LoadedModule"
    function: Function
    module: IRModule
    loaded: LoadedModule | None


def add_program_arguments(p: argparse.ArgumentParser) -> None:
    """The positional program and ``--function``."""
    p.add_argument("file", metavar="PROGRAM", help="a .tf.py file (the text form) or a saved module directory")
    p.add_argument("--function", metavar="NAME", help="the function to run (default: the @entry one, or the only one)")


def load_program(path_text: str, function: str | None) -> Program:
    """Read a program and select the function to run; a ``UsageError`` when the file is
    missing, unreadable or does not parse, the directory is not a saved module, or no
    function can be chosen."""
    path = Path(path_text)
    if not path.exists():
        raise UsageError(f"{path}: no such file or directory")
    module, loaded = read_module(path)
    if not module.functions:
        raise UsageError(
            f"{path}: defines no function; a program is a `def name(x: f32[N]) -> f32[N]: ... return ...` "
            f"(see {TEXT_FORM_DOC})"
        )
    names = ", ".join(sorted(module.functions))
    if function is not None and function not in module.functions:
        raise UsageError(f"{path}: no function {function!r} (functions: {names})")
    if function is None:
        try:
            fn = module.entry_function
        except LookupError:
            raise UsageError(f"{path}: {len(module.functions)} functions and no @entry; pick one with --function ({names})") from None
    else:
        fn = module.functions[function]
    target: Function | LoadedModule = fn
    if loaded is None and module.all_constants():
        loaded = LoadedModule.from_reading(module, {})
    if loaded is not None:
        target = loaded if fn.name == module.entry else loaded.function(fn.name)
    return Program(path, target, fn, module, loaded)


def read_module(path: Path) -> tuple[IRModule, LoadedModule | None]:
    """The module a file or saved-module directory holds, and for a directory the module
    loaded with its weights."""
    if path.is_dir():
        try:
            loaded = load_module(path)
        except (ModuleLoadError, ParseError) as exc:  # its module.tf.py unparsable: as for a .tf.py, exit 2
            raise usage_from(exc) from None
        return loaded.module, loaded
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it as text: {exc}") from None
    try:
        return parse(text, filename=str(path)), None
    except ParseError as exc:
        raise usage_from(exc) from None


def type_check(program: Program) -> None:
    """Infer the types of the function that runs: a type error is the program's, reported before
    anything runs (``TypeInferenceError``, exit 1)."""
    infer_types(program.function)


@contextlib.contextmanager
def progress(args: argparse.Namespace, what: str) -> Iterator[None]:
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


def flatten(prefix: str, value: object, out: dict[str, torch.Tensor]) -> None:
    """Every tensor in ``value`` (a tensor, a tuple, or a tfexec value) under a dotted key."""
    if isinstance(value, torch.Tensor):
        out[prefix] = value.detach().contiguous().cpu()
    elif isinstance(value, tuple):
        for i, v in enumerate(value):
            flatten(f"{prefix}.{i}", v, out)
    elif hasattr(value, "data"):
        flatten(prefix, getattr(value, "data"), out)
    elif hasattr(value, "elements"):
        flatten(prefix, tuple(getattr(value, "elements")), out)


def show(name: str, value: object) -> None:
    """Print each tensor of ``value``: its key and type, then its data."""
    flat: dict[str, torch.Tensor] = {}
    flatten(name, value, flat)
    known = {d.torch for d in DType}
    for key, t in flat.items():
        kind = TensorType(tuple(t.shape), DType.from_torch(t.dtype)) if t.dtype in known else t.dtype
        print(f"{key}: {kind}")
        print(f"  {t}")


def note(args: argparse.Namespace, message: str) -> None:
    """A line on stderr that is not an error (``tfexec run: note: ...``)."""
    print(f"tfexec {args.command}: note: {message}", file=sys.stderr)
