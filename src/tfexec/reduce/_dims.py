"""Dims in program surgery: which ``DimVar``s a node needs, which a signature binds, and
renaming a callee's dims into its caller's when a call is inlined."""

import dataclasses
from collections.abc import Iterable, Mapping

from tfexec.ir.boundary import substitute_dim
from tfexec.ir.dims import DimExpr, DimVar, ShapeDim
from tfexec.ir.expr import Call, Expr, GridRegionExpr, Var
from tfexec.ir.ops.base import Op
from tfexec.ir.types import Layout, ShardLayout, TensorType, TupleType
from tfexec.ir.walk import dim_names

DimBindings = Mapping[str, ShapeDim]


def node_needs(node: Expr) -> set[str]:
    """The dim names evaluating ``node`` itself reads: its op's attributes, a loop's extent,
    a bound variable's declared type."""
    if isinstance(node, Call) and isinstance(node.target, Op):
        return set(dim_names(tuple(node.target.attributes().values())))
    if isinstance(node, GridRegionExpr):
        return set(dim_names(node.extent))
    if isinstance(node, Var):
        return set(dim_names(node.type))
    return set()


def bound_by(types: Iterable[TensorType | TupleType]) -> dict[str, ShapeDim]:
    """The dims a signature binds: each plain ``DimVar`` axis (the first occurrence wins)."""
    out: dict[str, ShapeDim] = {}
    stack = list(types)
    while stack:
        t = stack.pop(0)
        if isinstance(t, TupleType):
            stack[:0] = list(t.fields)
            continue
        for d in t.shape:
            if isinstance(d, DimVar):
                out.setdefault(d.name, d)
    return out


def call_bindings(params: Iterable[TensorType | TupleType], args: Iterable[TensorType | TupleType]) -> dict[str, ShapeDim]:
    """What a call binds each of the callee's plain ``DimVar`` axes to, in the caller's dims."""
    out: dict[str, ShapeDim] = {}
    for p, a in zip(params, args):
        _bind(p, a, out)
    return out


def _bind(p: TensorType | TupleType, a: TensorType | TupleType, out: dict[str, ShapeDim]) -> None:
    if isinstance(p, TupleType) and isinstance(a, TupleType):
        for pf, af in zip(p.fields, a.fields):
            _bind(pf, af, out)
    elif isinstance(p, TensorType) and isinstance(a, TensorType) and p.rank == a.rank:
        for pd, ad in zip(p.shape, a.shape):
            if isinstance(pd, DimVar):
                out.setdefault(pd.name, ad)


def renamed(value: object, bindings: DimBindings) -> object:
    """``value`` (an attribute, dim, type or layout) with its dims replaced by ``bindings``."""
    if isinstance(value, (DimVar, DimExpr)):
        return substitute_dim(value, dict(bindings))
    if isinstance(value, tuple):
        return tuple(renamed(v, bindings) for v in value)
    if isinstance(value, TensorType):
        layout = renamed(value.layout, bindings)
        shape = renamed(value.shape, bindings)
        assert isinstance(shape, tuple) and (layout is None or isinstance(layout, (Layout, ShardLayout)))
        return TensorType(shape, value.dtype, layout)
    if isinstance(value, TupleType):
        return TupleType(tuple(renamed(f, bindings) for f in value.fields))  # type: ignore[misc]
    if isinstance(value, Layout):
        shape = renamed(value.shape, bindings)
        assert isinstance(shape, tuple)
        return Layout(shape)
    if isinstance(value, ShardLayout) and value.layout is not None:
        inner = renamed(value.layout, bindings)
        assert isinstance(inner, Layout)
        return dataclasses.replace(value, layout=inner)
    return value


def renamed_op(op: Op, bindings: DimBindings) -> Op:
    """``op`` with the dims in its attributes renamed (itself when none change)."""
    changes = {}
    for name, value in op.attributes().items():
        new = renamed(value, bindings)
        if new != value:
            changes[name] = new
    return dataclasses.replace(op, **changes) if changes else op


__all__ = ["bound_by", "call_bindings", "node_needs", "renamed", "renamed_op"]
