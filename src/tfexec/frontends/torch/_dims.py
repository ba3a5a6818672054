"""Symbolic sizes: torch.export's SymInts (sympy expressions) as HIR ``ShapeDim``s.

torch.export names the symbolic sizes of a program ``s0``, ``s77``…; a ``torch.export.Dim``
the user named (``Dim("S")``) is found by walking the ``dynamic_shapes`` spec beside the
example inputs, and its symbol becomes ``DimVar("S")``. A symbol no named ``Dim`` reaches
keeps torch's name.

Sympy is read by duck typing (``is_Integer``, ``func.__name__``, ``args``) so that this
module needs no sympy import and no sympy types.
"""

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from tfexec.ir.dims import (
    DimError,
    DimVar,
    ShapeDim,
    dim_expr,
    dim_vars,
    resolve_dim,
)


class UnsupportedSize(Exception):
    """A symbolic size that HIR dims cannot spell (the message names it)."""


def sym_dim(value: object, names: Mapping[str, str]) -> ShapeDim:
    """A size from a FakeTensor's shape (an ``int`` or a ``torch.SymInt``) as a ``ShapeDim``."""
    if isinstance(value, bool):
        raise UnsupportedSize(f"a bool {value!r} where a size belongs")
    if isinstance(value, int):
        return value
    if isinstance(value, torch.SymInt):
        return expr_dim(value.node.expr, names)
    raise UnsupportedSize(f"{type(value).__name__} {value!r} where a size belongs")


def expr_dim(expr: Any, names: Mapping[str, str]) -> ShapeDim:
    """A sympy expression over torch's size symbols as a ``ShapeDim``."""
    if getattr(expr, "is_Integer", False):
        return int(expr)
    if getattr(expr, "is_Symbol", False):
        name = str(expr)
        return DimVar(names.get(name, name))
    kind = type(expr).__name__
    args = tuple(getattr(expr, "args", ()))
    if kind == "Add":
        terms = sorted(args, key=lambda a: bool(getattr(a, "is_Number", False)))  # the constant last: S + 1
        out: ShapeDim | None = None
        for term in terms:
            negated = _negated(term)
            if negated is not None and out is not None:
                out = dim_expr("sub", out, expr_dim(negated, names))
            else:
                d = expr_dim(term, names)
                out = d if out is None else dim_expr("add", out, d)
        assert out is not None
        return out
    if kind == "Mul":
        out = 1
        for factor in args:
            out = dim_expr("mul", out, expr_dim(factor, names))
        return out
    if kind in ("FloorDiv", "CleanDiv") and len(args) == 2:
        return dim_expr("floordiv", expr_dim(args[0], names), expr_dim(args[1], names))
    if kind in ("Mod", "PythonMod") and len(args) == 2:
        return dim_expr("mod", expr_dim(args[0], names), expr_dim(args[1], names))
    if kind in ("Max", "Min") and args:
        op = "max" if kind == "Max" else "min"
        out = expr_dim(args[0], names)
        for arg in args[1:]:
            out = dim_expr(op, out, expr_dim(arg, names))
        return out
    if kind == "Pow" and len(args) == 2 and getattr(args[1], "is_Integer", False) and int(args[1]) >= 1:
        base = expr_dim(args[0], names)
        out = base
        for _ in range(int(args[1]) - 1):
            out = dim_expr("mul", out, base)
        return out
    raise UnsupportedSize(f"the symbolic size {expr} ({kind}) has no HIR spelling")


def _negated(term: Any) -> Any | None:
    """``-term`` when ``term`` is a negative integer or a product with a negative coefficient."""
    if getattr(term, "is_Integer", False) and int(term) < 0:
        return -term
    if type(term).__name__ == "Mul" and term.args and getattr(term.args[0], "is_Integer", False) and int(term.args[0]) < 0:
        return -term
    return None


_PROBES = ((7, 3, 5, 11), (13, 17, 2, 29), (31, 23, 19, 41), (4, 9, 37, 6))


def same_dim(a: ShapeDim, b: ShapeDim) -> bool:
    """Whether two dims are the same size for every binding (structurally, or at several
    probe bindings of their ``DimVar``s — enough for the sums and products shapes hold)."""
    if a == b:
        return True
    names = sorted(dim_vars(a) | dim_vars(b))
    if not names:
        return False  # two different static sizes
    for probe in _PROBES:
        bindings = {n: probe[i % len(probe)] + 8 * (i // len(probe)) for i, n in enumerate(names)}
        try:
            if resolve_dim(a, bindings) != resolve_dim(b, bindings):
                return False
        except DimError:
            return False
    return True


# -- naming symbols after the user's torch.export.Dim ---------------------------------------


def spec_names(
    arg_names: Sequence[str], count: int, dynamic_shapes: "Mapping[str, object] | Sequence[object] | None"
) -> list[dict[int, str]]:
    """For each of ``count`` positional tensor inputs, ``axis -> Dim name`` from the spec.

    A spec is what ``torch.export`` takes: per input (by position, or by parameter name in a
    mapping) ``None``, a mapping ``axis -> Dim``, or a sequence of ``Dim``/``None``. A derived
    dim (``2 * S``) gives its root's name; hints (``Dim.AUTO``) name nothing.
    """
    out: list[dict[int, str]] = [{} for _ in range(count)]
    if dynamic_shapes is None:
        return out
    per_input: list[object] = [None] * count
    if isinstance(dynamic_shapes, Mapping):
        for i, name in enumerate(arg_names[:count]):
            per_input[i] = dynamic_shapes.get(name)
    else:
        for i, spec in enumerate(list(dynamic_shapes)[:count]):
            per_input[i] = spec
    for i, spec in enumerate(per_input):
        items: list[tuple[object, object]] = []
        if isinstance(spec, Mapping):
            items = list(spec.items())
        elif isinstance(spec, (list, tuple)):
            items = list(enumerate(spec))
        for axis, dim in items:
            dname = dim_name(dim)
            if isinstance(axis, int) and dname is not None:
                out[i][axis] = dname
    return out


def dim_name(dim: object) -> str | None:
    """The name of a ``torch.export.Dim``: its own, or its root's for a derived dim
    (``2 * S`` names ``S``); None for a hint (``Dim.AUTO``) or anything else."""
    root = getattr(dim, "root", None)
    if root is not None:
        dim = root
    if not isinstance(dim, torch.export.Dim):
        return None
    name = getattr(dim, "__name__", None)
    return name if isinstance(name, str) and name.isidentifier() else None


def symbol_names(shapes: Sequence[Sequence[object]], names: Sequence[Mapping[int, str]]) -> dict[str, str]:
    """torch's symbol name -> the user's Dim name, from the user inputs' (fake) shapes: an
    axis of size ``s0`` named ``S`` names ``s0``; so does one of size ``2*s0`` whose Dim is
    derived from ``S`` (an axis's expression with one symbol names that symbol)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for shape, axes in zip(shapes, names):
        for axis, name in axes.items():
            if not 0 <= axis < len(shape):
                continue
            size = shape[axis]
            if isinstance(size, torch.SymInt):
                symbols = list(getattr(size.node.expr, "free_symbols", ()))
                if len(symbols) == 1 and str(symbols[0]) not in out and name not in taken:
                    out[str(symbols[0])] = name
                    taken.add(name)
    return out


__all__ = ["UnsupportedSize", "dim_name", "expr_dim", "same_dim", "spec_names", "sym_dim", "symbol_names"]
