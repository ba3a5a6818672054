"""``import_module``: a PyTorch module or function, through ``torch.export``, as HIR.

The program is exported once (``torch.export.export``, ``strict=False``) and its graph is
translated as exported: that keeps the ops whose HIR value rules are the same torch
functions (``linear``, ``silu``, ``rms_norm``, ``scaled_dot_product_attention``…), so most
nodes compute exactly what torch computed. Only when the graph holds ops without a rule
is it decomposed (``run_decompositions``, keeping every op that has a rule) and translated
again; what is still unsupported is then reported, every node of it, in one error.

A graph that writes in place (``k[..., :n].copy_(x)``, ``out[:, t] = y``) is functionalized
first, whatever ``decompose`` says: torch rewrites each write into a view as a functional op
on its base (``_mutation``), keeping every other op as it is, and a write still left is refused.
"""

import contextlib
import functools
import inspect
import io
import os
import re
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeAlias

import torch

from tfexec.frontends.torch._custom_ops import decompositions
from tfexec.frontends.torch._dims import spec_names, symbol_names
from tfexec.frontends.torch._mutation import mutating_nodes
from tfexec.frontends.torch._provenance import whole_stacks
from tfexec.frontends.torch._refusals import data_dependent_export
from tfexec.frontends.torch._registry import RULES
from tfexec.frontends.torch._report import Problem, TorchImportError, report
from tfexec.frontends.torch._translate import GraphTranslator
from tfexec.ir.expr import Expr
from tfexec.ir.module import IRModule
from tfexec.loading import LoadedModule, save_module
from tfexec.frontends.torch._jaxtyping import annotated_shapes, without_specialised
from tfexec.frontends.torch._export_noise import data_dependent_branch
from tfexec.wording import a

DynamicShapes: TypeAlias = Mapping[str, object] | Sequence[object] | None
"""``torch.export``'s ``dynamic_shapes``: per input, ``None``, ``{axis: Dim}`` or ``[Dim | None, …]``,
by position or (a mapping) by parameter name."""
Program: TypeAlias = torch.nn.Module | Callable[..., torch.Tensor | tuple[torch.Tensor, ...]]
"""What can be imported: an ``nn.Module``, or a function of tensors returning tensors."""


@dataclass(frozen=True)
class TorchProgram:
    """An imported program: its ``IRModule`` (entry ``forward`` by default) and its weights
    (``state_dict`` names to the module's own tensors, not copies); ``exported``, the
    ``torch.export`` program it was translated from (decomposed, if it was), and
    ``node_values``, for each of its FX nodes by name, the HIR node that is that node's value
    (what ``check_against_torch`` pairs)."""

    module: IRModule
    weights: Mapping[str, torch.Tensor]
    exported: torch.export.ExportedProgram | None = None
    node_values: Mapping[str, Expr] = field(default_factory=dict)


class ImportedModule(LoadedModule):
    """The ``LoadedModule`` ``import_module`` returns: its reading is the imported weights,
    kept here so the module can be saved, with the exported program and the FX node → HIR
    node record of ``TorchProgram`` (``check_imported_against_torch`` reads them)."""

    weights: Mapping[str, torch.Tensor]
    exported: torch.export.ExportedProgram | None = None
    node_values: Mapping[str, Expr] = MappingProxyType({})

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


class _Bound(torch.nn.Module):
    """A module whose ``forward`` gets fixed keyword arguments (``use_cache=False``): its
    weights are named ``inner.<state_dict name>``, a prefix the import strips."""

    PREFIX = "inner."

    def __init__(self, inner: torch.nn.Module, kwargs: Mapping[str, object]) -> None:
        super().__init__()
        self.inner = inner
        self.kwargs = dict(kwargs)

    def forward(self, *args: torch.Tensor) -> Any:
        return self.inner(*args, **self.kwargs)


def import_module(
    module_or_fn: Program,
    example_inputs: torch.Tensor | Sequence[torch.Tensor],
    dynamic_shapes: DynamicShapes = None,
    *,
    kwargs: Mapping[str, object] | None = None,
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

    ``kwargs``: keyword arguments of ``forward`` that are not tensors (flags such as
    ``use_cache=False`` or ``return_dict=False``), fixed at import: the program computes what
    ``forward`` computes with them. Tensors are always positional ``example_inputs``.
    ``decompose``: None (default) decomposes only if some op has no rule; True always runs
    ``run_decompositions`` (keeping the ops with rules); False never does. A program that
    writes in place is functionalized in every case (ops kept, writes made functional).
    Raises ``TorchImportError`` when torch.export fails or ops remain untranslatable; an
    input or output that is not a tensor (a cache object) is refused with what to pass.
    """
    program = import_program(module_or_fn, example_inputs, dynamic_shapes, kwargs=kwargs, name=name, decompose=decompose)
    loaded = ImportedModule.from_reading(program.module, program.weights)
    assert isinstance(loaded, ImportedModule)
    loaded.weights = program.weights
    loaded.exported = program.exported
    loaded.node_values = program.node_values
    return loaded


def import_program(
    module_or_fn: Program,
    example_inputs: torch.Tensor | Sequence[torch.Tensor],
    dynamic_shapes: DynamicShapes = None,
    *,
    kwargs: Mapping[str, object] | None = None,
    name: str = "forward",
    decompose: bool | None = None,
) -> TorchProgram:
    """``import_module`` without binding: the ``IRModule`` and the weights mapping."""
    if not name.isidentifier():
        raise TorchImportError(f"the function name {name!r} is not an identifier")
    fixed = _keyword_arguments(kwargs)
    inputs = _inputs(example_inputs, _forward_names(module_or_fn))
    if dynamic_shapes is None:  # forward's jaxtyping annotations name the dynamic axes (_jaxtyping)
        dynamic_shapes = annotated_shapes(module_or_fn, inputs)
    module, arg_names, param_names, spec = _as_module(module_or_fn, len(inputs), dynamic_shapes, fixed)
    prefix = _Bound.PREFIX if isinstance(module, _Bound) else ""
    exported = _export(module, inputs, spec)
    names = spec_names(arg_names, len(inputs), dynamic_shapes)
    if decompose:
        exported = _decompose(exported)
    elif next(mutating_nodes(exported.graph), None) is not None:
        exported = _functionalize(exported)
    result, problems = _translate(exported, names, name, param_names, prefix)
    before: list[Problem] = []
    if result is None and decompose is None and any(p.reason is None for p in problems):
        before = problems
        exported = _decompose(exported)
        result, problems = _translate(exported, names, name, param_names, prefix)
    if result is None:
        raise TorchImportError(report(problems, before))
    (ir_module, weights), values = result
    return TorchProgram(ir_module, weights, exported, values)


def _inputs(example_inputs: object, names: list[str]) -> tuple[torch.Tensor, ...]:
    items = (example_inputs,) if isinstance(example_inputs, torch.Tensor) else example_inputs
    if not isinstance(items, (list, tuple)):
        raise TorchImportError(f"example_inputs must be a tensor or a sequence of tensors, got {type(items).__name__}")
    for i, x in enumerate(items):
        if not isinstance(x, torch.Tensor):
            param = f" ({names[i]})" if i < len(names) else ""
            keyword = names[i] if i < len(names) else "name"
            raise TorchImportError(
                f"example input {i}{param} is {type(x).__name__}, not a tensor (HIR parameters are tensors): pass a"
                f" tensor, or leave it out of example_inputs and give a non-tensor argument as"
                f" kwargs={{{keyword!r}: ...}}, fixed at import"
            )
    return tuple(items)


def _keyword_arguments(kwargs: object) -> dict[str, object]:
    if kwargs is None:
        return {}
    if not isinstance(kwargs, Mapping) or not all(isinstance(k, str) and k.isidentifier() for k in kwargs):
        raise TorchImportError(f"kwargs must map forward's keyword names to values, got {kwargs!r:.80}")
    for key, value in kwargs.items():
        if isinstance(value, torch.Tensor):
            raise TorchImportError(
                f"kwargs[{key!r}] is a tensor: tensors are HIR parameters, pass them positionally in example_inputs"
                " (in forward's order); kwargs are for fixed non-tensor arguments such as use_cache=False"
            )
    return dict(kwargs)


def _forward_names(module_or_fn: object) -> list[str]:
    if isinstance(module_or_fn, torch.nn.Module):
        return _positional_names(module_or_fn.forward)
    return _positional_names(module_or_fn) if callable(module_or_fn) else []


def _as_module(
    module_or_fn: object, count: int, dynamic_shapes: DynamicShapes, kwargs: Mapping[str, object]
) -> tuple[torch.nn.Module, list[str], list[str] | None, Any]:
    """The module to export, its forward's parameter names, the names to give the HIR
    parameters (a function's own, or a bound module's forward's), and the spec in the form
    torch wants for it."""
    if isinstance(module_or_fn, torch.nn.Module) and not kwargs:
        return module_or_fn, _positional_names(module_or_fn.forward), None, dynamic_shapes
    if not callable(module_or_fn):
        raise TorchImportError(f"expected an nn.Module or a function, got {type(module_or_fn).__name__}")
    names = _forward_names(module_or_fn)
    spec: Any = dynamic_shapes
    if isinstance(dynamic_shapes, Mapping):  # the wrapper's forward takes *args: specs by position
        spec = (tuple(dynamic_shapes.get(n) for n in names[:count]),)
    elif dynamic_shapes is not None:
        spec = (tuple(dynamic_shapes),)
    usable = names[:count] if len(names) >= count and all(n.isidentifier() for n in names[:count]) else None
    if isinstance(module_or_fn, torch.nn.Module):
        return _Bound(module_or_fn, kwargs), names, usable, spec
    fn = functools.partial(module_or_fn, **kwargs) if kwargs else module_or_fn
    return _FunctionModule(fn), names, usable, spec


def _positional_names(fn: Callable[..., Any]) -> list[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _export(module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], spec: Any) -> Any:
    """``torch.export.export``, non-strict; a failure is a ``TorchImportError``. torch prints
    the partial graph of a failed export to stderr: that dump is dropped (the error names the
    line), anything else torch writes there is passed on."""
    captured = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            with whole_stacks(), contextlib.redirect_stderr(captured):
                return torch.export.export(module, inputs, dynamic_shapes=spec, strict=False)
        except Exception as exc:  # torch.export raises many kinds; each is a refusal of the program
            partial = getattr(exc, "partial_fx_graph", None)
            if isinstance(partial, str):
                captured = io.StringIO(captured.getvalue().replace(partial + "\n", ""))
            refined = without_specialised(exc, spec)  # an annotated dim the model fixes: static, once more
            if refined is not None:
                return _export(module, inputs, refined)
            raise TorchImportError(_export_failure(exc)) from exc
        finally:
            sys.stderr.write(captured.getvalue())


_NOT_A_TENSOR = re.compile(r"Found <class '(?P<cls>[\w.]+)'> in output, which is not a known type")


def _export_failure(exc: BaseException) -> str:
    """What to tell a user whose program torch.export refused: for an output that is not a
    tensor (a cache object), what to pass instead; for a data-dependent value, the line."""
    branch = data_dependent_branch(exc)
    if branch is not None:
        return f"torch.export could not export the program: {branch}"
    data_dependent = data_dependent_export(exc)
    if data_dependent is not None:
        return data_dependent
    found = _NOT_A_TENSOR.search(str(exc))
    if found is None:
        return f"torch.export could not export the program: {_first_lines(exc)}"
    cls = found["cls"]
    hint = " (a key/value cache: pass kwargs={'use_cache': False})" if "cache" in cls.lower() else ""
    return (
        f"the program returns {a(cls)}, which is not a tensor{hint}: HIR programs return tensors (or tuples,"
        " lists and dicts of them); pass the keyword arguments that make forward return tensors in kwargs, or"
        " import a module whose forward returns only the tensors you need"
    )


def _decompose(exported: Any) -> Any:
    """Decompose to core ATen, keeping every op that has a translation rule (functionalizing
    too: every in-place write becomes a functional op), and every custom op torch can
    decompose (``_custom_ops``)."""
    table = torch.export.default_decompositions()
    for op in RULES:
        if op in table:
            del table[op]
    for op, decomposition in decompositions(exported.graph).items():
        table[op] = decomposition
    return _run_decompositions(exported, table, "decompose")


def _functionalize(exported: Any) -> Any:
    """The same program with every in-place write functional and every op kept: torch's
    ``run_decompositions`` with an empty table functionalizes and decomposes nothing."""
    return _run_decompositions(exported, {}, "functionalize")


def _run_decompositions(exported: Any, table: Any, verb: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            with whole_stacks():
                return exported.run_decompositions(table)
        except Exception as exc:  # as above: a failed decomposition refuses the program
            raise TorchImportError(f"torch.export could not {verb} the program: {_first_lines(exc)}") from exc


def _translate(
    exported: Any, names: list[dict[int, str]], name: str, param_names: list[str] | None, prefix: str
) -> tuple[tuple[tuple[IRModule, dict[str, torch.Tensor]], dict[str, Expr]] | None, list[Problem]]:
    """Translate ``exported``; its symbols are named after the user's Dims (``names``). With
    the module and weights comes the translator's FX node → HIR node record."""
    inputs = _user_input_names(exported)
    user = [node for node in exported.graph.nodes if node.op == "placeholder" and node.name in inputs]
    shapes = [tuple(getattr(node.meta.get("val"), "shape", ())) for node in user]
    symbols = symbol_names(shapes, names)
    translator = GraphTranslator(exported, symbols, name, param_names, prefix)
    result = translator.translate()
    return (None if result is None else (result, translator.node_values())), translator.problems


def _user_input_names(exported: Any) -> set[str]:
    return {
        spec.arg.name for spec in exported.graph_signature.input_specs
        if getattr(spec.kind, "name", None) == "USER_INPUT" and hasattr(spec.arg, "name")
    }


def _first_lines(exc: BaseException, limit: int = 6) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    text = "\n".join(lines[:limit]) + ("\n..." if len(lines) > limit else "")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
