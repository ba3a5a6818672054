"""The vocabulary of the HIR text form: reserved words, literals, dims, types, attributes.

Everything here reads ``ast`` nodes and builds plain values (never ``Expr``s); nothing is
evaluated. Op attributes are read generically from the op class's dataclass field
annotations (``tuple[int, ...] | None``, ``ShapeDim``, ``Literal[...]``, ``DType``,
``Layout | ShardLayout | None``), so an op added to the catalogue is parsed and printed
without touching this file. The same annotations give the "expected ..." wording of
errors.
"""

import ast
import dataclasses
import inspect
import keyword
import math
import types as pytypes
import typing
from collections.abc import Callable
from typing import Literal, Union, get_args, get_origin

from tfexec.errors import ParseError
from tfexec.ir.dims import DimExpr, DimVar, ShapeDim
from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Op
from tfexec.ir.ops.catalogue import OPS_BY_NAME
from tfexec.ir.types import Layout, Mesh, Replicate, ShardLayout, Split, TensorType, TupleType, Type
from tfexec.text.source import Source

Scalar = Union[bool, int, float]

DTYPES: dict[str, DType] = {d.value: d for d in DType}
STRUCTS: dict[str, type] = {"Layout": Layout, "ShardLayout": ShardLayout, "Mesh": Mesh, "Split": Split, "Replicate": Replicate}
KEYWORDS: frozenset[str] = frozenset({"grid", "carry", "value", "constant", "const", "entry", "float"})
RESERVED: frozenset[str] = frozenset(OPS_BY_NAME) | KEYWORDS | frozenset(DTYPES) | frozenset(STRUCTS)
"""Names a binding, parameter, function, constant or child module may not take."""

_DIM_BINOPS: dict[type, str] = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floordiv", ast.Mod: "mod"}
_NONE = type(None)

IsValueName = Callable[[str], bool]
_T = typing.TypeVar("_T")


def usable_name(name: str) -> bool:
    """Whether ``name`` can be bound in the text form (an identifier, not a keyword or reserved)."""
    return name.isidentifier() and not keyword.iskeyword(name) and name not in RESERVED


def reserved_reason(name: str) -> str:
    """Why ``name`` cannot be bound (for error messages)."""
    if name in OPS_BY_NAME:
        return f"`{name}` is an op name"
    if name in DTYPES:
        return f"`{name}` is a dtype"
    if name in STRUCTS:
        return f"`{name}` is a layout constructor"
    if name in KEYWORDS:
        return f"`{name}` is a word of the text form"
    return f"`{name}` is not a usable name"


# -- literals -------------------------------------------------------------------------


def literal(src: Source, node: ast.expr) -> Scalar | None:
    """A Python scalar literal (``1``, ``-2.5``, ``True``, ``float("inf")``), else None."""
    sign = 1
    inner = node
    while isinstance(inner, ast.UnaryOp) and isinstance(inner.op, (ast.USub, ast.UAdd)):
        if isinstance(inner.op, ast.USub):
            sign = -sign
        inner = inner.operand
    value: Scalar
    if isinstance(inner, ast.Constant) and isinstance(inner.value, (bool, int, float)):
        value = inner.value
    elif isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "float":
        if len(inner.args) != 1 or inner.keywords or not isinstance(inner.args[0], ast.Constant) or not isinstance(
            inner.args[0].value, str
        ):
            raise src.error(inner, 'float(...) takes one string, e.g. float("inf"), float("-inf"), float("nan")')
        try:
            value = float(inner.args[0].value)
        except ValueError:
            raise src.error(inner.args[0], f"float() cannot read {inner.args[0].value!r} as a number") from None
    else:
        return None
    if inner is not node:
        if isinstance(value, bool):
            raise src.error(node, "a sign cannot apply to True/False")
        value = -value if sign < 0 else value
    return value


def format_scalar(value: Scalar) -> str:
    """The text of a scalar literal (``float("inf")`` for non-finite floats)."""
    if isinstance(value, bool) or isinstance(value, int):
        return repr(value)
    if math.isnan(value):
        return 'float("nan")'
    if math.isinf(value):
        return 'float("inf")' if value > 0 else 'float("-inf")'
    return repr(value)


def scalar_data(src: Source, node: ast.expr, depth: int = 0) -> "Scalar | list[object]":
    """The data of ``constant(...)``: a scalar literal or nested lists/tuples of them."""
    if isinstance(node, (ast.List, ast.Tuple)):
        if depth > 32:
            raise src.error(node, "constant data nested more than 32 levels deep")
        return [scalar_data(src, e, depth + 1) for e in node.elts]
    value = literal(src, node)
    if value is None:
        raise src.error(node, f"constant data must be numbers, True/False or nested lists of them, got `{src.segment(node)}`")
    return value


# -- dims and types -------------------------------------------------------------------


def dim(src: Source, node: ast.expr, is_value: IsValueName) -> ShapeDim:
    """A ``ShapeDim``: an int, a ``DimVar`` name, or ``+ - * // %`` / ``min`` / ``max`` of dims.

    Nothing folds: ``2 * 3`` stays a ``DimExpr`` so that printing and parsing are exact.
    """
    lit = literal(src, node) if not isinstance(node, ast.Name) else None
    if lit is not None:
        if isinstance(lit, bool) or not isinstance(lit, int):
            raise src.error(node, f"a dim must be an int, a DimVar name or dim arithmetic, got `{src.segment(node)}`")
        return lit
    if isinstance(node, ast.Name):
        if is_value(node.id):
            raise src.error(
                node, f"`{node.id}` is a value here, but a dim is static (an int, a DimVar name or dim arithmetic); "
                "use a dim_* op for run-time index arithmetic"
            )
        if not node.id.isidentifier() or node.id in DTYPES:
            raise src.error(node, f"`{node.id}` cannot name a DimVar")
        return DimVar(node.id)
    if isinstance(node, ast.BinOp) and type(node.op) in _DIM_BINOPS:
        op = _DIM_BINOPS[type(node.op)]
        return DimExpr(op, dim(src, node.left, is_value), dim(src, node.right, is_value))  # type: ignore[arg-type]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
        if len(node.args) != 2 or node.keywords:
            raise src.error(node, f"{node.func.id}(...) of dims takes exactly two dims")
        lhs, rhs = dim(src, node.args[0], is_value), dim(src, node.args[1], is_value)
        return DimExpr(node.func.id, lhs, rhs)  # type: ignore[arg-type]
    raise src.error(
        node, f"expected a dim (an int, a DimVar name, or dims combined with + - * // % min max), got `{src.segment(node)}`"
    )


def parse_type(src: Source, node: ast.expr, is_value: IsValueName) -> Type:
    """A type: ``f32[B, 64]``, ``i64[()]``, ``(f32[4], i64[()])`` (or ``tuple[f32[4], i64[()]]``),
    ``f32[8] @ Layout((2, 4))``."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in DTYPES:
        index = node.slice
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        shape = tuple(dim(src, e, is_value) for e in items)
        dtype = DTYPES[node.value.id]
        return _build(src, node, lambda: TensorType(shape, dtype))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        base = parse_type(src, node.left, is_value)
        if not isinstance(base, TensorType) or base.layout is not None:
            raise src.error(node.left, "a layout (`@ Layout(...)`) applies to one tensor type without a layout")
        layout = convert(src, node.right, Union[Layout, ShardLayout], "a tensor type's layout", is_value)
        assert isinstance(layout, (Layout, ShardLayout))
        return base.with_layout(layout)
    if isinstance(node, ast.Tuple):
        return TupleType(tuple(parse_type(src, e, is_value) for e in node.elts))
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "tuple":
        # Python's spelling of a tuple type; the printer writes the parenthesised one.
        index = node.slice
        fields = index.elts if isinstance(index, ast.Tuple) else [index]
        return TupleType(tuple(parse_type(src, e, is_value) for e in fields))
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        raise src.error(
            node.value, f"unknown dtype `{node.value.id}`; expected one of {', '.join(DTYPES)} "
            "(a tuple type is written (f32[4], i64[()]) or tuple[f32[4], i64[()]])"
        )
    raise src.error(
        node, f"expected a type such as f32[B, 64], i64[()], (f32[4], i64[()]) or f32[8] @ Layout((2, 4)), "
        f"got `{src.segment(node)}`"
    )


def _build(src: Source, node: ast.AST, make: Callable[[], _T]) -> _T:
    try:
        return make()
    except (TypeError, ValueError) as exc:
        raise src.error(node, str(exc)) from None


# -- attributes -----------------------------------------------------------------------


def _is_dim_hint(hint: object) -> bool:
    return get_origin(hint) is Union and set(get_args(hint)) == {int, DimVar, DimExpr}


def _is_union(hint: object) -> bool:
    return get_origin(hint) in (Union, pytypes.UnionType) and not _is_dim_hint(hint)


def describe_hint(hint: object) -> str:
    """What a value of annotation ``hint`` is, in words (``a tuple of ints, or None``)."""
    if hint is _NONE:
        return "None"
    if _is_dim_hint(hint):
        return "a dim (an int, a DimVar name or dim arithmetic)"
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a tuple, each item {describe_hint(args[0])}"
        return "a tuple of " + ", ".join(describe_hint(a) for a in args)
    if _is_union(hint):
        return ", or ".join(describe_hint(a) for a in args)
    if hint is bool:
        return "True or False"
    if hint is int:
        return "an int"
    if hint is float:
        return "a float"
    if hint is str:
        return "a string"
    if hint is DType:
        return "a dtype (" + ", ".join(DTYPES) + ")"
    if isinstance(hint, type) and hint.__name__ in STRUCTS:
        return f"{hint.__name__}(...)"
    return str(hint)


def convert(src: Source, node: ast.expr, hint: object, what: str, is_value: IsValueName) -> object:
    """The value of attribute text ``node`` for annotation ``hint``, or a ``ParseError``
    saying ``what`` expects which kind of value."""

    def fail() -> ParseError:
        return src.error(node, f"{what} expects {describe_hint(hint)}, got `{src.segment(node)}`")

    if hint is _NONE:
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        raise fail()
    if _is_dim_hint(hint):
        return dim(src, node, is_value)
    origin, args = get_origin(hint), get_args(hint)
    if _is_union(hint):
        if isinstance(node, ast.Constant) and node.value is None:
            if _NONE in args:
                return None
            raise fail()
        rest = [a for a in args if a is not _NONE]
        if all(a in (bool, int, float) for a in rest):
            lit = literal(src, node)
            if lit is None or (type(lit) not in rest and not (type(lit) is int and float in rest)):
                raise fail()
            return lit
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in STRUCTS:
            cls = STRUCTS[node.func.id]
            if cls in rest:
                return struct(src, node, cls, is_value)
            raise fail()
        for alternative in rest:
            try:
                return convert(src, node, alternative, what, is_value)
            except ParseError:
                continue
        raise fail()
    if origin is Literal:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in args:
            return node.value
        raise fail()
    if origin is tuple:
        if not isinstance(node, (ast.Tuple, ast.List)):
            raise fail()
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert(src, e, args[0], what, is_value) for e in node.elts)
        if len(node.elts) != len(args):
            raise fail()
        return tuple(convert(src, e, a, what, is_value) for e, a in zip(node.elts, args))
    if hint is bool:
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return node.value
        raise fail()
    if hint in (int, float):
        lit = literal(src, node)
        if lit is None or isinstance(lit, bool) or (hint is int and not isinstance(lit, int)):
            raise fail()
        return lit
    if hint is str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        raise fail()
    if hint is DType:
        if isinstance(node, ast.Name) and node.id in DTYPES:
            return DTYPES[node.id]
        raise fail()
    if isinstance(hint, type) and hint.__name__ in STRUCTS and STRUCTS[hint.__name__] is hint:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == hint.__name__:
            return struct(src, node, hint, is_value)
        raise fail()
    raise src.error(node, f"{what} has an attribute kind the text form cannot read ({hint})")


def struct(src: Source, node: ast.Call, cls: type, is_value: IsValueName) -> object:
    """``Layout(...)``, ``ShardLayout(...)``, ``Mesh(...)``, ``Split(...)``, ``Replicate()``:
    fields positionally in declaration order, or by keyword."""
    name = cls.__name__
    fields = dataclasses.fields(cls)
    hints = typing.get_type_hints(cls)
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise src.error(node, f"{name}(...) takes plain arguments (no * or **)")
    if len(node.args) > len(fields):
        raise src.error(node, f"{name} takes at most {len(fields)} argument(s) ({', '.join(f.name for f in fields) or 'none'}), got {len(node.args)}")
    values: dict[str, object] = {}
    pairs = [(f.name, a) for f, a in zip(fields, node.args)] + [(k.arg or "", k.value) for k in node.keywords]
    valid = {f.name for f in fields}
    for field_name, value_node in pairs:
        if field_name not in valid:
            raise src.error(value_node, f"{name} has no field `{field_name}`; valid: {', '.join(sorted(valid)) or 'none'}")
        if field_name in values:
            raise src.error(value_node, f"{name} field `{field_name}` is given twice")
        values[field_name] = convert(src, value_node, hints[field_name], f"{name} field `{field_name}`", is_value)
    for f in fields:
        if f.name not in values and f.default is dataclasses.MISSING:
            raise src.error(node, f"{name} needs its `{f.name}` ({describe_hint(hints[f.name])})")
    return _build(src, node, lambda: cls(**values))


_FIELDS_CACHE: dict[type, dict[str, object]] = {}


def op_fields(cls: type[Op]) -> dict[str, object]:
    """``field name -> annotation`` of an op class's static attributes."""
    found = _FIELDS_CACHE.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls)
        found = _FIELDS_CACHE[cls] = {f.name: hints[f.name] for f in dataclasses.fields(cls)}
    return found


_REQUIRED_CACHE: dict[type, frozenset[str]] = {}


def required_attributes(cls: type[Op]) -> frozenset[str]:
    """Attributes the op's builder in ``tfexec.ops`` requires (keyword-only, no default)."""
    cached = _REQUIRED_CACHE.get(cls)
    if cached is not None:
        return cached
    from tfexec import ops as builders

    required: frozenset[str] = frozenset()
    builder = getattr(builders, cls.name, None)
    if callable(builder):
        sig = inspect.signature(builder)
        fields = set(op_fields(cls))
        required = frozenset(
            p.name for p in sig.parameters.values()
            if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty and p.name in fields
        )
    _REQUIRED_CACHE[cls] = required
    return required


# -- printing values ------------------------------------------------------------------


def format_value(value: object) -> str:
    """The text of an attribute value (the inverse of ``convert``)."""
    if value is None:
        return "None"
    if isinstance(value, (bool, int, float)):
        return format_scalar(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, DType):
        return value.short
    if isinstance(value, tuple):
        items = [format_value(v) for v in value]
        return "(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"
    if isinstance(value, (DimVar, DimExpr, Layout, ShardLayout, Mesh, Split, Replicate, TensorType, TupleType)):
        return str(value)
    raise TypeError(f"the text form cannot print attribute value {value!r}")


__all__ = [
    "DTYPES", "KEYWORDS", "RESERVED", "STRUCTS", "convert", "describe_hint", "dim", "format_scalar", "format_value",
    "literal", "op_fields", "parse_type", "required_attributes", "reserved_reason", "scalar_data", "struct",
    "usable_name",
]
