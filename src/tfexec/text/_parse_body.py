"""Parse one ``def`` of the HIR text form: parameters, statements, loops.

``FunctionParser`` extends ``ExpressionParser`` (``tfexec.text._parse_expr``, the names and
expressions) with the function's parameters and its statements: bindings, tuple unpacking,
``for ... in grid(...)`` loops with their own name scopes, and the closing ``carry(...)`` /
``value(...)``; carried types are inferred from init values. The grammar and the design
notes are in ``tfexec.text.parser``.
"""

import ast

from tfexec.errors import TfexecError
from tfexec.infer import infer_types
from tfexec.ir.dims import ShapeDim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.text import grammar as g
from tfexec.text._parse_expr import ExpressionParser, no_values


_INDEX = TensorType((), DType.int64)
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


class FunctionParser(ExpressionParser):
    """One ``def``: parameters, then the body's statements, scope by scope."""

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


__all__ = ["FunctionParser", "is_docstring", "statement_message"]
