"""``tfexec import MODEL.py:FACTORY --example-shape ... --out DIR`` and ``tfexec check
MODEL.py:FACTORY --against torch --example-shape ...``: the commands' work.

Unlike every other tfexec command, these run the user's Python: they import
``MODEL.py`` (as Python imports a module, with its directory on ``sys.path``) and call
``FACTORY()`` with no arguments for the ``nn.Module`` (put in eval mode) or function to
export. That is their documented purpose; the module text ``import`` writes is the HIR
text form, which no tfexec command ever executes.

``--example-shape`` gives one example input per use, in ``forward``'s order: sizes
separated by commas (``2,8,32``), each optionally named to make that axis a dynamic
``torch.export.Dim`` (``B=2,S=8,32``), optionally prefixed by a dtype (``i64:2,8``).
"""

import importlib.util
import inspect
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from tfexec.compare import Tolerance
from tfexec.frontends.torch._against import check_against_torch
from tfexec.frontends.torch._against_report import TorchCheckReport
from tfexec.frontends.torch._api import import_module
from tfexec.frontends.torch._jaxtyping import ExamplesContradictAnnotations
from tfexec.frontends.torch._report import TorchImportError
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Function
from tfexec.wording import a, did_you_mean

_SIZE = re.compile(r"^(?:(?P<name>[A-Za-z_]\w*)=)?(?P<size>\d+)$")


class ImportUsageError(Exception):
    """Bad command-line input for ``tfexec import`` (exit code 2)."""


def parse_shape(text: str, generator: torch.Generator) -> tuple[torch.Tensor, dict[int, torch.export.Dim]]:
    """One ``--example-shape``: a random example tensor and its dynamic axes."""
    dtype = DType.float32
    body = text
    if ":" in text:
        prefix, body = text.split(":", 1)
        try:
            dtype = DType.from_short(prefix.strip())
        except ValueError as exc:
            raise ImportUsageError(f"--example-shape {text!r}: {exc}") from None
    sizes: list[int] = []
    dims: dict[int, torch.export.Dim] = {}
    for axis, item in enumerate(p.strip() for p in body.split(",")):
        m = _SIZE.match(item)
        if m is None:
            raise ImportUsageError(
                f"--example-shape {text!r}: {item!r} is not a size (expected sizes like 2,8,32 or B=2,S=8,32)"
            )
        sizes.append(int(m["size"]))
        if m["name"]:
            dims[axis] = torch.export.Dim(m["name"])
    if dtype.is_floating:
        example = torch.randn(sizes, generator=generator).to(dtype.torch)
    elif dtype is DType.bool:
        example = torch.randint(0, 2, sizes, generator=generator).bool()
    else:
        example = torch.randint(0, 4, sizes, generator=generator).to(dtype.torch)
    return example, dims


def load_factory(target: str) -> Callable[[], object]:
    """``FACTORY`` of ``MODEL.py:FACTORY``, importing ``MODEL.py`` (running its code)."""
    path_text, sep, factory_name = target.rpartition(":")
    if not sep or not path_text or not factory_name.isidentifier():
        raise ImportUsageError(f"{target!r}: expects MODEL.py:FACTORY (a Python file and a callable in it)")
    path = Path(path_text)
    if not path.is_file():
        raise ImportUsageError(f"{path}: no such file")
    name = "_tfexec_import_" + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportUsageError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's module failing to import: report it, do not crash
        raise TorchImportError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from exc
    finally:
        sys.path.remove(str(path.resolve().parent))
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        names = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
        hint = did_you_mean(factory_name, names)
        raise ImportUsageError(f"{path} has no factory {factory_name} (a callable returning the model){hint}")
    return factory  # type: ignore[no-any-return]


def load_model(target: str, shapes: Sequence[str], seed: int = 0) -> tuple[Any, tuple[torch.Tensor, ...], list[Any] | None]:
    """The model ``MODEL.py:FACTORY`` returns (a module in eval mode, or a function), its
    example inputs from ``shapes`` (random, seeded) and their dynamic axes (None: all static)."""
    factory = load_factory(target)
    generator = torch.Generator().manual_seed(seed)
    examples, spec = [], []
    for text in shapes:
        example, dims = parse_shape(text, generator)
        examples.append(example)
        spec.append(dims or None)
    try:
        model: Any = factory()
    except Exception as exc:  # the user's factory failing: report it, do not crash
        raise TorchImportError(f"{target}: calling the factory raised {type(exc).__name__}: {exc}") from exc
    if isinstance(model, torch.nn.Module):
        model.eval()
    elif not callable(model):
        raise ImportUsageError(f"{target}: the factory returned {a(type(model).__name__)}, not a module or function")
    _check_input_count(target, model, len(shapes))
    dynamic = spec if any(s is not None for s in spec) else None
    return model, tuple(examples), dynamic


def _check_input_count(target: str, model: Any, given: int) -> None:
    """One ``--example-shape`` per positional input of the model's ``forward`` (or function),
    else an ``ImportUsageError`` naming its inputs (not torch's ``TypeError`` from the export)."""
    function = model.forward if isinstance(model, torch.nn.Module) else model
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # no signature to read (a builtin): torch.export says what it needs
        if given:
            return
        raise ImportUsageError(f"{target}: give one --example-shape per input of the model") from None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = next((f"*{p.name}" for p in params if p.kind == p.VAR_POSITIONAL), None)
    low, high = sum(p.default is p.empty for p in positional), None if varargs else len(positional)
    if given and low <= given and (high is None or given <= high):
        return
    name = "forward" if isinstance(model, torch.nn.Module) else getattr(model, "__name__", "the model")
    if high == 0:
        raise ImportUsageError(f"{target}: {name}() takes no inputs; tfexec imports a model through its inputs")
    inputs = [p.name if p.default is p.empty else f"{p.name}={p.default!r}" for p in positional] + ([varargs] if varargs else [])
    takes = f"{low}" if low == high else f"{low} or more" if high is None else f"{low} to {high}"
    raise ImportUsageError(
        f"{target}: {name}({', '.join(inputs)}) takes {takes} input(s), got {given} --example-shape; "
        "give one --example-shape per input, in order"
    )


def run_import(target: str, shapes: Sequence[str], out: str, name: str = "forward", seed: int = 0) -> str:
    """Import ``MODEL.py:FACTORY`` and save it at ``out``; returns a one-line summary."""
    model, examples, dynamic = load_model(target, shapes, seed)
    try:
        loaded = import_module(model, examples, dynamic, name=name)
    except ExamplesContradictAnnotations as exc:
        raise ImportUsageError(f"--example-shape: {exc}") from None
    path = loaded.save(out)
    fn = loaded.entry
    assert isinstance(fn, Function)
    params = ", ".join(f"{p.name}: {p.type}" for p in fn.params)
    return f"imported {fn.name}({params}) -> {fn.ret_type} with {len(loaded.module.constants)} constant(s); wrote {path}"


def run_against(
    target: str, shapes: Sequence[str], seed: int = 0, tolerances: "Mapping[DType, Tolerance] | None" = None
) -> TorchCheckReport:
    """``tfexec check MODEL.py:FACTORY --against torch``: import the model on its example
    inputs and compare every paired node with PyTorch's value (``check_against_torch``)."""
    model, examples, dynamic = load_model(target, shapes, seed)
    try:
        return check_against_torch(model, examples, dynamic, tolerances=tolerances)
    except ExamplesContradictAnnotations as exc:
        raise ImportUsageError(f"--example-shape: {exc}") from None
