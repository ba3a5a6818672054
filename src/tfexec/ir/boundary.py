"""Function-boundary compatibility (hir §1.1), shared by type inference and evaluation.

An argument of type ``A`` fits a parameter annotated ``P`` when both are tensors of the
same dtype and rank, every static dim of ``P`` equals ``A``'s, every ``DimVar`` of ``P``
binds consistently within the one call, and ``P.layout`` is None or equal to
``A.layout``; tuples match field by field. Evaluation passes concrete types, inference
symbolic ones: the rule is the same code.
"""

from collections.abc import Sequence

from tfexec.ir.dims import DimExpr, DimVar, ShapeDim, dim_expr
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.wording import a as with_article


def substitute_dim(dim: ShapeDim, bindings: dict[str, ShapeDim]) -> ShapeDim:
    """``dim`` with bound ``DimVar``s replaced (ints fold); unbound names stay symbolic."""
    if isinstance(dim, int):
        return dim
    if isinstance(dim, DimVar):
        return bindings.get(dim.name, dim)
    return dim_expr(dim.op, substitute_dim(dim.lhs, bindings), substitute_dim(dim.rhs, bindings))


def substitute_type(t: Type, bindings: dict[str, ShapeDim]) -> Type:
    """``t`` with its dims substituted."""
    if isinstance(t, TupleType):
        return TupleType(tuple(substitute_type(f, bindings) for f in t.fields))
    return TensorType(tuple(substitute_dim(d, bindings) for d in t.shape), t.dtype, t.layout)


def bind_dims(param: Type, arg: Type, bindings: dict[str, ShapeDim]) -> None:
    """Bind each plain ``DimVar`` axis of ``param`` not bound yet to ``arg``'s size there.

    The first occurrence wins; where the structure, dtype or rank already disagree nothing
    is bound (``boundary_mismatch`` reports that). Binding every parameter first lets a
    ``DimExpr`` axis such as ``N * 2`` come before the axis that binds ``N``.
    """
    if isinstance(param, TupleType) or isinstance(arg, TupleType):
        if isinstance(param, TupleType) and isinstance(arg, TupleType) and len(param.fields) == len(arg.fields):
            for p_field, a_field in zip(param.fields, arg.fields):
                bind_dims(p_field, a_field, bindings)
        return
    if param.dtype != arg.dtype or param.rank != arg.rank:
        return
    for p, a in zip(param.shape, arg.shape):
        if isinstance(p, DimVar) and p.name not in bindings:
            bindings[p.name] = a


def call_mismatch(params: Sequence[tuple[str, Type]], args: Sequence[Type]) -> tuple[str | None, dict[str, ShapeDim]]:
    """Check one call's arguments against its ``(name, annotation)`` parameters.

    Returns the first mismatch (``argument x: ...``) or None, and the call's fresh dim
    bindings. Every parameter's ``DimVar``s are bound before any ``DimExpr`` is checked.
    """
    bindings: dict[str, ShapeDim] = {}
    for (_, p_type), a_type in zip(params, args):
        bind_dims(p_type, a_type, bindings)
    for (name, p_type), a_type in zip(params, args):
        why = boundary_mismatch(p_type, a_type, bindings, f"argument {name}: ")
        if why is not None:
            return why, bindings
    return None, bindings


def boundary_mismatch(param: Type, arg: Type, bindings: dict[str, ShapeDim], where: str = "") -> str | None:
    """Why ``arg`` does not fit ``param`` (binding ``DimVar``s into ``bindings``), or None.

    ``param``'s own ``DimVar``s are bound first, so ``f32[N * 2, N]`` checks axis 0 against
    the ``N`` axis 1 binds; use ``call_mismatch`` to do the same across a call's parameters.
    """
    bind_dims(param, arg, bindings)
    return _mismatch(param, arg, bindings, where)


def _mismatch(param: Type, arg: Type, bindings: dict[str, ShapeDim], where: str) -> str | None:
    if isinstance(param, TupleType) or isinstance(arg, TupleType):
        if not (isinstance(param, TupleType) and isinstance(arg, TupleType)):
            return f"{where}expected {param}, found {arg}"
        if len(param.fields) != len(arg.fields):
            return f"{where}expected {with_article(f'{len(param.fields)}-tuple')} {param}, found {arg}"
        for i, (p_field, a_field) in enumerate(zip(param.fields, arg.fields)):
            why = _mismatch(p_field, a_field, bindings, f"{where}field {i}: ")
            if why is not None:
                return why
        return None
    if param.dtype != arg.dtype:
        return f"{where}expected dtype {param.dtype}, found {arg.dtype} ({arg})"
    if param.rank != arg.rank:
        return f"{where}expected rank {param.rank} ({param}), found rank {arg.rank} ({arg})"
    for axis, (p, a) in enumerate(zip(param.shape, arg.shape)):
        if isinstance(p, DimVar):
            bound = bindings.get(p.name)
            if bound is None:
                bindings[p.name] = a
            elif bound != a:
                return f"{where}dim {p.name} is bound to {bound} but axis {axis} has size {a} ({arg})"
        elif isinstance(p, DimExpr):
            want = substitute_dim(p, bindings)
            if want != a:
                return f"{where}axis {axis} must have size {p} = {want}, found {a} ({arg})"
        elif p != a:
            return f"{where}axis {axis} must have size {p}, found {a} ({arg})"
    if param.layout is not None and param.layout != arg.layout:
        return f"{where}expected layout {param.layout}, found {arg.layout or 'none'}"
    return None
