"""Parse the expressions of a ``def`` body: names, constants, op and function calls.

``ExpressionParser`` holds what one function's parse keeps — the name scopes (one per loop
body), the module it reads through ``ModuleScope`` (constants, children, functions) and its
``ConstTensor`` nodes — and turns each expression's ``ast`` into an HIR node with its
``Span``. ``FunctionParser`` (``tfexec.text._parse_body``) adds the statements and loops.
"""

import ast
from typing import Protocol

import torch

from tfexec.errors import ParseError
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, Tuple, TupleGetItem, Var, weak_constant_error
from tfexec.ir.ops.base import Op
from tfexec.ir.ops.catalogue import OPS_BY_NAME
from tfexec.ir.types import TensorType
from tfexec.text import grammar as g
from tfexec.text.source import Source
from tfexec.wording import a, did_you_mean

_MAX_DEPTH = 100
_PLAIN_OPS: dict[type[Op], Op] = {}
"""One shared instance per attribute-less op class (ops are immutable values)."""
_OPERATOR_OPS: dict[type, str] = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow", ast.MatMult: "matmul",
    ast.USub: "neg", ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge",
    ast.And: "logical_and", ast.Or: "logical_or", ast.FloorDiv: "dim_floordiv", ast.Mod: "dim_mod",
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


class ExpressionParser:
    """The expressions of one ``def``, read in the scopes its statements open."""

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

    def bind_name_check(self, node: ast.Name) -> None:
        if not g.usable_name(node.id):
            raise self.src.error(node, f"cannot bind {node.id!r}: {g.reserved_reason(node.id)}")

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
            raise src.error(node.args[0], f"cannot make {a(dtype)} tensor of this data: {exc}") from None
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


def _suggest(name: str, candidates: list[str]) -> str:
    return did_you_mean(name, candidates)


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


__all__ = ["ExpressionParser", "ModuleScope", "no_values"]
