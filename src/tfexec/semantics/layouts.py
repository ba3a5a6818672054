"""Layouts: which layout each value carries, and layout-domain views (evaluator spec §6).

A value's layout is a static property of the node that computes it, decided here once for
both routes (``StaticLayouts``): a ``Var`` carries its declared layout(s); a constant or
weight its type's; an op call ``op.value_layout`` of its operands' (``reshard`` → its
target, ``local`` → the local layout, otherwise none); a function call its callee's
body's; a tuple its fields'; a projection its field's; a loop its carries' declared
layouts (or, without carries, its body's).

``as_layout_view`` reshapes a value from its logical shape to its layout's shape in
default-contiguous order; ``from_layout_view`` is the inverse. No op of the current
catalogue computes in the layout domain, so no value rule calls them; they exist for
ops defined to do so. Every failure (an unbound dim, a layout that does not hold the
value's element count) is an ``EvalError``.
"""

from collections.abc import Mapping, Sequence

import torch

import weakref

from tfexec.errors import EvalError
from tfexec.ir.dims import DimError, ShapeDim, resolve_dim
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.graph import post_order
from tfexec.ir.ops.base import Op
from tfexec.ir.types import Layout, ShardLayout, TensorType, TupleType, Type
from tfexec.semantics.values import LayoutTree, TensorValue, layout_leaf


def type_layouts(t: Type) -> LayoutTree:
    """The layouts a value of declared type ``t`` carries."""
    if isinstance(t, TupleType):
        return tuple(type_layouts(f) for f in t.fields)
    return t.layout


def tensor_layout(tree: LayoutTree) -> "Layout | ShardLayout | None":
    """The layout an op sees for an operand: a tensor's, None for a tuple."""
    return None if isinstance(tree, tuple) else tree


class StaticLayouts:
    """The layout of every node asked about, computed once per node (operands first) and
    kept with the nodes it describes (so an ``id`` is never reused while it is known)."""

    def __init__(self) -> None:
        self._of: dict[int, LayoutTree] = {}
        self._nodes: list[Expr] = []

    def of(self, expr: Expr) -> LayoutTree:
        """The layout(s) ``expr``'s value carries."""
        known = self._of
        if id(expr) in known:
            return known[id(expr)]
        try:  # the common case: its operands are known (a walk in post-order asks in that order)
            layout = self._rule(expr)
        except KeyError:
            for node in post_order([expr], known):
                known[id(node)] = self._rule(node)
                self._nodes.append(node)
            return known[id(expr)]
        known[id(expr)] = layout
        self._nodes.append(expr)
        return layout

    def _rule(self, node: Expr) -> LayoutTree:
        known = self._of
        match node:
            case Var():
                return type_layouts(node.type)
            case Constant() | ConstTensor():
                return node.type.layout
            case Call(target=Function() as callee):
                return _callee_layouts(callee)
            case Call(target=Op() as op):
                return op.value_layout(tuple(tensor_layout(known[id(a)]) for a in node.args))
            case Tuple():
                return tuple(known[id(f)] for f in node.fields)
            case TupleGetItem():
                return layout_leaf(known[id(node.tuple)], node.index)
            case GridRegionExpr():
                if not node.carried_args:
                    return self.of(node.body)
                carried = tuple(type_layouts(v.type) for v in node.carried_args)
                return carried[0] if len(carried) == 1 else carried
        raise TypeError(f"not an HIR node: {type(node).__name__}")


_FUNCTIONS: "weakref.WeakKeyDictionary[Function, StaticLayouts]" = weakref.WeakKeyDictionary()
_IN_PROGRESS: set[int] = set()


def function_layouts(fn: Function) -> StaticLayouts:
    """The ``StaticLayouts`` of ``fn``'s body and loop bodies, shared by every run of ``fn``."""
    table = _FUNCTIONS.get(fn)
    if table is None:
        table = _FUNCTIONS[fn] = StaticLayouts()
    return table


def _callee_layouts(callee: Function) -> LayoutTree:
    if id(callee) in _IN_PROGRESS:
        return None  # a recursive call: refused when reached, its layout never needed
    _IN_PROGRESS.add(id(callee))
    try:
        return function_layouts(callee).of(callee.body)
    finally:
        _IN_PROGRESS.discard(id(callee))


def _resolve(dims: Sequence[ShapeDim], bindings: Mapping[str, int], what: str) -> tuple[int, ...]:
    try:
        return tuple(resolve_dim(d, bindings) for d in dims)
    except DimError as exc:
        raise EvalError(f"{what}: {exc}") from None


def _layout_shape(t: TensorType, bindings: Mapping[str, int]) -> tuple[int, ...] | None:
    layout = t.layout
    if isinstance(layout, ShardLayout):
        layout = layout.layout
    if not isinstance(layout, Layout):
        return None
    return _resolve(layout.shape, bindings, f"layout {layout} of {t}")


def as_layout_view(value: TensorValue, dim_bindings: Mapping[str, int] | None = None) -> torch.Tensor:
    """``value.data`` organised as its type's layout shape (the data itself when no layout)."""
    shape = _layout_shape(value.type, dim_bindings or {})
    if shape is None:
        return value.data
    if value.data.numel() != _numel(shape):
        raise EvalError(f"layout {value.type.layout} holds {_numel(shape)} elements, the value has {value.data.numel()}")
    return value.data.reshape(shape)


def from_layout_view(data: torch.Tensor, type: TensorType, dim_bindings: Mapping[str, int] | None = None) -> TensorValue:
    """The logical value of layout-domain ``data`` of type ``type`` (inverse of ``as_layout_view``)."""
    logical = _resolve(type.shape, dim_bindings or {}, f"logical shape of {type}")
    if data.numel() != _numel(logical):
        raise EvalError(f"layout data of {data.numel()} elements does not fill logical shape {list(logical)}")
    return TensorValue(data.reshape(logical), TensorType(logical, type.dtype, type.layout))


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
