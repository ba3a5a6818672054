"""Walks over what a function's text holds, for the tools that read it as text (the
printer, the reducer, the CLI's dim flags): every node it writes, every dim name it
mentions. Evaluation uses ``ir/graph``'s scoped walks instead.
"""

from collections.abc import Iterable

from tfexec.ir.dims import DimExpr, DimVar
from tfexec.ir.expr import Call, Expr, GridRegionExpr, Tuple, TupleGetItem
from tfexec.ir.types import Layout, ShardLayout, TensorType, TupleType


def text_nodes(roots: Iterable[Expr]) -> list[Expr]:
    """Every node structurally reachable from ``roots``, each once, in pre-order (first
    operand first): loop bodies and their bound variables included, callees' bodies not."""
    out: list[Expr] = []
    seen: set[int] = set()
    stack = list(roots)
    stack.reverse()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        if isinstance(node, Call):
            stack.extend(reversed(node.args))
        elif isinstance(node, Tuple):
            stack.extend(reversed(node.fields))
        elif isinstance(node, TupleGetItem):
            stack.append(node.tuple)
        elif isinstance(node, GridRegionExpr):
            parts = (*node.init_args, node.induction_var, *node.carried_args, node.body, *node.yield_values)
            stack.extend(reversed(parts))
    return out


def dim_names(value: object) -> list[str]:
    """The names of the ``DimVar``s ``value`` mentions — a dim, a type, a layout, or tuples
    and lists of those — each once, in the order they are written."""
    out: dict[str, None] = {}
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, DimVar):
            out.setdefault(v.name, None)
        elif isinstance(v, DimExpr):
            stack += [v.rhs, v.lhs]
        elif isinstance(v, (tuple, list)):
            stack.extend(reversed(v))
        elif isinstance(v, TensorType):
            stack += [v.layout, v.shape]
        elif isinstance(v, TupleType):
            stack.extend(reversed(v.fields))
        elif isinstance(v, Layout):
            stack.append(v.shape)
        elif isinstance(v, ShardLayout):
            stack.append(v.layout)
    return list(out)


__all__ = ["dim_names", "text_nodes"]
