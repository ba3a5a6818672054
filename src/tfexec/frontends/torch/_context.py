"""What an ATen translation rule sees: one FX node, its bound arguments, its torch types.

A rule is a function ``rule(t: NodeContext) -> Expr | tuple[Expr | None, ...]``: it reads
the node's arguments by their schema names (``t.tensor("self")``, ``t.arg("dim")``),
builds HIR with the ``tfexec.ops`` builders passing ``span=t.span``, and returns the
node's value (a tuple for a node with several outputs; ``None`` for an output it cannot
provide). It raises ``RuleError`` for a case it does not cover, with a message that says
which; the translator reports it with the node's source line.
"""

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, TypeGuard

import torch

from tfexec.frontends.torch._dims import UnsupportedSize, sym_dim
from tfexec.ir.dims import DimExpr, DimVar, ShapeDim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import (
    Call,
    Constant,
    ConstTensor,
    Expr,
    GridRegionExpr,
    Tuple,
    TupleGetItem,
    Var,
)
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type

_EXPRS = (Var, Constant, Call, Tuple, TupleGetItem, ConstTensor, GridRegionExpr)

Result: TypeAlias = Expr | tuple[Expr | None, ...]
"""A rule's result: one value, or one per output of a multi-output op."""
Operand: TypeAlias = Expr | bool | int | float


def is_expr(value: object) -> TypeGuard[Expr]:
    """Whether ``value`` is an HIR expression node."""
    return isinstance(value, _EXPRS)


class RuleError(Exception):
    """A rule meets a case it does not translate; the message says which."""


class NodeContext:
    """One FX node as a rule sees it: arguments bound by schema name, torch's output types."""

    def __init__(
        self,
        node: Any,
        args: Mapping[str, object],
        span: Span | None,
        names: Mapping[str, str],
        materialise: Callable[[ShapeDim, Span | None], Expr],
        infer: Callable[[Expr], Type],
        weights: Mapping[str, torch.Tensor] | None = None,
    ) -> None:
        self.node = node
        self.args = args
        self.span = span
        self._weights = weights or {}
        self._names = names
        self._materialise = materialise
        self._infer = infer

    @property
    def op(self) -> str:
        """The ATen overload's name, ``aten.max.dim``."""
        return str(self.node.target)

    # -- arguments ------------------------------------------------------------------------

    def has(self, name: str) -> bool:
        """Whether the schema argument ``name`` was given (or has a default)."""
        return name in self.args

    def arg(self, name: str, default: object = None) -> object:
        """Argument ``name`` as translated: an ``Expr`` for a tensor, a ``ShapeDim`` for a
        SymInt, Python data otherwise (lists of them for lists)."""
        return self.args.get(name, default)

    def tensor(self, name: str) -> Expr:
        """Argument ``name``, which must be a tensor (a SymInt becomes a rank-0 ``i64``)."""
        value = self.args.get(name)
        if isinstance(value, _EXPRS):
            return value
        if isinstance(value, (DimVar, DimExpr)):
            return self._materialise(value, self.span)
        raise RuleError(f"argument {name} is {_spell(value)}, expected a tensor")

    def opt_tensor(self, name: str) -> Expr | None:
        """Argument ``name`` when it is a tensor, None when it is absent or None."""
        return None if self.args.get(name) is None else self.tensor(name)

    def operand(self, name: str) -> Operand:
        """Argument ``name`` as a builder operand: a tensor, or a Python scalar (a weak
        constant, as torch treats a Python number); a symbolic size becomes a rank-0 ``i64``."""
        value = self.args.get(name)
        if isinstance(value, (*_EXPRS, bool, int, float)):
            return value
        if isinstance(value, (DimVar, DimExpr)):
            return self._materialise(value, self.span)
        raise RuleError(f"argument {name} is {_spell(value)}, expected a tensor or a number")

    def scalar(self, name: str, default: bool | int | float | None = None) -> bool | int | float:
        """Argument ``name``, which must be a static Python number."""
        value = self.args.get(name, default)
        if value is None:
            value = default
        if isinstance(value, (bool, int, float)):
            return value
        raise RuleError(f"argument {name} is {_spell(value)}, expected a static number")

    def integer(self, name: str, default: int | None = None) -> int:
        """Argument ``name``, which must be a static int."""
        value = self.args.get(name, default)
        if value is None:
            value = default
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise RuleError(f"argument {name} is {_spell(value)}, expected a static int")

    def size(self, name: str, default: ShapeDim | None = None) -> ShapeDim:
        """Argument ``name`` as a size: a static int or a symbolic one."""
        value = self.args.get(name, default)
        if value is None:
            value = default
        if isinstance(value, (int, DimVar, DimExpr)) and not isinstance(value, bool):
            return value
        raise RuleError(f"argument {name} is {_spell(value)}, expected a size")

    def ints(self, name: str, default: tuple[int, ...] | None = None) -> tuple[int, ...] | None:
        """Argument ``name`` as a tuple of static ints (a lone int is a 1-tuple); None if absent."""
        value = self.args.get(name)
        if value is None:
            return default
        if isinstance(value, int) and not isinstance(value, bool):
            return (value,)
        if isinstance(value, (list, tuple)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return tuple(value)
        raise RuleError(f"argument {name} is {_spell(value)}, expected a list of static ints")

    def dtype(self, name: str) -> DType | None:
        """Argument ``name`` as an HIR dtype (None when absent)."""
        value = self.args.get(name)
        if value is None:
            return None
        if isinstance(value, torch.dtype):
            return _hir_dtype(value)
        raise RuleError(f"argument {name} is {_spell(value)}, expected a dtype")

    # -- types ----------------------------------------------------------------------------

    def type_of(self, expr: Expr) -> TensorType:
        """The HIR type of a tensor ``expr`` (an operand, or a node the rule built)."""
        t = self._infer(expr)
        if not isinstance(t, TensorType):
            raise RuleError(f"{expr!r} is a tuple, expected a tensor")
        return t

    def constant_value(self, expr: Expr) -> torch.Tensor | None:
        """The tensor behind a module constant (a ``ConstTensor``: a weight, buffer or lifted
        constant) or a tensor ``Constant``; None for any other value."""
        if isinstance(expr, ConstTensor):
            return self._weights.get(expr.name)
        if isinstance(expr, Constant) and isinstance(expr.value, torch.Tensor):
            return expr.value
        return None

    def tensor_of_dim(self, dim: ShapeDim) -> Expr:
        """A size as a rank-0 ``i64`` value computed at run time."""
        return self._materialise(dim, self.span)

    @property
    def out(self) -> TensorType:
        """torch's type of the node's (single) tensor output, in HIR dims."""
        return self._fake_type(self.node.meta.get("val"), "the output")

    def outs(self) -> list[TensorType]:
        """torch's types of each output of a multi-output node."""
        val = self.node.meta.get("val")
        if not isinstance(val, (list, tuple)):
            raise RuleError("the node has a single output, a multi-output rule was expected")
        return [self._fake_type(v, f"output {i}") for i, v in enumerate(val)]

    def _fake_type(self, val: object, what: str) -> TensorType:
        return fake_type(val, self._names, what)


def fake_type(val: object, names: Mapping[str, str], what: str = "the value") -> TensorType:
    """The HIR type of a FakeTensor (its symbolic sizes as ``DimVar``s named by ``names``)."""
    if not isinstance(val, torch.Tensor):
        raise RuleError(f"{what} is {_spell(val)}, not a tensor")
    try:
        shape = tuple(sym_dim(s, names) for s in val.shape)
    except UnsupportedSize as exc:
        raise RuleError(f"{what}: {exc}") from None
    return TensorType(shape, _hir_dtype(val.dtype))


def _hir_dtype(dtype: torch.dtype) -> DType:
    try:
        return DType.from_torch(dtype)
    except (TypeError, ValueError, KeyError):
        raise RuleError(f"dtype {dtype} has no HIR dtype") from None


def _spell(value: object) -> str:
    if value is None:
        return "None"
    if isinstance(value, _EXPRS):
        return "a tensor"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"
