"""Print one function body in the HIR text form (see ``tfexec.text.printer``).

``FunctionPrinter`` plans the body's scopes (a loop body holds what depends on its index
or carries), counts how often each node is read, decides which nodes are statements and
which are written inline, allocates names and emits the lines. ``Names`` is the name
allocator: the preferred name when it is free and usable, else ``name_1``, ``name_2``…,
and ``v0``, ``v1``… without a preference; it is deterministic in allocation order, which
makes printing a fixed point after one print.
"""

import keyword
import re
from collections.abc import Iterable

from tfexec.errors import TfexecError
from tfexec.infer import infer_types
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import (
    Call,
    Constant,
    ConstTensor,
    Expr,
    Function,
    GridRegionExpr,
    Tuple,
    TupleGetItem,
    Var,
)
from tfexec.ir.graph import post_order
from tfexec.ir.types import TensorType, TupleType
from tfexec.text import grammar as g
from tfexec.text._print_values import attribute_texts, constant_text, dim_names_of, is_literal

INLINE_DEPTH = 6
"""The deepest an unnamed expression is nested inline before it gets a name."""

_INDEX = TensorType((), DType.int64)
INDENT = "    "


def sanitize(name: str | None) -> str | None:
    """``name`` made an identifier (``1st.in`` → ``_1st_in``), or None when empty."""
    if not name:
        return None
    text = re.sub(r"\W", "_", name)
    if not text or text[0].isdigit():
        text = "_" + text
    if keyword.iskeyword(text):
        text += "_"
    return text


class Names:
    """A name allocator: the preferred name when free and usable, else ``name_1``, ``name_2``…;
    ``v0``, ``v1``… when there is no preference. Deterministic in allocation order."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken = set(taken)
        self.counter = 0

    def take(self, preferred: str | None, fallback: str = "v") -> str:
        base = sanitize(preferred)
        if base is not None and g.usable_name(base) and base not in self.taken:
            self.taken.add(base)
            return base
        if base is None:
            while True:
                name = f"{fallback}{self.counter}"
                self.counter += 1
                if g.usable_name(name) and name not in self.taken:
                    self.taken.add(name)
                    return name
        n = 1
        while f"{base}_{n}" in self.taken or not g.usable_name(f"{base}_{n}"):
            n += 1
        self.taken.add(f"{base}_{n}")
        return f"{base}_{n}"


class Context:
    """What a function's text may refer to: function names and constant spellings."""

    def __init__(self) -> None:
        self.functions: dict[int, str] = {}
        self.constants: dict[str, tuple[str, TensorType]] = {}  # key -> (spelling, type)
        self.module_names: set[str] = set()


class _Loop:
    """How a loop prints: its body statements (in order) and the outer nodes it reads."""

    __slots__ = ("schedule", "frontier", "conventional")

    def __init__(self, schedule: list[Expr], frontier: list[Expr], conventional: bool) -> None:
        self.schedule = schedule
        self.frontier = frontier
        self.conventional = conventional


def _conventional(region: GridRegionExpr) -> bool:
    """Whether a carried loop's ``body`` is what the parser makes without ``body=``."""
    ys, body = region.yield_values, region.body
    if len(ys) == 1:
        return body is ys[0]
    return isinstance(body, Tuple) and len(body.fields) == len(ys) and all(a is b for a, b in zip(body.fields, ys))


class FunctionPrinter:
    """Print one function: ``analyse`` plans statements and inlining, ``lines`` emits them."""

    def __init__(self, fn: Function, name: str, ctx: Context, entry: bool) -> None:
        self.fn = fn
        self.name = name
        self.ctx = ctx
        self.entry = entry
        self.loops: dict[int, _Loop] = {}
        self.inline: set[int] = set()
        self.depth: dict[int, int] = {}
        self.canonical: dict[int, tuple[GridRegionExpr, int]] = {}
        self.projections: dict[int, list[tuple[int, int]]] = {}  # loop -> [(projection id, index)]
        self.whole: set[int] = set()  # multi-carry loops whose tuple is read directly
        self.alias: set[int] = set()  # ConstTensor nodes printed as the module constant's name
        self.names: dict[int, str] = {}
        self.var_names: dict[int, str] = {}
        self.scope_vars: list[Var] = list(fn.params)
        self.out: list[str] = []
        self.alloc = Names()
        self._outer: list[Expr] | None = None
        self._order: list[Expr] | None = None

    # -- analysis ------------------------------------------------------------------------

    def operands(self, node: Expr) -> tuple[Expr, ...]:
        """What ``node`` reads in its own scope (a loop: its inits and invariant frontier)."""
        if isinstance(node, Call):
            return node.args
        if isinstance(node, Tuple):
            return node.fields
        if isinstance(node, TupleGetItem):
            return (node.tuple,)
        if isinstance(node, GridRegionExpr):
            return node.init_args + tuple(self.loop(node).frontier)
        return ()

    def post_order(self, roots: Iterable[Expr]) -> list[Expr]:
        return post_order(roots, children=self.operands)

    def loop(self, region: GridRegionExpr) -> _Loop:
        """The (memoised) plan of a loop: variant nodes inside, invariant ones before it."""
        found = self.loops.get(id(region))
        if found is not None:
            return found
        conventional = bool(region.carried_args) and _conventional(region)
        roots = list(region.yield_values) if region.carried_args else [region.body]
        if region.carried_args and not conventional:
            roots.append(region.body)
        bound = {id(region.induction_var)} | {id(v) for v in region.carried_args}
        variant: set[int] = set()
        schedule: list[Expr] = []
        for node in self.post_order(roots):
            if id(node) in bound or any(id(c) in variant for c in self.operands(node)):
                variant.add(id(node))
                schedule.append(node)
        frontier: list[Expr] = []
        seen: set[int] = set()
        readers: list[tuple[Expr, ...]] = [self.operands(node) for node in schedule] + [tuple(roots)]
        for children in readers:
            for child in children:
                if id(child) not in variant and id(child) not in seen:
                    seen.add(id(child))
                    frontier.append(child)
        info = self.loops[id(region)] = _Loop(schedule, frontier, conventional)
        return info

    def outer(self) -> list[Expr]:
        """The function body's own scope, in post-order."""
        if self._outer is None:
            self._outer = self.post_order([self.fn.body])
        return self._outer

    def emission_order(self) -> list[Expr]:
        """Every printed node, in the order its statement (or inline use) is reached."""
        if self._order is not None:
            return self._order
        out: list[Expr] = []
        self._order = out
        pending: list[list[Expr]] = [self.outer()]
        positions = [0]
        while pending:
            scope, i = pending[-1], positions[-1]
            if i == len(scope):
                pending.pop()
                positions.pop()
                continue
            positions[-1] = i + 1
            node = scope[i]
            out.append(node)
            if isinstance(node, GridRegionExpr):
                pending.append(self.loop(node).schedule)
                positions.append(0)
        return out

    def text_operands(self, node: Expr) -> tuple[Expr, ...]:
        if isinstance(node, GridRegionExpr):
            extra = (node.body,) if not node.carried_args or not self.loop(node).conventional else ()
            return node.init_args + node.yield_values + extra
        if isinstance(node, TupleGetItem) and id(node) in self.canonical:
            return ()
        return self.operands(node)

    def analyse(self) -> list[Expr]:
        order = self.emission_order()
        groups: dict[tuple[int, int], list[TupleGetItem]] = {}
        regions: dict[int, GridRegionExpr] = {}
        for node in order:
            if isinstance(node, TupleGetItem) and isinstance(node.tuple, GridRegionExpr) and len(node.tuple.carried_args) > 1:
                if node.index < len(node.tuple.carried_args):
                    groups.setdefault((id(node.tuple), node.index), []).append(node)
                    regions[id(node.tuple)] = node.tuple
        for (rid, index), projections in groups.items():
            if len(projections) == 1:
                self.canonical[id(projections[0])] = (regions[rid], index)
                self.projections.setdefault(rid, []).append((id(projections[0]), index))
        uses: dict[int, int] = {id(self.fn.body): 1}
        for node in order:
            for child in self.text_operands(node):
                uses[id(child)] = uses.get(id(child), 0) + 1
        aliased: set[str] = set()
        for node in order:
            if isinstance(node, GridRegionExpr) and len(node.carried_args) > 1 and uses.get(id(node), 0):
                self.whole.add(id(node))
            if isinstance(node, ConstTensor) and node.name not in aliased:
                known = self.ctx.constants.get(node.name)
                if known is not None and known[1] == node.type:
                    aliased.add(node.name)
                    self.alias.add(id(node))
            if self.atom(node, uses):
                self.depth[id(node)] = 0
                self.inline.add(id(node))
                continue
            if uses.get(id(node), 0) != 1 or _binding(node) or isinstance(node, (Var, GridRegionExpr)):
                continue
            if id(node) in self.canonical:
                continue
            depth = 1 + max((self.depth.get(id(c), 0) for c in self.text_operands(node) if id(c) in self.inline), default=0)
            if depth <= INLINE_DEPTH:
                self.inline.add(id(node))
                self.depth[id(node)] = depth
        return order

    def atom(self, node: Expr, uses: dict[int, int]) -> bool:
        if isinstance(node, ConstTensor):
            return id(node) in self.alias
        if isinstance(node, Constant) and is_literal(node):
            return uses.get(id(node), 0) <= 1 and not _binding(node)
        return False

    # -- emission -------------------------------------------------------------------------

    def lines(self) -> list[str]:
        fn = self.fn
        self.analyse()
        taken = set(self.ctx.module_names) | dim_names_of(fn, self.emission_order())
        self.alloc = Names(taken)
        params = []
        for p in fn.params:
            self.var_names[id(p)] = self.alloc.take(p.name, "p")
            params.append(f"{self.var_names[id(p)]}: {p.type}")
        ret = f" -> {fn.ret_type}" if fn.ret_type is not None else ""
        if self.entry:
            self.out.append("@entry")
        self.out.append(f"def {self.name}({', '.join(params)}){ret}:")
        self.scope(self.outer(), 1)
        self.out.append(f"{INDENT}return {self.ref(fn.body)}")
        return self.out

    def scope(self, nodes: list[Expr], level: int) -> None:
        pad = INDENT * level
        for node in nodes:
            if isinstance(node, Var) or id(node) in self.inline or id(node) in self.canonical:
                continue
            if isinstance(node, GridRegionExpr):
                self.region(node, level)
                continue
            name = self.names[id(node)] = self.alloc.take(_binding(node))
            self.out.append(f"{pad}{name} = {self.text(node)}")

    def region(self, region: GridRegionExpr, level: int) -> None:
        pad = INDENT * level
        info = self.loop(region)
        iv = region.induction_var
        saved = {id(v): self.var_names.get(id(v)) for v in (iv, *region.carried_args)}
        iv_name = self.alloc.take(iv.name, "k")
        phi_names = [self.alloc.take(v.name, "c") for v in region.carried_args]
        n = len(phi_names)
        args = [str(region.extent)] + [self.ref(a) for a in region.init_args]
        if n and self.needs_types(region):
            args.append(f"types=({', '.join(str(v.type) for v in region.carried_args)}{',' if n == 1 else ''})")
        if iv.type != _INDEX:
            args.append(f"index_type={iv.type}")
        call = f"grid({', '.join(args)})"
        if n == 0:
            target = self.names[id(region)] = self.alloc.take(_binding(region), "out")
        elif n == 1:
            target = self.names[id(region)] = phi_names[0]
        else:
            target = "(" + ", ".join(phi_names) + ")"
            if id(region) in self.whole:
                whole = self.names[id(region)] = self.alloc.take(_binding(region), "loop")
                call = f"({whole} := {call})"
        self.out.append(f"{pad}for {iv_name}, {target} in {call}:")
        self.var_names[id(iv)] = iv_name
        for v, name in zip(region.carried_args, phi_names):
            self.var_names[id(v)] = name
        self.scope_vars.extend((iv, *region.carried_args))
        self.scope(info.schedule, level + 1)
        inner = INDENT * (level + 1)
        if n == 0:
            self.out.append(f"{inner}value({self.ref(region.body)})")
        else:
            body = "" if info.conventional else f", body={self.ref(region.body)}"
            self.out.append(f"{inner}carry({', '.join(self.ref(y) for y in region.yield_values)}{body})")
        del self.scope_vars[len(self.scope_vars) - n - 1 :]
        for key, old in saved.items():
            if old is None:
                self.var_names.pop(key, None)
            else:
                self.var_names[key] = old
        for node_id, index in self.projections.get(id(region), []):
            self.names[node_id] = phi_names[index]

    def needs_types(self, region: GridRegionExpr) -> bool:
        want = tuple(v.type for v in region.carried_args)
        known = tuple(a.checked_type for a in region.init_args)
        if known == want:
            return False
        probe = Function("grid_init", tuple(self.scope_vars), Tuple(region.init_args))
        try:
            infer_types(probe)
        except (TfexecError, TypeError, ValueError, ArithmeticError):
            return True
        t = probe.body.checked_type
        return not isinstance(t, TupleType) or t.fields != want

    # -- expressions ----------------------------------------------------------------------

    def ref(self, node: Expr) -> str:
        if isinstance(node, Var):
            return self.var_names.get(id(node)) or sanitize(node.name) or "_"
        if id(node) in self.inline:
            return self.text(node)
        return self.names[id(node)]

    def text(self, node: Expr) -> str:
        if isinstance(node, Call):
            args = [self.ref(a) for a in node.args]
            target = node.target
            if isinstance(target, Function):
                return f"{self.ctx.functions[id(target)]}({', '.join(args)})"
            return f"{target.name}({', '.join(args + attribute_texts(target))})"
        if isinstance(node, Tuple):
            items = [self.ref(f) for f in node.fields]
            return "(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"
        if isinstance(node, TupleGetItem):
            inner = self.ref(node.tuple)
            return f"({inner})[{node.index}]" if inner.startswith("-") else f"{inner}[{node.index}]"
        if isinstance(node, Constant):
            return constant_text(node)
        if isinstance(node, ConstTensor):
            if id(node) in self.alias:
                return self.ctx.constants[node.name][0]
            return f"const({node.name!r}, {node.type})"
        raise TfexecError(f"print_ir: {type(node).__name__} has no inline form")


def _binding(node: Expr) -> str | None:
    span = node.span
    return span.binding if span is not None and span.binding else None


__all__ = ["INLINE_DEPTH", "Context", "FunctionPrinter", "Names", "sanitize"]
