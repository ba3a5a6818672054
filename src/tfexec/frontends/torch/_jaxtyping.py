"""The jaxtyping bridge: the dim names a model's ``forward`` already carries
(``x: Float[Tensor, "batch seq d_model"]``) become the HIR dims of the import, and an imported
program's types are spelled back as jaxtyping annotations.

Import: each named axis becomes a ``torch.export.Dim`` of that name (one ``Dim`` per name, so
one name is one size), an integer must be the example's size, ``_`` (or ``_name``) leaves the
axis static. An axis that torch.export specialises to a constant (``d_model`` read by a
``Linear(64, 64)``) is made static and the import retried once, so the HIR reads
``f32[batch, seq, 64]``. A dim string is only split and read as names and integers: it is
never evaluated, and anything else (``*batch``, ``...``, ``seq+1``, ``#n``) is refused by name.
An annotation that is a string (``from __future__ import annotations``) is parsed, never
evaluated: ``Kind[Tensor, "dims"]`` whose ``Kind`` the module binds to a jaxtyping kind.

Spelling: ``jaxtyping_annotations(program)`` gives ``"Float[Tensor, 'batch seq 64']"`` per
parameter and for the result, and ``jaxtyping_types`` the jaxtyping types themselves, for
checking one's own wrappers with ``jaxtyped``.
"""

import ast
import inspect
import re
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from tfexec.frontends.torch._report import TorchImportError
from tfexec.ir.dims import DimVar
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Function
from tfexec.ir.types import TensorType, TupleType, Type

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FIX = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*) = (\d+)\s*$")
_TAG = "_tfexec_from_jaxtyping"
"""Set on each ``Dim`` made from an annotation: only those are made static on torch's say-so."""


class AnnotationError(TorchImportError):
    """A jaxtyping annotation tfexec cannot read, or one the example inputs contradict."""


class ExamplesContradictAnnotations(AnnotationError):
    """The example inputs disagree with readable annotations (a size, a rank, a dtype, one name
    at two sizes): the examples are wrong, so the command line exits 2, not 1."""


def annotated_shapes(module_or_fn: object, inputs: Sequence[torch.Tensor]) -> dict[str, dict[int, Any]] | None:
    """The ``dynamic_shapes`` spec the jaxtyping annotations of ``forward``'s positional
    parameters give for ``inputs`` (by parameter name), or None when none is annotated."""
    fn = module_or_fn.forward if isinstance(module_or_fn, torch.nn.Module) else module_or_fn
    if not callable(fn):
        return None
    try:
        params = [p for p in inspect.signature(fn).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return None
    dims: dict[str, Any] = {}
    seen: dict[str, tuple[int, str]] = {}
    spec: dict[str, dict[int, Any]] = {}
    for param, example in zip(params, inputs):
        annotation: Any = _resolved(param.annotation, fn)
        if not _is_jaxtyping(annotation):
            continue
        axes = _axes(param.name, annotation, example)
        for axis, name in axes.items():
            where = f"{param.name} axis {axis} ({annotation.dim_str!r})"
            size = int(example.shape[axis])
            if name in seen and seen[name][0] != size:
                first_size, first_where = seen[name]
                raise ExamplesContradictAnnotations(
                    f"dim {name} is {first_size} at {first_where} but {size} at {where} in the example inputs: "
                    "one name is one size; give examples that agree, or name the axes differently"
                )
            if size < 2:
                raise ExamplesContradictAnnotations(
                    f"dim {name} is {size} at {where} in the example inputs: torch.export makes sizes 0 and 1 "
                    f"constants, so give an example with {name} at least 2 (or annotate the axis _ to keep it static)"
                )
            seen.setdefault(name, (size, where))
            if name not in dims:
                dims[name] = torch.export.Dim(name)
                setattr(dims[name], _TAG, True)
            spec.setdefault(param.name, {})[axis] = dims[name]
    return spec or None


def _resolved(annotation: object, fn: object) -> object:
    """A string annotation (``from __future__ import annotations``) of the form
    ``Kind[Tensor, "dims"]`` as the jaxtyping type it names, read without evaluating it: the
    text is parsed (``ast``), ``Kind`` looked up in the function's globals, and kept only when it
    is a jaxtyping kind; anything else stays the string it is (and is not read)."""
    if not isinstance(annotation, str):
        return annotation
    try:
        tree = ast.parse(annotation, mode="eval").body
    except SyntaxError:
        return annotation
    if not (isinstance(tree, ast.Subscript) and isinstance(tree.value, ast.Name) and isinstance(tree.slice, ast.Tuple)
            and len(tree.slice.elts) == 2 and isinstance(tree.slice.elts[1], ast.Constant)
            and isinstance(tree.slice.elts[1].value, str)):
        return annotation
    kind = getattr(fn, "__globals__", {}).get(tree.value.id)
    from jaxtyping import AbstractDtype

    if not (isinstance(kind, type) and issubclass(kind, AbstractDtype)):
        return annotation
    return kind[torch.Tensor, tree.slice.elts[1].value]


def _is_jaxtyping(annotation: object) -> bool:
    from jaxtyping import AbstractArray

    return isinstance(annotation, type) and issubclass(annotation, AbstractArray) and hasattr(annotation, "dim_str")


def _axes(param: str, annotation: Any, example: torch.Tensor) -> dict[int, str]:
    """``axis -> name`` of one annotated parameter; integers checked against the example."""
    text = str(annotation.dim_str)
    tokens = text.split()
    shown = f"{param}: {annotation.__name__}"
    dtypes = tuple(getattr(annotation, "dtypes", ()))
    dtype = str(example.dtype).removeprefix("torch.")
    if dtypes and dtype not in dtypes:
        raise ExamplesContradictAnnotations(f"{shown} does not admit the example input's dtype {dtype}")
    for token in tokens:
        if token.startswith("*") or token == "...":
            raise AnnotationError(
                f"{shown}: {token!r} stands for any number of axes; tfexec needs one name or size per axis "
                "(write them out, e.g. 'batch seq d_model')"
            )
        if not (token.isdigit() or _NAME.fullmatch(token)):
            raise AnnotationError(
                f"{shown}: {token!r} is not a plain dim name or size; tfexec reads only names and integers in a jaxtyping "
                "shape and never evaluates an expression (name the axis, give its size, or write _ to leave it static)"
            )
    if len(tokens) != example.dim():
        raise ExamplesContradictAnnotations(
            f"{shown} names {len(tokens)} axis(es) but the example input has {example.dim()} (shape {list(example.shape)})"
        )
    out: dict[int, str] = {}
    for axis, token in enumerate(tokens):
        if token.isdigit():
            if int(token) != example.shape[axis]:
                raise ExamplesContradictAnnotations(
                    f"{shown}: axis {axis} is {token} in the annotation but {example.shape[axis]} in the example input "
                    f"(shape {list(example.shape)})"
                )
        elif not token.startswith("_"):
            out[axis] = token
    return out


def without_specialised(exc: BaseException, spec: Any) -> Any | None:
    """``spec`` with the annotation dims torch.export specialised made static (its "Suggested
    fixes: d_model = 64"), or None when the failure is anything else or names a dim that no
    annotation made (the user's own ``Dim``s are the user's to fix)."""
    text = str(exc)
    if "Suggested fixes:" not in text:
        return None
    fixes = [m.group(1) for line in text.split("Suggested fixes:", 1)[1].splitlines() if (m := _FIX.match(line))]
    if not fixes:
        return None
    ours = {getattr(d, "__name__", None) for d in _dims_in(spec) if getattr(d, _TAG, False)}
    if not set(fixes) <= ours:
        return None
    return _drop(spec, set(fixes))


def _dims_in(spec: Any) -> list[Any]:
    if isinstance(spec, Mapping):
        return [d for v in spec.values() for d in _dims_in(v)]
    if isinstance(spec, (list, tuple)):
        return [d for v in spec for d in _dims_in(v)]
    return [spec] if spec is not None else []


def _drop(spec: Any, names: set[str]) -> Any:
    if isinstance(spec, Mapping):
        kept = {k: _drop(v, names) for k, v in spec.items()}
        return {k: v for k, v in kept.items() if v is not None}
    if isinstance(spec, (list, tuple)):
        return type(spec)(_drop(v, names) for v in spec)
    return None if getattr(spec, "__name__", None) in names and getattr(spec, _TAG, False) else spec


# -- spelling an imported program's types as jaxtyping annotations -----------------------------

_KINDS = {
    DType.float16: "Float", DType.bfloat16: "Float", DType.float32: "Float", DType.float64: "Float",
    DType.int8: "Int", DType.int16: "Int", DType.int32: "Int", DType.int64: "Int", DType.uint8: "UInt", DType.bool: "Bool",
}


def jaxtyping_annotation(t: Type) -> str:
    """``f32[batch, seq, 64]`` as ``"Float[Tensor, 'batch seq 64']"``; an axis whose size is an
    expression (``N * 2``) is spelled ``_`` (jaxtyping does not check it); a tuple is refused."""
    if isinstance(t, TupleType):
        raise TypeError(f"{t} is a tuple; jaxtyping annotates one tensor at a time (annotate each field)")
    return f"{_KINDS[t.dtype]}[Tensor, '{_dims(t)}']"


def _dims(t: TensorType) -> str:
    return " ".join(d.name if isinstance(d, DimVar) else str(d) if isinstance(d, int) else "_" for d in t.shape)


def jaxtyping_annotations(program: object) -> dict[str, str]:
    """Each parameter's annotation, and ``"return"``'s when the result is one tensor, of an
    imported program (an ``ImportedModule``, a ``LoadedModule`` or a ``Function``)."""
    fn = _function(program)
    out = {p.name: jaxtyping_annotation(p.type) for p in fn.params}
    if isinstance(fn.ret_type, TensorType):
        out["return"] = jaxtyping_annotation(fn.ret_type)
    return out


def jaxtyping_types(program: object) -> dict[str, type]:
    """``jaxtyping_annotations`` as the jaxtyping types themselves (``Float[torch.Tensor,
    'batch seq 64']``), ready for a function's ``__annotations__`` under ``jaxtyped``."""
    import jaxtyping

    fn = _function(program)
    typed = [(p.name, p.type) for p in fn.params]
    if isinstance(fn.ret_type, TensorType):
        typed.append(("return", fn.ret_type))
    out: dict[str, type] = {}
    for name, t in typed:
        if not isinstance(t, TensorType):
            raise TypeError(f"{name}: {t} is a tuple; jaxtyping annotates one tensor at a time")
        kind = getattr(jaxtyping, _KINDS[t.dtype])
        out[name] = kind[torch.Tensor, _dims(t)]
    return out


def _function(program: object) -> Function:
    if isinstance(program, Function):
        return program
    entry = getattr(program, "entry", None)
    if isinstance(entry, Function):
        return entry
    raise TypeError(f"expected an imported module or a Function, got {type(program).__name__}")


__all__ = [
    "AnnotationError", "annotated_shapes", "jaxtyping_annotation", "jaxtyping_annotations", "jaxtyping_types",
    "without_specialised",
]
