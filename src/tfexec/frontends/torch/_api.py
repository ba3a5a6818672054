"""``import_module``: a PyTorch module or function, through ``torch.export``, as HIR.

The program is exported once (``torch.export.export``, ``strict=False``) and its graph is
translated as exported: that keeps the ops whose HIR value rules are the same torch
functions (``linear``, ``silu``, ``rms_norm``, ``scaled_dot_product_attention``…), so most
nodes compute exactly what torch computed. Only when the graph holds ops without a rule
is it decomposed (``run_decompositions``, keeping every op that has a rule) and translated
again; what is still unsupported is then reported, every node of it, in one error.
"""

import inspect
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import torch

from tfexec.frontends.torch._dims import spec_names, symbol_names
from tfexec.frontends.torch._provenance import whole_stacks
from tfexec.frontends.torch._registry import RULES
from tfexec.frontends.torch._report import Problem, TorchImportError, report
from tfexec.frontends.torch._translate import GraphTranslator
from tfexec.ir.module import IRModule
from tfexec.loading import LoadedModule, save_module

DynamicShapes: TypeAlias = Mapping[str, object] | Sequence[object] | None
"""``torch.export``'s ``dynamic_shapes``: per input, ``None``, ``{axis: Dim}`` or ``[Dim | None, …]``,
by position or (a mapping) by parameter name."""
Program: TypeAlias = torch.nn.Module | Callable[..., torch.Tensor | tuple[torch.Tensor, ...]]
"""What can be imported: an ``nn.Module``, or a function of tensors returning tensors."""


@dataclass(frozen=True)
class TorchProgram:
    """An imported program: its ``IRModule`` (entry ``forward`` by default) and its weights
    (``state_dict`` names to the module's own tensors, not copies)."""

    module: IRModule
    weights: Mapping[str, torch.Tensor]


class ImportedModule(LoadedModule):
    """The ``LoadedModule`` ``import_module`` returns: its reading is the imported weights,
    kept here so the module can be saved."""

    weights: Mapping[str, torch.Tensor]

    def save(self, path: "str | os.PathLike[str]") -> Path:
        """``save_module(self.module, self.weights, path)``."""
        return save_module(self.module, self.weights, path)


class _FunctionModule(torch.nn.Module):
    """A plain function as the ``nn.Module`` ``torch.export`` needs."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: torch.Tensor) -> Any:
        return self.fn(*args)


def import_module(
    module_or_fn: Program,
    example_inputs: torch.Tensor | Sequence[torch.Tensor],
    dynamic_shapes: DynamicShapes = None,
    *,
    name: str = "forward",
    decompose: bool | None = None,
) -> ImportedModule:
    """Import a PyTorch module or function as a loaded HIR module.

    ``example_inputs`` are positional tensors ``forward`` is traced with; ``dynamic_shapes``
    marks symbolic sizes with ``torch.export.Dim`` (``{"x": {0: Dim("B"), 1: Dim("S")}}``),
    which become ``DimVar``s of the same names. Parameters and buffers become module
    constants under their ``state_dict`` names, read from the module's tensors; the result
    evaluates with ``tfexec.evaluate`` and saves with ``.save(path)`` (or ``save_module``).
    Call ``module.eval()`` first: dropout in training mode is refused.

    ``decompose``: None (default) decomposes only if some op has no rule; True always runs
    ``run_decompositions`` (keeping the ops with rules); False never does.
    Raises ``TorchImportError`` when torch.export fails or ops remain untranslatable.
    """
    program = import_program(module_or_fn, example_inputs, dynamic_shapes, name=name, decompose=decompose)
    loaded = ImportedModule.from_reading(program.module, program.weights)
    assert isinstance(loaded, ImportedModule)
    loaded.weights = program.weights
    return loaded


def import_program(
    module_or_fn: Program,
    example_inputs: torch.Tensor | Sequence[torch.Tensor],
    dynamic_shapes: DynamicShapes = None,
    *,
    name: str = "forward",
    decompose: bool | None = None,
) -> TorchProgram:
    """``import_module`` without binding: the ``IRModule`` and the weights mapping."""
    inputs = _inputs(example_inputs)
    if not name.isidentifier():
        raise TorchImportError(f"the function name {name!r} is not an identifier")
    module, arg_names, param_names, spec = _as_module(module_or_fn, len(inputs), dynamic_shapes)
    exported = _export(module, inputs, spec)
    names = spec_names(arg_names, len(inputs), dynamic_shapes)
    if decompose:
        exported = _decompose(exported)
    result, problems = _translate(exported, names, name, param_names)
    before: list[Problem] = []
    if result is None and decompose is None and any(p.reason is None for p in problems):
        before = problems
        exported = _decompose(exported)
        result, problems = _translate(exported, names, name, param_names)
    if result is None:
        raise TorchImportError(report(problems, before))
    ir_module, weights = result
    return TorchProgram(ir_module, weights)


def _inputs(example_inputs: object) -> tuple[torch.Tensor, ...]:
    items = (example_inputs,) if isinstance(example_inputs, torch.Tensor) else example_inputs
    if not isinstance(items, (list, tuple)):
        raise TorchImportError(f"example_inputs must be a tensor or a sequence of tensors, got {type(items).__name__}")
    for i, x in enumerate(items):
        if not isinstance(x, torch.Tensor):
            raise TorchImportError(f"example input {i} is {type(x).__name__}, not a tensor (HIR parameters are tensors)")
    return tuple(items)


def _as_module(
    module_or_fn: object, count: int, dynamic_shapes: DynamicShapes
) -> tuple[torch.nn.Module, list[str], list[str] | None, Any]:
    """The module to export, its forward's parameter names, the names to give the HIR
    parameters (a function's own), and the spec in the form torch wants for it."""
    if isinstance(module_or_fn, torch.nn.Module):
        return module_or_fn, _positional_names(module_or_fn.forward), None, dynamic_shapes
    if not callable(module_or_fn):
        raise TorchImportError(f"expected an nn.Module or a function, got {type(module_or_fn).__name__}")
    names = _positional_names(module_or_fn)
    spec: Any = dynamic_shapes
    if isinstance(dynamic_shapes, Mapping):  # the wrapper's forward takes *args: specs by position
        spec = (tuple(dynamic_shapes.get(n) for n in names[:count]),)
    elif dynamic_shapes is not None:
        spec = (tuple(dynamic_shapes),)
    usable = names[:count] if len(names) >= count and all(n.isidentifier() for n in names[:count]) else None
    return _FunctionModule(module_or_fn), names, usable, spec


def _positional_names(fn: Callable[..., Any]) -> list[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _export(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], spec: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            with whole_stacks():
                return torch.export.export(module, inputs, dynamic_shapes=spec, strict=False)
        except Exception as exc:  # torch.export raises many kinds; each is a refusal of the program
            raise TorchImportError(f"torch.export could not export the program: {_first_lines(exc)}") from exc


def _decompose(exported: Any) -> Any:
    """Decompose to core ATen, keeping every op that has a translation rule."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        table = torch.export.default_decompositions()
        for op in RULES:
            if op in table:
                del table[op]
        try:
            with whole_stacks():
                return exported.run_decompositions(table)
        except Exception as exc:  # as above: a failed decomposition refuses the program
            raise TorchImportError(f"torch.export could not decompose the program: {_first_lines(exc)}") from exc


def _translate(
    exported: Any, names: list[dict[int, str]], name: str, param_names: list[str] | None
) -> tuple[tuple[IRModule, dict[str, torch.Tensor]] | None, list[Problem]]:
    """Translate ``exported``; its symbols are named after the user's Dims (``names``)."""
    inputs = _user_input_names(exported)
    user = [node for node in exported.graph.nodes if node.op == "placeholder" and node.name in inputs]
    shapes = [tuple(getattr(node.meta.get("val"), "shape", ())) for node in user]
    symbols = symbol_names(shapes, names)
    translator = GraphTranslator(exported, symbols, name, param_names)
    return translator.translate(), translator.problems


def _user_input_names(exported: Any) -> set[str]:
    return {
        spec.arg.name for spec in exported.graph_signature.input_specs
        if getattr(spec.kind, "name", None) == "USER_INPUT" and hasattr(spec.arg, "name")
    }


def _first_lines(exc: BaseException, limit: int = 6) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    text = "\n".join(lines[:limit]) + ("\n..." if len(lines) > limit else "")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
