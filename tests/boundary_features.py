"""What the boundary constructs of ``programs(ensure=("boundaries",))`` look like in a program
(``tfexec.testing._boundary``), for the tests that check the generator draws them.

``tests/`` is on ``sys.path``: import it as ``from boundary_features import ...``.
"""

import collections

from tfexec import Call, Constant, Expr, Function, GridRegionExpr, Tuple, TupleType, Var
from tfexec.ir.graph import loop_plan, post_order
from tfexec.ir.dtypes import DType
from tfexec.ir.types import TensorType

BOUNDARY_FEATURES = (
    "index to a handler", "index to a callee", "weak constants of one value, several dtypes", "tensor op on an outer index",
)
"""The features ``boundary_features`` counts that ``_boundary``'s constructs make."""

_INDEX = TensorType((), DType.int64)


def is_index(expr: Expr) -> bool:
    """A loop index (``k…``, the generator's names) or a ``dim_*`` result."""
    if isinstance(expr, Var):
        return expr.type == _INDEX and expr.name.startswith("k")
    return isinstance(expr, Call) and not isinstance(expr.target, Function) and expr.target.name.startswith("dim_")


def boundary_features(node: Expr, out: "collections.Counter[str]", outer: "set[int] | None" = None) -> None:
    """Count ``node``'s boundary features into ``out`` (``outer``: ids of the dim values made
    outside the loop body ``node`` is in, if any)."""
    if isinstance(node, Call):
        index_args = [a for a in node.args if is_index(a)]
        if index_args and isinstance(node.target, Function):
            out["index to a callee"] += 1
        elif index_args and node.target.name in ("testing_pass", "testing_probe"):
            out["index to a handler"] += 1
        elif outer is not None and not node.target.name.startswith("dim_") and any(id(a) in outer for a in index_args):
            out["tensor op on an outer index"] += 1
    if isinstance(node, Tuple):
        dtypes: dict[object, set[object]] = collections.defaultdict(set)
        for f in node.fields:
            if isinstance(f, Constant) and f.weak:
                dtypes[f.value].add(f.type.dtype)
        if any(len(d) > 1 for d in dtypes.values()):
            out["weak constants of one value, several dtypes"] += 1


def program_features(fn: Function) -> "collections.Counter[str]":
    """Every boundary feature of ``fn`` and its callees, loop bodies included, plus nested
    tuple parameters, index-valued carries and loops whose body ends in a call."""
    out: collections.Counter[str] = collections.Counter()
    todo, seen = [fn], set()
    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        if any(isinstance(p.type, TupleType) and any(isinstance(t, TupleType) for t in p.type.fields) for p in f.params):
            out["nested tuple param"] += 1
        stack: list[tuple[list[Expr], set[int] | None]] = [(post_order([f.body]), None)]
        while stack:
            nodes, outer = stack.pop()
            for node in nodes:
                boundary_features(node, out, outer)
                if isinstance(node, Call) and isinstance(node.target, Function):
                    todo.append(node.target)
                if isinstance(node, GridRegionExpr):
                    plan = loop_plan(node)
                    if any(v.type == _INDEX for v in node.carried_args) and any(is_index(y) for y in node.yield_values):
                        out["index-valued carry"] += 1
                    roots = [*node.yield_values] if node.carried_args else [node.body]
                    if any(isinstance(r, Call) and isinstance(r.target, Function) for r in roots):
                        out["callee last in a loop body"] += 1
                    made_outside = {id(e) for e in plan.frontier if is_index(e)}
                    stack.append((list(plan.schedule), made_outside))
    return out
