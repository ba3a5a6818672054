"""Weak Python scalars (core-ir §2): which operands an op receives as a Python value.

A weak ``Constant`` (``mul(x, 0.5)``) promotes like a torch Python scalar, so op value
rules receive the Python value itself rather than a tensor. Whether an operand *is* such a
scalar is a static property of the program, decided here once for type inference and for
both evaluation routes: weakness follows a value through tuple fields, static projections
and a callee's returned body; binding to a ``Var`` (a parameter, a carry), a loop result
and the result of any op make a value ordinary.
"""

from dataclasses import dataclass
from typing import TypeAlias, Union

from tfexec.ir.expr import Call, Constant, Expr, Function, Tuple, TupleGetItem

Scalar: TypeAlias = bool | int | float


@dataclass(frozen=True, slots=True)
class Weak:
    """An operand that is the weak Python scalar ``value``."""

    value: Scalar


OperandView: TypeAlias = Union[Weak, None, tuple["OperandView", ...]]
"""What an operand statically is: a weak scalar, a value computed at run time (``None``), or
a tuple built in the program whose fields have views of their own (slice starts)."""

_MAX_HOPS = 10_000


def _follow(expr: Expr) -> tuple[Expr, list[int]]:
    """Where ``expr``'s value statically comes from: the node reached through projections,
    tuple fields and callee bodies, and the projection path still pending there."""
    node: Expr = expr
    path: list[int] = []
    for _ in range(_MAX_HOPS):
        if isinstance(node, TupleGetItem):
            path.append(node.index)
            node = node.tuple
        elif isinstance(node, Tuple) and path and path[-1] < len(node.fields):
            node = node.fields[path.pop()]
        elif isinstance(node, Call) and isinstance(node.target, Function):
            node = node.target.body
        else:
            break
    return node, path


def _weak_constant(node: Expr) -> Constant | None:
    if isinstance(node, Constant) and node.weak and isinstance(node.value, (bool, int, float)):
        return node
    return None


def operand_view(expr: Expr) -> OperandView:
    """The static view of ``expr`` as an op operand (see the module docstring)."""
    node, path = _follow(expr)
    if path:
        return None
    const = _weak_constant(node)
    if const is not None:
        assert isinstance(const.value, (bool, int, float))
        return Weak(const.value)
    if isinstance(node, Tuple):
        views = tuple(operand_view(f) for f in node.fields)
        return views if any(v is not None for v in views) else None
    return None


def weak_source(expr: Expr) -> Constant | None:
    """The weak Python-scalar ``Constant`` that ``expr`` statically is, if any."""
    node, path = _follow(expr)
    return None if path else _weak_constant(node)
