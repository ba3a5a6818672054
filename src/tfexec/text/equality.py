"""Structural equality of HIR up to renaming: what a print → parse round trip preserves.

``structural_difference(a, b)`` returns None when ``a`` and ``b`` (modules, functions or
expressions) are the same program up to the names of variables, bindings and spans, and
otherwise a sentence naming the first difference. Sharing counts: a node read twice in
``a`` must correspond to one node read twice in ``b``. Constants compare by their value
as materialised in their type (bitwise, NaN equal to NaN), so a rank-0 tensor and the
same Python scalar are equal only when both are strong or both weak tensors. The walk is
iterative over graph depth; it recurses only into loop bodies and callees.
"""

import torch

from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.module import IRModule


def structural_difference(a: "IRModule | Function | Expr", b: "IRModule | Function | Expr") -> str | None:
    """None when ``a`` and ``b`` are structurally equal up to renaming, else the first difference."""
    cmp = _Comparer()
    if isinstance(a, IRModule) and isinstance(b, IRModule):
        return cmp.modules(a, b, "module")
    if isinstance(a, Function) and isinstance(b, Function):
        return cmp.functions(a, b)
    if not isinstance(a, (IRModule, Function)) and not isinstance(b, (IRModule, Function)):
        return cmp.exprs([(a, b)], {}, "expr")
    return f"cannot compare {type(a).__name__} with {type(b).__name__}"


class _Comparer:
    def __init__(self) -> None:
        self.fn_pairs: dict[tuple[int, int], str | None] = {}
        self.node_map: dict[int, Expr] = {}
        self.reverse: dict[int, Expr] = {}

    def modules(self, a: IRModule, b: IRModule, where: str) -> str | None:
        if list(a.functions) != list(b.functions):
            return f"{where}: functions {list(a.functions)} vs {list(b.functions)}"
        if dict(a.constants) != dict(b.constants):
            return f"{where}: constants {dict(a.constants)} vs {dict(b.constants)}"
        if a.entry != b.entry:
            return f"{where}: entry {a.entry} vs {b.entry}"
        if list(a.children) != list(b.children):
            return f"{where}: children {list(a.children)} vs {list(b.children)}"
        for name in a.functions:
            why = self.functions(a.functions[name], b.functions[name])
            if why is not None:
                return f"{where}.{name}: {why}"
        for name in a.children:
            why = self.modules(a.children[name], b.children[name], f"{where}.{name}")
            if why is not None:
                return why
        return None

    def functions(self, f: Function, g: Function) -> str | None:
        key = (id(f), id(g))
        if key in self.fn_pairs:
            return self.fn_pairs[key]
        self.fn_pairs[key] = None  # no recursion through calls is possible, but be safe
        why = self._function(f, g)
        self.fn_pairs[key] = why
        return why

    def _function(self, f: Function, g: Function) -> str | None:
        if len(f.params) != len(g.params):
            return f"function {f.name}: {len(f.params)} vs {len(g.params)} parameters"
        if f.ret_type != g.ret_type:
            return f"function {f.name}: return type {f.ret_type} vs {g.ret_type}"
        vars_: dict[int, Var] = {}
        for p, q in zip(f.params, g.params):
            if p.type != q.type:
                return f"function {f.name}: parameter {p.name}: {p.type} vs {q.type}"
            vars_[id(p)] = q
        saved = self.node_map, self.reverse
        self.node_map, self.reverse = {}, {}
        try:
            return self.exprs([(f.body, g.body)], vars_, f"function {f.name}")
        finally:
            self.node_map, self.reverse = saved

    def exprs(self, pairs: list[tuple[Expr, Expr]], vars_: dict[int, Var], where: str) -> str | None:
        stack = list(reversed(pairs))
        while stack:
            a, b = stack.pop()
            if type(a) is not type(b):
                return f"{where}: {type(a).__name__} vs {type(b).__name__} ({a!r} vs {b!r})"
            if isinstance(a, Var):
                if vars_.get(id(a)) is not b:
                    return f"{where}: variable {a.name} does not correspond to {b!r}"
                continue
            mapped = self.node_map.get(id(a))
            if mapped is not None:
                if mapped is not b:
                    return f"{where}: sharing differs at {a!r}"
                continue
            if id(b) in self.reverse:
                return f"{where}: sharing differs at {b!r}"
            self.node_map[id(a)] = b
            self.reverse[id(b)] = a
            why = self.node(a, b, vars_, where, stack)
            if why is not None:
                return why
        return None

    def node(self, a: Expr, b: Expr, vars_: dict[int, Var], where: str, stack: list[tuple[Expr, Expr]]) -> str | None:
        if isinstance(a, Constant):
            assert isinstance(b, Constant)
            return None if _same_constant(a, b) else f"{where}: constants differ: {a!r} vs {b!r}"
        if isinstance(a, ConstTensor):
            assert isinstance(b, ConstTensor)
            return None if (a.name, a.type) == (b.name, b.type) else f"{where}: {a!r} vs {b!r}"
        if isinstance(a, Call):
            assert isinstance(b, Call)
            if isinstance(a.target, Function) or isinstance(b.target, Function):
                if not (isinstance(a.target, Function) and isinstance(b.target, Function)):
                    return f"{where}: call targets differ: {a!r} vs {b!r}"
                why = self.functions(a.target, b.target)
                if why is not None:
                    return f"{where}: callee {a.target.name}: {why}"
            elif a.target != b.target:
                return f"{where}: ops differ: {a.target} vs {b.target}"
            return _push(a.args, b.args, stack, where, "arguments")
        if isinstance(a, Tuple):
            assert isinstance(b, Tuple)
            return _push(a.fields, b.fields, stack, where, "fields")
        if isinstance(a, TupleGetItem):
            assert isinstance(b, TupleGetItem)
            if a.index != b.index:
                return f"{where}: projection [{a.index}] vs [{b.index}]"
            stack.append((a.tuple, b.tuple))
            return None
        assert isinstance(a, GridRegionExpr) and isinstance(b, GridRegionExpr)
        return self.region(a, b, vars_, where)

    def region(self, a: GridRegionExpr, b: GridRegionExpr, vars_: dict[int, Var], where: str) -> str | None:
        if a.extent != b.extent:
            return f"{where}: loop extent {a.extent} vs {b.extent}"
        if len(a.carried_args) != len(b.carried_args):
            return f"{where}: loop with {len(a.carried_args)} vs {len(b.carried_args)} carries"
        why = self.exprs(list(zip(a.init_args, b.init_args)), vars_, where)
        if why is not None:
            return why
        inner = dict(vars_)
        for v, w in zip((a.induction_var, *a.carried_args), (b.induction_var, *b.carried_args)):
            if v.type != w.type:
                return f"{where}: loop variable {v.name}: {v.type} vs {w.type}"
            inner[id(v)] = w
        pairs = list(zip(a.yield_values, b.yield_values)) + [(a.body, b.body)]
        return self.exprs(pairs, inner, f"{where} / loop")


def _push(xs: tuple[Expr, ...], ys: tuple[Expr, ...], stack: list[tuple[Expr, Expr]], where: str, what: str) -> str | None:
    if len(xs) != len(ys):
        return f"{where}: {len(xs)} vs {len(ys)} {what}"
    stack.extend(reversed(list(zip(xs, ys))))
    return None


def _same_constant(a: Constant, b: Constant) -> bool:
    if a.type != b.type or a.weak != b.weak:
        return False
    if a.weak and isinstance(a.value, torch.Tensor) != isinstance(b.value, torch.Tensor):
        return False  # a weak Python scalar promotes differently from a weak tensor
    try:
        x = torch.as_tensor(a.value).to(a.type.dtype.torch)
        y = torch.as_tensor(b.value).to(b.type.dtype.torch)
    except (RuntimeError, TypeError, ValueError, OverflowError):
        return type(a.value) is type(b.value) and bool(a.value == b.value)
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    if x.dtype.is_floating_point:
        same_nan = bool(torch.equal(torch.isnan(x), torch.isnan(y)))
        return same_nan and bool(torch.equal(torch.nan_to_num(x), torch.nan_to_num(y)))
    return bool(torch.equal(x, y))


__all__ = ["structural_difference"]
