"""HIR expression nodes (core-ir §1, hir §1.1–§1.2).

Nodes are compared by identity (``eq=False``): one node reached twice is one shared
sub-DAG. Constructors check the *kinds* of fields and never run type inference, so an
ill-typed program can always be built. Nothing on a node recurses over the graph:
``repr`` shows one level, and copying returns the node itself (nodes are immutable;
rebuilding a DAG is ``ExprMutator``'s job).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias, Union

import torch

from tfexec.errors import IRConstructionError
from tfexec.ir.dims import ShapeDim, is_shape_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Op
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, TupleType, Type


def _require(owner: str, name: str, value: object, kind: type | tuple[type, ...], what: str) -> None:
    if not isinstance(value, kind):
        raise IRConstructionError(f"{owner}.{name} must be {what}, got {type(value).__name__} {_short(value)}")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _require_exprs(owner: str, name: str, values: object) -> None:
    if not isinstance(values, tuple):
        raise IRConstructionError(f"{owner}.{name} must be a tuple of Expr, got {type(values).__name__} {_short(values)}")
    for i, v in enumerate(values):
        if not isinstance(v, _EXPR_CLASSES):
            raise IRConstructionError(f"{owner}.{name}[{i}] must be an Expr, got {type(v).__name__} {_short(v)}")


def _require_common(owner: str, node: "Expr") -> None:
    """Check the fields every node has: ``span`` and ``checked_type``."""
    if node.span is not None and not isinstance(node.span, Span):
        raise IRConstructionError(f"{owner}.span must be a Span or None, got {type(node.span).__name__} {_short(node.span)}")
    checked = node.checked_type
    if checked is not None and not isinstance(checked, (TensorType, TupleType)):
        raise IRConstructionError(
            f"{owner}.checked_type must be a TensorType, TupleType or None, got {type(checked).__name__} {_short(checked)}"
        )


def _require_distinct(owner: str, what: str, variables: "tuple[Var, ...]") -> None:
    """Each Var binds one value: the same Var object may not appear twice in ``variables``."""
    seen: dict[int, int] = {}
    for i, v in enumerate(variables):
        if id(v) in seen:
            raise IRConstructionError(
                f"{owner}: {what} must be distinct Vars, but {v.name} appears at positions {seen[id(v)]} and {i}"
            )
        seen[id(v)] = i


class _Node:
    """Shared behaviour of nodes: identity semantics, shallow repr, no deep copy."""

    __slots__ = ()

    def __copy__(self) -> "_Node":
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> "_Node":
        return self

    def with_checked_type(self, checked: "Type | None") -> None:
        """Record the inferred type (the only field that changes after construction)."""
        object.__setattr__(self, "checked_type", checked)


@dataclass(frozen=True, eq=False, slots=True, weakref_slot=True)
class Var(_Node):
    """A parameter, loop induction variable or carried phi."""

    name: str
    type: Type
    span: Span | None = field(default=None, kw_only=True)
    checked_type: Type | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        _require_common("Var", self)
        _require("Var", "name", self.name, str, "a str")
        _require("Var", "type", self.type, (TensorType, TupleType), "a TensorType or TupleType")

    def __repr__(self) -> str:
        return f"Var({self.name}: {self.type})"


ConstantValue: TypeAlias = Union[bool, int, float, torch.Tensor]


def _torch_iinfo(dtype: DType) -> torch.iinfo:
    return torch.iinfo(dtype.torch)


def weak_constant_error(value: object, t: TensorType) -> str | None:
    """Why ``value`` cannot be a weak constant of type ``t``, or None.

    A weak constant promotes by its Python kind (core-ir §2) and its type rule by its dtype,
    so the two must name the same thing: a rank-0 type whose dtype is of the value's kind
    (``b1`` for a bool, an integer dtype holding the int, a floating dtype for a float).
    """
    if isinstance(value, torch.Tensor):
        return "weak=True needs a Python bool, int or float; a tensor constant is never weak"
    if t.rank != 0:
        return f"a weak constant must have a rank-0 type, found {t}"
    dtype = t.dtype
    if isinstance(value, bool):
        fits = dtype is DType.bool
    elif isinstance(value, int):
        fits = dtype.is_integral and _torch_iinfo(dtype).min <= value <= _torch_iinfo(dtype).max
    else:
        fits = dtype.is_floating
    if fits:
        return None
    kind = type(value).__name__
    return (
        f"weak constant {value!r} (a Python {kind}) cannot have type {t}: a weak scalar promotes by its Python "
        f"kind, so its dtype must be of that kind and hold it (the builders use b1, i64 and f32)"
    )


@dataclass(frozen=True, eq=False, slots=True, weakref_slot=True)
class Constant(_Node):
    """A literal (core-ir §2); ``weak`` constants promote like torch Python scalars."""

    value: ConstantValue
    type: TensorType
    weak: bool = False
    span: Span | None = field(default=None, kw_only=True)
    checked_type: Type | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        _require_common("Constant", self)
        _require("Constant", "value", self.value, (bool, int, float, torch.Tensor), "a bool, int, float or torch.Tensor")
        _require("Constant", "type", self.type, TensorType, "a TensorType")
        _require("Constant", "weak", self.weak, bool, "a bool")
        if self.weak:
            why = weak_constant_error(self.value, self.type)
            if why is not None:
                raise IRConstructionError(f"Constant: {why}")

    def __repr__(self) -> str:
        shown = self.value if not isinstance(self.value, torch.Tensor) else f"tensor{tuple(self.value.shape)}"
        return f"Constant({shown}: {self.type}{', weak' if self.weak else ''})"


@dataclass(frozen=True, eq=False, slots=True, weakref_slot=True)
class Call(_Node):
    """An op application (``target`` an ``Op``) or a function call (``target`` a ``Function``)."""

    target: "Op | Function"
    args: tuple["Expr", ...]
    span: Span | None = field(default=None, kw_only=True)
    checked_type: Type | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        _require_common("Call", self)
        _require("Call", "target", self.target, (Op, Function), "an Op or a Function")
        _require_exprs("Call", "args", self.args)

    def __repr__(self) -> str:
        target = self.target.name if isinstance(self.target, Function) else type(self.target).__name__
        return f"Call({target}, {len(self.args)} args)"


@dataclass(frozen=True, eq=False, slots=True, weakref_slot=True)
class Tuple(_Node):
    """A tuple value built from its fields."""

    fields: tuple["Expr", ...]
    span: Span | None = field(default=None, kw_only=True)
    checked_type: Type | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        _require_common("Tuple", self)
        _require_exprs("Tuple", "fields", self.fields)

    def __repr__(self) -> str:
        return f"Tuple({len(self.fields)} fields)"


@dataclass(frozen=True, eq=False, slots=True, weakref_slot=True)
class TupleGetItem(_Node):
    """A static projection of field ``index`` of a tuple-valued expression."""

    tuple: "Expr"
    index: int
    span: Span | None = field(default=None, kw_only=True)
    checked_type: Type | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        _require_common("TupleGetItem", self)
        if not isinstance(self.tuple, _EXPR_CLASSES):
            raise IRConstructionError(f"TupleGetItem.tuple must be an Expr, got {type(self.tuple).__name__} {_short(self.tuple)}")
        if not isinstance(self.index, int) or isinstance(self.index, bool) or self.index < 0:
            raise IRConstructionError(f"TupleGetItem.index must be a non-negative int, got {self.index!r}")

    def __repr__(self) -> str:
        return f"TupleGetItem([{self.index}])"


@dataclass(frozen=True, eq=False, slots=True, weakref_slot=True)
class ConstTensor(_Node):
    """A module constant (weight), supplied lazily by name by a loaded module."""

    name: str
    type: TensorType
    span: Span | None = field(default=None, kw_only=True)
    checked_type: Type | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        _require_common("ConstTensor", self)
        _require("ConstTensor", "name", self.name, str, "a str")
        _require("ConstTensor", "type", self.type, TensorType, "a TensorType")

    def __repr__(self) -> str:
        return f"ConstTensor({self.name}: {self.type})"


@dataclass(frozen=True, eq=False, slots=True, weakref_slot=True)
class GridRegionExpr(_Node):
    """A loop over ``range(extent)`` with carried values (hir §1.2)."""

    extent: ShapeDim
    induction_var: Var
    init_args: tuple["Expr", ...]
    carried_args: tuple[Var, ...]
    body: "Expr"
    yield_values: tuple["Expr", ...]
    span: Span | None = field(default=None, kw_only=True)
    checked_type: Type | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        _require_common("GridRegionExpr", self)
        if not is_shape_dim(self.extent):
            raise IRConstructionError(f"GridRegionExpr.extent must be an int, DimVar or DimExpr, got {_short(self.extent)}")
        _require("GridRegionExpr", "induction_var", self.induction_var, Var, "a Var")
        _require_exprs("GridRegionExpr", "init_args", self.init_args)
        if not isinstance(self.carried_args, tuple) or not all(isinstance(v, Var) for v in self.carried_args):
            raise IRConstructionError(f"GridRegionExpr.carried_args must be a tuple of Var, got {_short(self.carried_args)}")
        if not isinstance(self.body, _EXPR_CLASSES):
            raise IRConstructionError(f"GridRegionExpr.body must be an Expr, got {type(self.body).__name__} {_short(self.body)}")
        _require_exprs("GridRegionExpr", "yield_values", self.yield_values)
        n = len(self.carried_args)
        if len(self.init_args) != n or len(self.yield_values) != n:
            raise IRConstructionError(
                "GridRegionExpr needs one init arg and one yield value per carried arg: "
                f"got {len(self.init_args)} init_args, {n} carried_args, {len(self.yield_values)} yield_values"
            )
        _require_distinct("GridRegionExpr", "the induction variable and carried args", (self.induction_var, *self.carried_args))

    def __repr__(self) -> str:
        return f"GridRegionExpr(extent={self.extent}, {len(self.carried_args)} carries)"


Expr: TypeAlias = Union[Var, Constant, Call, Tuple, TupleGetItem, ConstTensor, GridRegionExpr]
_EXPR_CLASSES = (Var, Constant, Call, Tuple, TupleGetItem, ConstTensor, GridRegionExpr)


def is_expr(value: object) -> bool:
    """True when ``value`` is an HIR expression node."""
    return isinstance(value, _EXPR_CLASSES)


@dataclass(frozen=True, eq=False, slots=True, weakref_slot=True)
class Function:
    """A named function: parameters and an SSA-DAG body (hir §1.1)."""

    name: str
    params: tuple[Var, ...]
    body: Expr
    ret_type: Type | None = None
    span: Span | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        _require("Function", "name", self.name, str, "a str")
        if not isinstance(self.params, tuple) or not all(isinstance(p, Var) for p in self.params):
            raise IRConstructionError(f"Function.params must be a tuple of Var, got {_short(self.params)}")
        _require_distinct("Function", "params", self.params)
        if not isinstance(self.body, _EXPR_CLASSES):
            raise IRConstructionError(f"Function.body must be an Expr, got {type(self.body).__name__} {_short(self.body)}")
        if self.ret_type is not None and not isinstance(self.ret_type, (TensorType, TupleType)):
            raise IRConstructionError(f"Function.ret_type must be a type or None, got {_short(self.ret_type)}")
        if self.span is not None and not isinstance(self.span, Span):
            raise IRConstructionError(f"Function.span must be a Span or None, got {type(self.span).__name__} {_short(self.span)}")

    def __copy__(self) -> "Function":
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> "Function":
        return self

    def __repr__(self) -> str:
        return f"Function({self.name}, {len(self.params)} params)"

    def __str__(self) -> str:
        return _printer(self) if _printer is not None else repr(self)


_printer: "Callable[[Function], str] | None" = None
"""How ``str(function)`` prints: the text form, installed by ``tfexec.text`` (``ir`` imports
nothing above it)."""


def set_function_printer(printer: "Callable[[Function], str]") -> None:
    """Install the printer ``str(function)`` uses (``tfexec.text`` installs ``print_ir``)."""
    global _printer
    _printer = printer
