"""Dimensions (types §3): static ints, symbolic ``DimVar``s and ``DimExpr`` arithmetic.

``apply_dim_op`` is the one implementation of dim arithmetic: ``resolve_dim`` uses it in
shape positions and the ``dim_*`` ops use it on runtime operands, so both spellings
compute the same integer (Python semantics: floor division, sign of mod follows divisor).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias, Union, get_args

from tfexec.errors import DimError as DimError

DimOpName = Literal["add", "sub", "mul", "floordiv", "mod", "min", "max"]
DIM_OPS: tuple[str, ...] = get_args(DimOpName)
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}




def apply_dim_op(op: str, a: int, b: int) -> int:
    """Apply one dim-arithmetic operator to two ints with Python integer semantics."""
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "mul":
        return a * b
    if op in ("floordiv", "mod"):
        if b == 0:
            raise DimError(f"dim arithmetic: {op} by zero ({a} {_SYMBOL[op]} {b})")
        return a // b if op == "floordiv" else a % b
    if op == "min":
        return min(a, b)
    if op == "max":
        return max(a, b)
    raise DimError(f"unknown dim operator {op!r}; expected one of {', '.join(DIM_OPS)}")


class _DimArith:
    """Python operators on symbolic dims build ``DimExpr``s (folding when both are ints)."""

    __slots__ = ()

    def __add__(self, other: "ShapeDim") -> "ShapeDim":
        return dim_expr("add", self, other)  # type: ignore[arg-type]

    def __radd__(self, other: "ShapeDim") -> "ShapeDim":
        return dim_expr("add", other, self)  # type: ignore[arg-type]

    def __sub__(self, other: "ShapeDim") -> "ShapeDim":
        return dim_expr("sub", self, other)  # type: ignore[arg-type]

    def __rsub__(self, other: "ShapeDim") -> "ShapeDim":
        return dim_expr("sub", other, self)  # type: ignore[arg-type]

    def __mul__(self, other: "ShapeDim") -> "ShapeDim":
        return dim_expr("mul", self, other)  # type: ignore[arg-type]

    def __rmul__(self, other: "ShapeDim") -> "ShapeDim":
        return dim_expr("mul", other, self)  # type: ignore[arg-type]

    def __floordiv__(self, other: "ShapeDim") -> "ShapeDim":
        return dim_expr("floordiv", self, other)  # type: ignore[arg-type]

    def __rfloordiv__(self, other: "ShapeDim") -> "ShapeDim":
        return dim_expr("floordiv", other, self)  # type: ignore[arg-type]

    def __mod__(self, other: "ShapeDim") -> "ShapeDim":
        return dim_expr("mod", self, other)  # type: ignore[arg-type]

    def __rmod__(self, other: "ShapeDim") -> "ShapeDim":
        return dim_expr("mod", other, self)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class DimVar(_DimArith):
    """A symbolic size bound at run time from an input's axis; identified by its name."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise TypeError(f"DimVar name must be an identifier string, got {self.name!r}")

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class DimExpr(_DimArith):
    """Arithmetic over dims; build it with Python operators or ``dim_expr`` to fold ints."""

    op: DimOpName
    lhs: "ShapeDim"
    rhs: "ShapeDim"

    def __post_init__(self) -> None:
        if self.op not in DIM_OPS:
            raise TypeError(f"DimExpr op must be one of {', '.join(DIM_OPS)}, got {self.op!r}")
        for side in (self.lhs, self.rhs):
            if not is_shape_dim(side):
                raise TypeError(f"DimExpr operand must be int, DimVar or DimExpr, got {side!r}")

    def __str__(self) -> str:
        if self.op in ("min", "max"):
            return f"{self.op}({self.lhs}, {self.rhs})"
        prec = _PRECEDENCE[self.op]
        lhs = _operand_str(self.lhs, prec, right=False)
        rhs = _operand_str(self.rhs, prec, right=True)
        return f"{lhs} {_SYMBOL[self.op]} {rhs}"


ShapeDim: TypeAlias = Union[int, DimVar, DimExpr]


_PRECEDENCE = {"add": 1, "sub": 1, "mul": 2, "floordiv": 2, "mod": 2}


def _operand_str(dim: ShapeDim, parent: int, *, right: bool) -> str:
    """``dim`` as an operand of an operator of precedence ``parent``: parenthesised only
    where Python needs it (operators are left-associative), so the text parses back to
    the same ``DimExpr``."""
    if isinstance(dim, DimExpr) and dim.op in _PRECEDENCE:
        prec = _PRECEDENCE[dim.op]
        if prec < parent or (right and prec == parent):
            return f"({dim})"
    return str(dim)


def is_shape_dim(value: object) -> bool:
    """True for an ``int`` (not ``bool``), ``DimVar`` or ``DimExpr``."""
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, (DimVar, DimExpr))


def dim_expr(op: str, lhs: ShapeDim, rhs: ShapeDim) -> ShapeDim:
    """Build ``lhs op rhs``, folding two ints and the identities ``x+0``, ``x*1``, ``x//1``."""
    if op not in DIM_OPS:
        raise DimError(f"unknown dim operator {op!r}; expected one of {', '.join(DIM_OPS)}")
    if not is_shape_dim(lhs) or not is_shape_dim(rhs):
        raise TypeError(f"dim arithmetic needs int/DimVar/DimExpr operands, got {lhs!r} and {rhs!r}")
    if isinstance(lhs, int) and isinstance(rhs, int):
        return apply_dim_op(op, lhs, rhs)
    if op in ("add", "sub") and rhs == 0:
        return lhs
    if op == "add" and lhs == 0:
        return rhs
    if op in ("mul", "floordiv") and rhs == 1:
        return lhs
    if op == "mul" and lhs == 1:
        return rhs
    return DimExpr(op, lhs, rhs)  # type: ignore[arg-type]


def resolve_dim(dim: ShapeDim, bindings: Mapping[str, int]) -> int:
    """Evaluate ``dim`` under concrete ``bindings``; an unbound ``DimVar`` is a ``DimError``."""
    if isinstance(dim, int) and not isinstance(dim, bool):
        return dim
    if isinstance(dim, DimVar):
        try:
            return bindings[dim.name]
        except KeyError:
            bound = ", ".join(sorted(bindings)) or "none"
            raise DimError(f"dim {dim.name} is not bound (bound dims: {bound})") from None
    if not isinstance(dim, DimExpr):
        raise TypeError(f"resolve_dim needs an int, DimVar or DimExpr, got {type(dim).__name__} {dim!r}")
    return apply_dim_op(dim.op, resolve_dim(dim.lhs, bindings), resolve_dim(dim.rhs, bindings))


def dim_vars(dim: ShapeDim) -> set[str]:
    """The names of the ``DimVar``s in ``dim``."""
    if isinstance(dim, int):
        return set()
    if isinstance(dim, DimVar):
        return {dim.name}
    return dim_vars(dim.lhs) | dim_vars(dim.rhs)


def product_factors(dim: ShapeDim) -> tuple[int, tuple[str, ...]] | None:
    """``dim`` as ``(constant, sorted DimVar names)`` when it is a pure product, else None.

    Lets type rules compare element counts such as ``S * (H * D)`` and ``S * H * D``.
    """
    if isinstance(dim, int):
        return dim, ()
    if isinstance(dim, DimVar):
        return 1, (dim.name,)
    if dim.op != "mul":
        return None
    left, right = product_factors(dim.lhs), product_factors(dim.rhs)
    if left is None or right is None:
        return None
    return left[0] * right[0], tuple(sorted(left[1] + right[1]))


def shape_product(dims: "tuple[ShapeDim, ...]") -> tuple[int, tuple[str, ...]] | None:
    """The element count of a shape as ``product_factors`` does, or None if not a product."""
    const, names = 1, ()  # type: tuple[int, tuple[str, ...]]
    for d in dims:
        f = product_factors(d)
        if f is None:
            return None
        const, names = const * f[0], names + f[1]
    return const, tuple(sorted(names))
