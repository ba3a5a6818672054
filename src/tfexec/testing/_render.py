"""``render``: a listing of a generated function named by node keys, for failure reports.

Each node gets the local part of its node key (``%3``, ``h#1``; ``acc/%2`` for a node of
the loop ``acc``'s body), so a line of an ``EquivalenceReport`` (``f/%3``,
``f/acc[1]/%2``, ``f/g0#1/%4``) points at a line of the listing.
"""

from collections.abc import Sequence

import torch

from tfexec.ir.dims import DimExpr, DimVar
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.graph import function_order, loop_plan
from tfexec.semantics.keys import ScopeKeys, function_keys, loop_keys


def render(fn: Function) -> str:
    """A listing of ``fn`` and the functions it calls, one line per node, each named by the
    local part of its node key (not the text format: ``print_ir`` is that)."""
    lines: list[str] = []
    pending, done = [fn], set()
    while pending:
        f = pending.pop(0)
        if id(f) in done:
            continue
        done.add(id(f))
        params = ", ".join(f"{p.name}: {p.type}" for p in f.params)
        lines.append(f"def {f.name}({params}){f' -> {f.ret_type}' if f.ret_type is not None else ''}:")
        order = function_order(f)
        names: dict[int, str] = {}
        _scope(order, function_keys(f), "", "    ", names, lines, pending)
        lines.append(f"    return {_ref(f.body, names)}")
    return "\n".join(lines)


def _ref(e: Expr, names: dict[int, str]) -> str:
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Constant) and not isinstance(e.value, torch.Tensor):
        return repr(e.value)
    return names.get(id(e), "?")


def _scope(
    order: Sequence[Expr], keys: ScopeKeys, prefix: str, indent: str, names: dict[int, str], lines: list[str],
    pending: list[Function],
) -> None:
    """List one scope's nodes (a function body, or a loop body under ``prefix``)."""
    for e in order:
        if isinstance(e, Var) or (isinstance(e, Constant) and not isinstance(e.value, torch.Tensor)):
            continue
        name = names[id(e)] = prefix + keys.local[id(e)]
        if isinstance(e, Constant):
            assert isinstance(e.value, torch.Tensor)
            lines.append(f"{indent}{name} = constant({e.value.tolist()}, {e.type})")
        elif isinstance(e, Tuple):
            lines.append(f"{indent}{name} = ({''.join(_ref(f, names) + ', ' for f in e.fields).rstrip()})")
        elif isinstance(e, TupleGetItem):
            lines.append(f"{indent}{name} = {_ref(e.tuple, names)}[{e.index}]")
        elif isinstance(e, Call):
            attrs: list[str] = []
            if isinstance(e.target, Function):
                pending.append(e.target)
            else:
                attrs = [f"{k}={_shown(v)}" for k, v in e.target.attributes().items()]
            lines.append(f"{indent}{name} = {e.target.name}({', '.join([_ref(a, names) for a in e.args] + attrs)})")
        elif isinstance(e, GridRegionExpr):
            carries = ", ".join(f"{v.name}={_ref(i, names)}" for v, i in zip(e.carried_args, e.init_args))
            lines.append(f"{indent}{name} = grid(extent={e.extent}, index={e.induction_var.name}, carries=({carries})):")
            plan = loop_plan(e)
            _scope(plan.schedule, loop_keys(e), f"{name}/", indent + "    ", names, lines, pending)
            roots = ", ".join(_ref(r, names) for r in plan.roots)
            lines.append(f"{indent}    {'carry' if e.carried_args else 'value'}({roots})")
        else:
            lines.append(f"{indent}{name} = {e!r}")


def _shown(value: object) -> str:
    """An attribute as the listing shows it: dims and dtypes by their text spelling."""
    if isinstance(value, tuple):
        return "(" + ", ".join(_shown(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, (DimVar, DimExpr, DType)):
        return str(value)
    return repr(value)
