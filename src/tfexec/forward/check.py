"""Runtime type checks of lowered values: the Function-boundary rules, as at a call site.

A node's value is checked against its declared (inferred) type with the very rule a call
site applies to an argument (``tfexec.ir.boundary``): same dtype and rank, static dims
equal, each ``DimVar`` bound consistently across the run within its dim scope — bound at
first sight, so a dim only a module declares (a weight ``f32[H]``) binds where it first
appears — and each ``DimExpr`` checked once its names are bound. Layouts are not compared
(they are static, the same on both routes). Modes: ``"full"`` checks every node (loop
bodies included), ``"boundary"`` the graph's output (its inputs are bound by the
evaluator spec's own rules), ``"off"`` nothing.
"""

from typing import Literal

import torch

from tfexec.errors import TypeCheckError
from tfexec.forward.node import ForwardNode
from tfexec.ir.boundary import boundary_mismatch
from tfexec.ir.describe import describe_expr
from tfexec.ir.dims import ShapeDim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Expr
from tfexec.ir.types import TensorType, TupleType, Type

CheckMode = Literal["full", "boundary", "off"]
CHECK_MODES: tuple[str, ...] = ("full", "boundary", "off")


class ScopeChecks:
    """The dim bindings the checks of one run have seen, per dim scope."""

    __slots__ = ("bindings",)

    def __init__(self, scopes: int, dims: dict[str, int]) -> None:
        self.bindings: list[dict[str, ShapeDim]] = [dict(dims) for _ in range(scopes)]

    def open(self, scope: int, dims: dict[str, int]) -> None:
        """A callee's scope is entered again: its bindings start from its arguments'."""
        self.bindings[scope] = dict(dims)


def check_node(node: ForwardNode, value: object, checks: ScopeChecks) -> None:
    """Check a node's value against its declared type in its dim scope (``TypeCheckError``)."""
    if node.type is not None:
        check_value(node.type, value, checks.bindings[node.scope], node.source, "this node's value")


def static_shape(t: Type | None) -> "tuple[torch.dtype, tuple[int, ...]] | None":
    """A tensor type's dtype and shape when every dim is static, else None."""
    if isinstance(t, TensorType) and all(type(d) is int for d in t.shape):
        return t.dtype.torch, tuple(d for d in t.shape if isinstance(d, int))
    return None


def check_value(declared: Type, value: object, bindings: dict[str, ShapeDim], source: Expr | None, what: str) -> None:
    """Raise ``TypeCheckError`` unless ``value`` has type ``declared`` under ``bindings``."""
    found = _type_of(value)
    why = boundary_mismatch(_without_layouts(declared), found, bindings, "") if found is not None else "not a tensor"
    if why is not None:
        prefix = f"{describe_expr(source)}: " if source is not None else ""
        raise TypeCheckError(
            f"{prefix}runtime type check failed for {what}: declared {declared}, found {found or type(value).__name__} "
            f"({why}; dims must agree with their bindings across the run)"
        )


def _type_of(value: object) -> Type | None:
    if isinstance(value, torch.Tensor):
        try:
            return TensorType(tuple(value.shape), DType.from_torch(value.dtype))
        except TypeError:
            return None
    if isinstance(value, tuple):
        fields = [_type_of(v) for v in value]
        return None if any(f is None for f in fields) else TupleType(tuple(f for f in fields if f is not None))
    return None


def _without_layouts(t: Type) -> Type:
    if isinstance(t, TupleType):
        return TupleType(tuple(_without_layouts(f) for f in t.fields))
    return t if t.layout is None else TensorType(t.shape, t.dtype)
