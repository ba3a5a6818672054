"""Parse one ``def`` of the HIR text form: parameters, statements, loops, expressions.

``FunctionParser`` turns a function's ``ast`` into HIR nodes, each with its ``Span``. It
reads the module it belongs to through ``ModuleScope`` (constants, children, functions),
keeps one name scope per loop body, and infers carried types from init values. The
grammar and the design notes are in ``tfexec.text.parser``.
"""

import ast
import difflib
from typing import Protocol

import torch

from tfexec.errors import ParseError, TfexecError
from tfexec.infer import infer_types
from tfexec.ir.dims import ShapeDim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import weak_constant_error
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.ops.base import Op
from tfexec.ir.ops.catalogue import OPS_BY_NAME
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.text import grammar as g
from tfexec.text.source import Source

_INDEX = TensorType((), DType.int64)
_MAX_DEPTH = 100
_PLAIN_OPS: dict[type[Op], Op] = {}
"""One shared instance per attribute-less op class (ops are immutable values)."""
_OPERATOR_OPS: dict[type, str] = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow", ast.MatMult: "matmul",
    ast.USub: "neg", ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge",
    ast.And: "logical_and", ast.Or: "logical_or", ast.FloorDiv: "dim_floordiv", ast.Mod: "dim_mod",
}
_STATEMENT_HINTS: dict[type, str] = {
    ast.Import: "import statements are not part of the HIR text form: nothing is imported or executed",
    ast.ImportFrom: "import statements are not part of the HIR text form: nothing is imported or executed",
    ast.While: "while loops are not part of the HIR text form; loop with `for k, acc in grid(n, acc0):`",
    ast.If: "if statements are not part of the HIR text form; select values with where(cond, a, b)",
    ast.With: "with statements are not part of the HIR text form",
    ast.Try: "try statements are not part of the HIR text form",
    ast.Global: "global statements are not part of the HIR text form",
    ast.Nonlocal: "nonlocal statements are not part of the HIR text form",
    ast.Delete: "del statements are not part of the HIR text form",
    ast.AugAssign: "augmented assignment is not part of the HIR text form; write `x = add(x, y)`",
    ast.AsyncFunctionDef: "async functions are not part of the HIR text form",
    ast.AsyncFor: "async for is not part of the HIR text form",
    ast.Raise: "raise statements are not part of the HIR text form",
    ast.Assert: "assert statements are not part of the HIR text form",
    ast.Pass: "pass statements are not part of the HIR text form",
}


class ModuleScope(Protocol):
    """What a function body may refer to in its module."""

    src: Source
    constants: dict[str, tuple[str, TensorType, ast.AnnAssign]]
    """alias -> (key, type, declaration)"""
    defs: dict[str, ast.FunctionDef]
    functions: dict[str, Function]
    external: dict[str, Function]
    children: "dict[str, ModuleScope]"

    def resolve_dotted(self, parts: list[str]) -> tuple[str, TensorType, ast.AnnAssign] | None: ...

def no_values(name: str) -> bool:
    return False


def is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def statement_message(stmt: ast.stmt, where: str) -> str:
    hint = _STATEMENT_HINTS.get(type(stmt))
    if hint is not None:
        return hint
    kind = type(stmt).__name__
    if isinstance(stmt, ast.Assign):
        return f"assignments are not allowed {where}; declare a module constant as `name: f32[...] = const()`"
    if isinstance(stmt, ast.Expr):
        return f"an expression statement does nothing {where}; bind it to a name or return it"
    return f"`{kind}` statements are not part of the HIR text form ({where})"


class _Loop:
    """What a loop body being parsed needs: its carries, for the closing statement."""

    def __init__(self, carries: int, names: list[str]) -> None:
        self.carries = carries
        self.names = names


class FunctionParser:
    """One ``def``: parameters, then the body's statements, scope by scope."""

    def __init__(self, module: ModuleScope, node: ast.FunctionDef) -> None:
        self.module = module
        self.src = module.src
        self.node = node
        self.scopes: list[dict[str, Expr]] = [{}]
        self.expired: dict[str, int] = {}  # name bound in a finished loop body -> its line
        self.vars: list[Var] = []  # parameters and enclosing loop variables, for carry inference
        self.consts: dict[str, ConstTensor] = {}
        self.depth = 0

    # -- names -------------------------------------------------------------------------

    def lookup(self, name: str) -> Expr | None:
        for scope in reversed(self.scopes):
            found = scope.get(name)
            if found is not None:
                return found
        return None

    def is_value(self, name: str) -> bool:
        return self.lookup(name) is not None

    def bind(self, name: str, node: ast.AST, value: Expr) -> None:
        if not g.usable_name(name):
            raise self.src.error(node, f"cannot bind {name!r}: {g.reserved_reason(name)}")
        self.scopes[-1][name] = value
        self.expired.pop(name, None)

    # -- the function ------------------------------------------------------------------

    def build(self) -> Function:
        node = self.node
        args = node.args
        if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults or args.kw_defaults:
            raise self.src.error(node, "parameters are plain `name: type` (no defaults, *, ** or /)")
        params: list[Var] = []
        for arg in args.args:
            if arg.annotation is None:
                raise self.src.error(arg, f"parameter {arg.arg} needs a type, e.g. `{arg.arg}: f32[B, 64]`")
            if self.lookup(arg.arg) is not None:
                raise self.src.error(arg, f"parameter {arg.arg} is declared twice")
            t = g.parse_type(self.src, arg.annotation, no_values)
            var = Var(arg.arg, t, span=self.src.span(arg))
            self.bind(arg.arg, arg, var)
            params.append(var)
        self.vars = list(params)
        ret = g.parse_type(self.src, node.returns, no_values) if node.returns is not None else None
        body = self.block(node.body, None)
        span = Span(self.src.filename, *self.src.position(node), None, f"def {node.name}")
        return Function(node.name, tuple(params), body, ret, span=span)

    def block(self, stmts: list[ast.stmt], loop: _Loop | None) -> Expr:
        """Parse a function body (returns its value) or a loop body (returns ``Tuple(body,
        *yields)`` packed by ``_closing``)."""
        where = "in a function body" if loop is None else "in a loop body"
        for index, stmt in enumerate(stmts):
            last = index == len(stmts) - 1
            if index == 0 and loop is None and is_docstring(stmt) and not last:
                continue
            if isinstance(stmt, ast.Assign):
                self.assign(stmt)
            elif isinstance(stmt, ast.For):
                self.for_loop(stmt)
            elif isinstance(stmt, ast.Return):
                if loop is not None:
                    raise self.src.error(stmt, "return inside a loop; end a loop body with carry(...) or value(...)")
                if not last:
                    raise self.src.error(stmts[index + 1], "statement after return (return ends the function)")
                if stmt.value is None:
                    raise self.src.error(stmt, "return needs a value")
                return self.expr(stmt.value)
            elif loop is not None and last and isinstance(stmt, ast.Expr) and _closing_call(stmt) is not None:
                return self.closing(stmt, loop)
            elif isinstance(stmt, ast.Expr) and _closing_call(stmt) is not None:
                raise self.src.error(stmt, "carry(...) / value(...) must be the last statement of a loop body")
            elif isinstance(stmt, ast.AnnAssign):
                raise self.src.error(stmt, "annotated assignment is only for module constants (`name: f32[...] = const()`)")
            else:
                raise self.src.error(stmt, statement_message(stmt, where))
        if loop is None:
            raise self.src.error(self.node, f"function {self.node.name} has no return statement")
        end = stmts[-1] if stmts else self.node
        want = "value(expr)" if loop.carries == 0 else f"carry({', '.join(loop.names)})"
        raise self.src.error(end, f"a loop body must end with {want}")

    def assign(self, stmt: ast.Assign) -> None:
        if len(stmt.targets) != 1:
            raise self.src.error(stmt, "chained assignment (a = b = ...) is not supported; bind one name")
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            self.bind_name_check(target)
            value = self.expr(stmt.value, binding=target.id)
            self.bind(target.id, target, value)
            return
        if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts) and target.elts:
            names = [e for e in target.elts if isinstance(e, ast.Name)]
            for n in names:
                self.bind_name_check(n)
            if len({n.id for n in names}) != len(names):
                raise self.src.error(target, "a name appears twice in the unpacking")
            value = self.expr(stmt.value)
            text = self.src.segment(stmt.value)
            for i, n in enumerate(names):
                proj = TupleGetItem(value, i, span=self.src.span(n, n.id, f"{text}[{i}]"))
                self.bind(n.id, n, proj)
            return
        raise self.src.error(target, "the target of an assignment is a name (or names to unpack a tuple)")

    def bind_name_check(self, node: ast.Name) -> None:
        if not g.usable_name(node.id):
            raise self.src.error(node, f"cannot bind {node.id!r}: {g.reserved_reason(node.id)}")

    # -- loops -------------------------------------------------------------------------

    def for_loop(self, stmt: ast.For) -> None:
        src = self.src
        if stmt.orelse:
            raise src.error(stmt.orelse[0], "for ... else is not part of the HIR text form")
        grid_call, whole = _grid_call(stmt.iter)
        if grid_call is None:
            raise src.error(stmt.iter, "a loop iterates over grid(extent, *init_values): `for k, acc in grid(n, acc0):`")
        if whole is not None:
            self.bind_name_check(whole)
        if not grid_call.args or any(isinstance(a, ast.Starred) for a in grid_call.args):
            raise src.error(grid_call, "grid(...) takes the extent (a dim), then one init value per carry")
        extent: ShapeDim = g.dim(src, grid_call.args[0], self.is_value)
        inits = [self.expr(a) for a in grid_call.args[1:]]
        n = len(inits)
        kw = self.grid_keywords(grid_call, n)
        iv_node, carry_nodes = self.loop_targets(stmt.target, n)
        carry_types = kw.get("types")
        if carry_types is None:
            carry_types = self.infer_carry_types(inits, grid_call)
        assert isinstance(carry_types, tuple)
        index_type = kw.get("index_type", _INDEX)
        assert isinstance(index_type, (TensorType, TupleType))
        header = src.segment(grid_call)
        iv = Var(iv_node.id, index_type, span=src.span(iv_node, None, f"{iv_node.id} in {header}"))
        phis: list[Var] = []
        if n > 0:
            for name_node, t in zip(carry_nodes, carry_types):
                phis.append(Var(name_node.id, t, span=src.span(name_node, None, f"{name_node.id} in {header}")))
        scope: dict[str, Expr] = {}
        self.scopes.append(scope)
        saved_vars = self.vars
        self.vars = self.vars + [iv] + phis
        self.bind(iv_node.id, iv_node, iv)
        for name_node, phi in zip(carry_nodes, phis):
            self.bind(name_node.id, name_node, phi)
        packed = self.block(stmt.body, _Loop(n, [c.id for c in carry_nodes]))
        assert isinstance(packed, Tuple)
        body, yields = packed.fields[0], packed.fields[1:]
        self.scopes.pop()
        self.vars = saved_vars
        for name in scope:
            self.expired[name] = stmt.lineno + src.line_offset
        binding = whole.id if whole is not None else (carry_nodes[0].id if n <= 1 and carry_nodes else None)
        region = GridRegionExpr(extent, iv, tuple(inits), tuple(phis), body, tuple(yields), span=src.span(grid_call, binding))
        if whole is not None:
            self.bind(whole.id, whole, region)
        if n <= 1:
            self.bind(carry_nodes[0].id, carry_nodes[0], region)
        else:
            for i, name_node in enumerate(carry_nodes):
                proj = TupleGetItem(region, i, span=src.span(name_node, name_node.id, f"{header}[{i}]"))
                self.bind(name_node.id, name_node, proj)

    def grid_keywords(self, call: ast.Call, n: int) -> dict[str, object]:
        out: dict[str, object] = {}
        for k in call.keywords:
            if k.arg == "types":
                if not isinstance(k.value, ast.Tuple) or len(k.value.elts) != n:
                    raise self.src.error(k.value, f"types= gives one type per carry: a tuple of {n} type(s)")
                out["types"] = tuple(g.parse_type(self.src, e, self.is_value) for e in k.value.elts)
            elif k.arg == "index_type":
                out["index_type"] = g.parse_type(self.src, k.value, self.is_value)
            else:
                raise self.src.error(k.value if k.arg is None else k, f"grid(...) has no keyword {k.arg!r}; valid: types, index_type")
        return out

    def loop_targets(self, target: ast.expr, n: int) -> tuple[ast.Name, list[ast.Name]]:
        src = self.src
        form = "for k, acc in grid(n, acc0)" if n == 1 else (
            "for k, out in grid(n)" if n == 0 else f"for k, ({', '.join(f'c{i}' for i in range(n))}) in grid(n, ...)"
        )
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name)):
            raise src.error(target, f"the loop target is the index, then the carry names: `{form}`")
        iv_node, rest = target.elts[0], target.elts[1]
        if isinstance(rest, ast.Name):
            names = [rest]
        elif isinstance(rest, ast.Tuple) and all(isinstance(e, ast.Name) for e in rest.elts) and n >= 1:
            names = [e for e in rest.elts if isinstance(e, ast.Name)]
        else:
            raise src.error(rest, f"the loop target names the carries: `{form}`")
        if n == 0 and len(names) != 1:
            raise src.error(rest, f"a loop without carries names its value once: `{form}`")
        if n >= 1 and len(names) != n:
            raise src.error(rest, f"grid(...) has {n} init value(s) but the target names {len(names)}: `{form}`")
        all_names = [iv_node.id] + [x.id for x in names]
        if len(set(all_names)) != len(all_names):
            raise src.error(target, "the loop index and carries need distinct names")
        for x in [iv_node, *names]:
            self.bind_name_check(x)
        return iv_node, names

    def infer_carry_types(self, inits: list[Expr], node: ast.Call) -> tuple[Type, ...]:
        if not inits:
            return ()
        probe = Function("grid_init", tuple(self.vars), Tuple(tuple(inits)))
        try:
            infer_types(probe)
        except (TfexecError, TypeError, ValueError, ArithmeticError) as exc:
            raise self.src.error(
                node, f"cannot infer the carried types from the init values ({exc}); give them: grid(..., types=(...))"
            ) from None
        t = probe.body.checked_type
        assert isinstance(t, TupleType)
        return t.fields

    def closing(self, stmt: ast.Expr, loop: _Loop) -> Expr:
        call = _closing_call(stmt)
        assert call is not None and isinstance(call.func, ast.Name)
        word = call.func.id
        if any(isinstance(a, ast.Starred) for a in call.args):
            raise self.src.error(call, f"{word}(...) takes plain arguments")
        if loop.carries == 0:
            if word != "value" or len(call.args) != 1 or call.keywords:
                raise self.src.error(call, "a loop without carries ends with value(expr): the iteration's value")
            return Tuple((self.expr(call.args[0]),))
        if word != "carry":
            raise self.src.error(call, f"a loop with carries ends with carry({', '.join(loop.names)})")
        if len(call.args) != loop.carries:
            raise self.src.error(call, f"carry(...) needs one value per carry ({', '.join(loop.names)}), got {len(call.args)}")
        yields = [self.expr(a) for a in call.args]
        body: Expr | None = None
        for k in call.keywords:
            if k.arg != "body":
                raise self.src.error(k.value, f"carry(...) has no keyword {k.arg!r}; valid: body")
            body = self.expr(k.value)
        if body is None:
            body = yields[0] if len(yields) == 1 else Tuple(tuple(yields), span=self.src.span(call))
        return Tuple((body, *yields))

    # -- expressions -------------------------------------------------------------------

    def expr(self, node: ast.expr, binding: str | None = None) -> Expr:
        self.depth += 1
        try:
            if self.depth > _MAX_DEPTH:
                raise self.src.error(node, f"expression nested more than {_MAX_DEPTH} levels deep; bind parts to names")
            return self._expr(node, binding)
        finally:
            self.depth -= 1

    def _expr(self, node: ast.expr, binding: str | None) -> Expr:
        src = self.src
        lit = g.literal(src, node)
        if lit is not None:
            dtype = DType.bool if isinstance(lit, bool) else (DType.int64 if isinstance(lit, int) else DType.float32)
            return Constant(lit, TensorType((), dtype), weak=True, span=src.span(node, binding))
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            return self.dotted(node)
        if isinstance(node, ast.Tuple):
            return Tuple(tuple(self.expr(e) for e in node.elts), span=src.span(node, binding))
        if isinstance(node, ast.Subscript):
            return self.projection(node, binding)
        if isinstance(node, ast.Call):
            return self.call(node, binding)
        raise src.error(node, _expression_message(node))

    def name(self, node: ast.Name) -> Expr:
        found = self.lookup(node.id)
        if found is not None:
            return found
        const = self.module.constants.get(node.id)
        if const is not None:
            return self.const_tensor(node.id, const)
        src = self.src
        if node.id in self.expired:
            raise src.error(node, f"`{node.id}` was bound inside the loop at line {self.expired[node.id]} and is not visible after it")
        if node.id in OPS_BY_NAME or node.id in self.module.defs:
            raise src.error(node, f"`{node.id}` is a function; call it: {node.id}(...)")
        if node.id in self.module.children:
            raise src.error(node, f"`{node.id}` is a child module; name one of its constants: {node.id}.<constant>")
        names = [n for scope in self.scopes for n in scope] + list(self.module.constants)
        raise src.error(node, f"unknown name `{node.id}`{_suggest(node.id, names)}")

    def const_tensor(self, alias: str, const: tuple[str, TensorType, ast.AnnAssign]) -> ConstTensor:
        node = self.consts.get(alias)
        if node is None:
            key, t, decl = const
            span = self.src.span(decl, alias, self.src.segment(decl.value) if decl.value is not None else "const()")
            node = self.consts[alias] = ConstTensor(key, t, span=span)
        return node

    def dotted(self, node: ast.Attribute) -> Expr:
        parts: list[str] = []
        inner: ast.expr = node
        while isinstance(inner, ast.Attribute):
            parts.append(inner.attr)
            inner = inner.value
        if not isinstance(inner, ast.Name):
            raise self.src.error(node, "attribute access is only for a child module's constants (attn.wq)")
        parts.append(inner.id)
        parts.reverse()
        if self.lookup(parts[0]) is not None:
            raise self.src.error(node, f"`{parts[0]}` is a value; attribute access is only for child modules' constants")
        found = self.module.resolve_dotted(parts)
        if found is None:
            raise self.src.error(node, f"no constant `{'.'.join(parts)}` (a child module's constant is child.name)")
        key = ".".join(parts)
        existing = self.consts.get(key)
        if existing is None:
            full, t, decl = found
            span = self.src.span(decl, key, self.src.segment(decl.value) if decl.value is not None else "const()")
            existing = self.consts[key] = ConstTensor(full, t, span=span)
        return existing

    def projection(self, node: ast.Subscript, binding: str | None) -> Expr:
        index = node.slice
        if not (isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 0):
            raise self.src.error(index, f"a tuple projection takes a non-negative int index, got `{self.src.segment(index)}`")
        return TupleGetItem(self.expr(node.value), index.value, span=self.src.span(node, binding))

    def call(self, node: ast.Call, binding: str | None) -> Expr:
        src = self.src
        func = node.func
        if not isinstance(func, ast.Name):
            raise src.error(func, "only ops and functions of this module are called, by plain name (add(a, b))")
        name = func.id
        if self.lookup(name) is not None:
            raise src.error(func, f"`{name}` is a value, not a function")
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise src.error(node, f"{name}(...) takes plain arguments (no * or **)")
        if name == "constant":
            return self.constant(node, binding)
        if name == "const":
            return self.inline_const(node, binding)
        if name in ("grid", "carry", "value"):
            where = "as `for k, acc in grid(n, acc0):`" if name == "grid" else "as the last statement of a loop body"
            raise src.error(node, f"{name}(...) is only valid {where}")
        if name in self.module.functions:
            return self.function_call(node, self.module.functions[name], binding)
        cls = OPS_BY_NAME.get(name)
        if cls is not None:
            return self.op_call(node, cls, binding)
        ext = self.module.external.get(name)
        if ext is not None:
            return self.function_call(node, ext, binding)
        if name in self.module.defs:
            raise src.error(func, f"recursive call of {name}: recursion is not supported")
        known = list(OPS_BY_NAME) + list(self.module.defs) + list(self.module.external) + ["constant", "const"]
        raise src.error(func, f"unknown op `{name}`{_suggest(name, known)}")

    def function_call(self, node: ast.Call, fn: Function, binding: str | None) -> Expr:
        if node.keywords:
            raise self.src.error(node.keywords[0].value, f"function {fn.name} takes positional arguments only")
        if len(node.args) != len(fn.params):
            names = ", ".join(p.name for p in fn.params)
            raise self.src.error(node, f"{fn.name}({names}) takes {len(fn.params)} argument(s), got {len(node.args)}")
        args = tuple(self.expr(a) for a in node.args)
        return Call(fn, args, span=self.src.span(node, binding))

    def op_call(self, node: ast.Call, cls: type[Op], binding: str | None) -> Expr:
        src = self.src
        fields = g.op_fields(cls)
        attrs: dict[str, object] = {}
        for k in node.keywords:
            assert k.arg is not None
            if k.arg not in fields:
                valid = ", ".join(fields) or "none"
                raise src.error(k, f"{cls.name} has no attribute `{k.arg}`; valid attributes: {valid}")
            if k.arg in attrs:
                raise src.error(k, f"attribute `{k.arg}` is given twice")
            attrs[k.arg] = g.convert(src, k.value, fields[k.arg], f"{cls.name} attribute `{k.arg}`", self.is_value)
        missing = [a for a in fields if a in g.required_attributes(cls) and a not in attrs]
        if missing:
            wants = "; ".join(f"{a} ({g.describe_hint(fields[a])})" for a in missing)
            raise src.error(node, f"{cls.name} needs attribute(s) {wants}")
        op = _PLAIN_OPS.get(cls) if not attrs else None
        if op is None:
            try:
                op = cls(**attrs)
            except (TypeError, ValueError) as exc:
                raise src.error(node, f"{cls.name}: {exc}") from None
            if not attrs:
                _PLAIN_OPS[cls] = op
        arity = op.arity_error(len(node.args))
        if arity is not None:
            raise src.error(node, arity)
        args = tuple(self.expr(a) for a in node.args)
        return Call(op, args, span=src.span(node, binding))

    def constant(self, node: ast.Call, binding: str | None) -> Expr:
        src = self.src
        if len(node.args) != 1:
            raise src.error(node, "constant(data, dtype=...) takes the data as its one positional argument")
        data = g.scalar_data(src, node.args[0])
        kw: dict[str, ast.expr] = {}
        for k in node.keywords:
            assert k.arg is not None
            if k.arg not in ("dtype", "type", "shape", "weak"):
                raise src.error(k, f"constant has no keyword `{k.arg}`; valid: dtype, type, shape, weak")
            kw[k.arg] = k.value
        if ("dtype" in kw) == ("type" in kw):
            raise src.error(node, "constant(...) needs exactly one of dtype= (e.g. f32) or type= (e.g. f32[2, 2])")
        weak = bool(g.convert(src, kw["weak"], bool, "constant keyword `weak`", self.is_value)) if "weak" in kw else False
        declared: TensorType | None = None
        if "type" in kw:
            t = g.parse_type(src, kw["type"], self.is_value)
            if not isinstance(t, TensorType):
                raise src.error(kw["type"], f"a constant has a tensor type, got {t}")
            declared = t
            dtype = t.dtype
        else:
            dtype_value = g.convert(src, kw["dtype"], DType, "constant keyword `dtype`", self.is_value)
            assert isinstance(dtype_value, DType)
            dtype = dtype_value
        span = src.span(node, binding)
        if weak:
            why = weak_constant_error(data if not isinstance(data, list) and "shape" not in kw else torch.zeros(()),
                                      declared or TensorType((), dtype))
            if why is not None:
                raise src.error(node, why)
        if not isinstance(data, list) and "shape" not in kw:
            return Constant(data, declared or TensorType((), dtype), weak, span=span)
        try:
            tensor = torch.tensor(data, dtype=dtype.torch)
            if "shape" in kw:
                shape = g.convert(src, kw["shape"], tuple[int, ...], "constant keyword `shape`", self.is_value)
                assert isinstance(shape, tuple)
                tensor = tensor.reshape(shape)
        except ParseError:
            raise
        except (RuntimeError, TypeError, ValueError, OverflowError) as exc:
            raise src.error(node.args[0], f"cannot make a {dtype} tensor of this data: {exc}") from None
        return Constant(tensor, declared or TensorType(tuple(tensor.shape), dtype), weak, span=span)

    def inline_const(self, node: ast.Call, binding: str | None) -> Expr:
        src = self.src
        if len(node.args) != 2 or node.keywords or not (
            isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) and node.args[0].value
        ):
            raise src.error(node, 'in a function body const takes a key and a type: const("layers.0.w", f32[64, 64])')
        t = g.parse_type(src, node.args[1], self.is_value)
        if not isinstance(t, TensorType):
            raise src.error(node.args[1], f"a constant has a tensor type, got {t}")
        return ConstTensor(node.args[0].value, t, span=src.span(node, binding))


def _grid_call(node: ast.expr) -> tuple[ast.Call | None, ast.Name | None]:
    whole: ast.Name | None = None
    if isinstance(node, ast.NamedExpr):
        whole = node.target
        node = node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "grid":
        return node, whole
    return None, None


def _closing_call(stmt: ast.Expr) -> ast.Call | None:
    value = stmt.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("carry", "value"):
        return value
    return None


def _suggest(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def _expression_message(node: ast.expr) -> str:
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.BoolOp)):
        op_name = _OPERATOR_OPS.get(type(node.op))
        hint = f"; write {op_name}(...)" if op_name else ""
        return f"operators are not part of the HIR text form{hint}"
    if isinstance(node, ast.Compare):
        op_name = _OPERATOR_OPS.get(type(node.ops[0])) if node.ops else None
        return "comparisons are not part of the HIR text form" + (f"; write {op_name}(a, b)" if op_name else "")
    if isinstance(node, ast.Lambda):
        return "lambda is not part of the HIR text form"
    if isinstance(node, ast.List):
        return "lists are only data inside constant([...], dtype=...)"
    if isinstance(node, ast.Constant):
        return f"{type(node.value).__name__} literal {node.value!r:.40} is not a value of the HIR text form"
    if isinstance(node, ast.NamedExpr):
        return "`:=` is only valid around grid(...) in a for statement"
    return f"`{type(node).__name__}` expressions are not part of the HIR text form"


__all__ = ["FunctionParser", "ModuleScope", "is_docstring", "no_values", "statement_message"]
