"""Parse the HIR text form (a subset of Python syntax) into an ``IRModule`` or ``Function``.

The text is read with the standard library's ``ast`` and never executed: no ``exec``, no
``eval``, no import. Any statement or expression outside the subset below is a
``ParseError`` (``file:line:col: message``, the source line and a caret).

Grammar (each spelling is what the printer emits)::

    module     := [docstring] item*
    item       := NAME ':' type '=' 'const(' [STRING] ')'      # module constant (ConstTensor);
                                                             # the string is its key when not NAME
                | 'class' NAME ':' item+                     # child module (state_dict prefix NAME.)
                | ['@entry'] 'def' NAME '(' [NAME ':' type, ...] ')' ['->' type] ':' body
    body       := [docstring] stmt* 'return' expr
    stmt       := NAME '=' expr                              # binds a node (rebinding shadows)
                | NAME ',' NAME ... '=' expr                  # tuple projections NAME = expr[i]
                | 'for' NAME ',' targets 'in' ['(' NAME ':=']
                      'grid(' dim ',' expr* [', types=(' type, ... ')'] [', index_type=' type] ')' [')'] ':'
                      stmt* last
    targets    := NAME                                       # one carry, or the value of a no-carry loop
                | '(' NAME ',' NAME ... ')'                   # several carries
    last       := 'carry(' expr, ... [', body=' expr] ')'     # one yield value per carry
                | 'value(' expr ')'                           # no carries: the iteration's value
    expr       := NAME                                       # parameter, binding, index, carry, constant
                | NAME '.' NAME ...                           # a child module's constant (attn.wq)
                | scalar                                      # weak constant: 1 → i64, 1.0 → f32, True → b1
                | OP '(' expr, ... [, ATTR '=' value ...] ')'  # an op of the catalogue
                | FUNCTION '(' expr, ... ')'                  # a call of a function of the same module
                | 'constant(' data ',' ('dtype=' DT | 'type=' type) [', shape=' dims] [', weak=True'] ')'
                | 'const(' STRING ',' type ')'                # a ConstTensor not declared by the module
                | '(' expr, ... ')'  |  expr '[' INT ']'      # Tuple and TupleGetItem
    scalar     := INT | FLOAT | True | False | 'float("inf")' | 'float("-inf")' | 'float("nan")' (signed)
    type       := DT '[' dims ']' ['@' layout] | '(' type, ... ')'          # DT: b1 i8 ... f64
                | 'tuple[' type, ... ']'                      # the same tuple type; prints as '(' ... ')'
    dim        := INT | NAME (a DimVar) | dim (+ - * // %) dim | min(dim, dim) | max(dim, dim)

Design notes:

* **Loops.** After ``for k, acc in grid(n, acc0): ... carry(y)`` the carry name holds the
  loop's result (the ``GridRegionExpr``; with several carries, each name is a projection
  of it and ``(r := grid(...))`` names the whole tuple). Names bound inside a loop body are
  local to it. A carried phi's type is **inferred from its init value** (``infer_types`` on
  the init, in the scope of the loop) unless ``types=(...)`` gives it; the induction
  variable is ``i64[()]`` unless ``index_type=`` says otherwise. With carries the loop's
  ``body`` is the single yield value or the ``Tuple`` of them unless ``body=`` is given.
* **Dims** are never folded (``2 * 3`` stays a ``DimExpr``), so the round trip is exact.
  In a function body a dim position (grid extent, shape attributes) may not name a value.
* **Constants.** ``wq: f32[64, 64] = const()`` declares module constant ``wq``; in a body
  ``wq`` is a ``ConstTensor`` (one node per function), ``attn.wq`` one of child ``attn``.
  A tensor ``constant`` holds a tensor of its type's dtype; a scalar one a Python scalar;
  ``shape=`` reshapes the data (empty or rank-0 tensors).
* **Provenance.** Every node made gets ``Span(file, line, column, binding, op)``: the
  1-based position of the expression it was made from, the name it was assigned to and
  the expression's text.
"""

import ast
import inspect
from collections.abc import Callable, Mapping
from typing import TypeVar

from tfexec.api_checks import public
from tfexec.errors import IRConstructionError, ParseError
from tfexec.ir.expr import Function
from tfexec.ir.module import IRModule
from tfexec.ir.types import TensorType
from tfexec.text import grammar as g
from tfexec.text._parse_body import FunctionParser, is_docstring, statement_message
from tfexec.text._parse_expr import ModuleScope, no_values
from tfexec.text.source import Source, parse_python, split_lines

T = TypeVar("T")


@public
def parse(text: str, filename: str = "<text>") -> IRModule:
    """Parse a module of the HIR text form (never executing it)."""
    source = Source(text, filename)
    tree = parse_python(source)
    return _guard(source, lambda: _ModuleParser(source, tree.body, None).build())


@public
def parse_function(text: str, filename: str = "<text>", name: str | None = None) -> Function:
    """Parse text and return one function: ``name``, else the entry, else the only one."""
    module = parse(text, filename)
    if name is not None:
        if name not in module.functions:
            known = ", ".join(module.functions) or "none"
            raise ParseError(f"{filename}: no function {name!r} in the text (functions: {known})")
        return module.functions[name]
    if module.entry is not None:
        return module.functions[module.entry]
    if len(module.functions) == 1:
        return next(iter(module.functions.values()))
    known = ", ".join(module.functions) or "none"
    raise ParseError(f"{filename}: the text defines {len(module.functions)} functions ({known}); pass name= or mark one @entry")


def script(fn: Callable[..., object]) -> Function:
    """Decorator: parse the decorated Python function's source as HIR and return the ``Function``.

    The def is never executed. Positions are the real file's lines and columns; a call of
    another ``@script`` function visible in the def's globals is a function call.
    """
    try:
        lines, first = inspect.getsourcelines(fn)
        code = getattr(fn, "__code__", None)
        filename: str = inspect.getsourcefile(fn) or str(getattr(code, "co_filename", "<script>"))
    except (OSError, TypeError) as exc:
        name = getattr(fn, "__qualname__", repr(fn))
        raise ParseError(f"@script cannot read the source of {name}: {exc}") from None
    raw = "".join(lines)
    display = split_lines(raw)
    indent = len(display[0]) - len(display[0].lstrip(" \t"))
    dedented = "\n".join(line[indent:] if line[:indent].strip() == "" else line for line in display)
    source = Source(dedented, filename, line_offset=first - 1, col_offset=indent, display=display)
    tree = parse_python(source)
    defs: list[ast.stmt] = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    if len(tree.body) != 1 or len(defs) != 1:
        raise source.error(tree.body[0] if tree.body else None, "@script decorates one plain def")
    scope: dict[str, object] = dict(getattr(fn, "__globals__", {}))
    try:
        scope.update(inspect.getclosurevars(fn).nonlocals)
    except (TypeError, ValueError):
        pass
    external = {k: v for k, v in scope.items() if isinstance(v, Function)}
    assert isinstance(defs[0], ast.FunctionDef)
    defs[0].decorator_list = []
    return _guard(source, lambda: _ModuleParser(source, defs, external).build_script())


def _guard(source: Source, run: Callable[[], T]) -> T:
    try:
        return run()
    except RecursionError:
        raise ParseError(f"{source.filename}: the text is nested too deeply to parse") from None


class _ModuleParser:
    """One module (or class block): its constants, children and functions, in that order."""

    def __init__(self, src: Source, body: list[ast.stmt], external: Mapping[str, Function] | None) -> None:
        self.src = src
        self.body = body
        self.external: dict[str, Function] = dict(external or {})
        self.constants: dict[str, tuple[str, TensorType, ast.AnnAssign]] = {}  # alias -> (key, type, decl)
        self.children: dict[str, ModuleScope] = {}
        self.child_modules: dict[str, IRModule] = {}
        self.defs: dict[str, ast.FunctionDef] = {}
        self.functions: dict[str, Function] = {}
        self.entry: str | None = None
        self.defined: dict[str, ast.AST] = {}

    def _define(self, name: str, node: ast.AST) -> None:
        if not g.usable_name(name):
            raise self.src.error(node, f"cannot define {name!r}: {g.reserved_reason(name)}")
        if name in self.defined:
            line, _ = self.src.position(self.defined[name])
            raise self.src.error(node, f"`{name}` is already defined at line {line}")
        self.defined[name] = node

    def build(self) -> IRModule:
        for index, stmt in enumerate(self.body):
            if index == 0 and is_docstring(stmt):
                continue
            if isinstance(stmt, ast.ClassDef):
                self._child(stmt)
            elif isinstance(stmt, ast.AnnAssign):
                self._constant(stmt)
            elif isinstance(stmt, ast.FunctionDef):
                self._define(stmt.name, stmt)
                self._decorators(stmt)
                self.defs[stmt.name] = stmt
            else:
                raise self.src.error(stmt, statement_message(stmt, "at module level"))
        for name in self._function_order():
            self.functions[name] = FunctionParser(self, self.defs[name]).build()
        ordered = {name: self.functions[name] for name in self.defs}
        try:
            return IRModule(ordered, {key: t for key, t, _ in self.constants.values()}, self.entry, self.child_modules)
        except IRConstructionError as exc:
            raise self.src.error(None, str(exc)) from None

    def build_script(self) -> Function:
        (node,) = self.body
        assert isinstance(node, ast.FunctionDef)
        self._define(node.name, node)
        self.defs[node.name] = node
        return FunctionParser(self, node).build()

    def _child(self, node: ast.ClassDef) -> None:
        if node.bases or node.keywords or node.decorator_list:
            raise self.src.error(node, "a child module is a plain `class name:` block (no bases, keywords or decorators)")
        self._define(node.name, node)
        child = _ModuleParser(self.src, node.body, None)
        self.child_modules[node.name] = child.build()
        self.children[node.name] = child

    def _constant(self, node: ast.AnnAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.src.error(node.target, "a module constant is declared as `name: f32[...] = const()`")
        value = node.value
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "const"):
            raise self.src.error(value or node, "a module constant is declared as `name: f32[...] = const()`")
        alias = node.target.id
        self._define(alias, node.target)
        key = alias
        if value.keywords or len(value.args) > 1:
            raise self.src.error(value, 'const() takes at most one argument: the constant\'s key, e.g. const("layers.0.w")')
        if value.args:
            arg = value.args[0]
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value):
                raise self.src.error(arg, "const(...) takes the constant's key as a non-empty string")
            key = arg.value
        if any(k == key for k, _, _ in self.constants.values()):
            raise self.src.error(node, f"constant {key!r} is declared twice")
        t = g.parse_type(self.src, node.annotation, no_values)
        if not isinstance(t, TensorType):
            raise self.src.error(node.annotation, f"a module constant is a tensor, got the tuple type {t}")
        self.constants[alias] = (key, t, node)

    def _decorators(self, node: ast.FunctionDef) -> None:
        for deco in node.decorator_list:
            if isinstance(deco, ast.Name) and deco.id == "entry":
                if self.entry is not None:
                    raise self.src.error(deco, f"two entry functions: {self.entry} and {node.name}")
                self.entry = node.name
            else:
                raise self.src.error(deco, "the only decorator is @entry (marks the module's entry function)")

    def _function_order(self) -> list[str]:
        """Function names, each after the functions it calls; a cycle is a ``ParseError``."""
        calls: dict[str, list[tuple[str, ast.Call]]] = {name: [] for name in self.defs}
        for name, node in self.defs.items() if len(self.defs) > 1 else ():
            found: list[tuple[str, ast.Call]] = []
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in self.defs:
                    found.append((sub.func.id, sub))
            calls[name] = found
        order: list[str] = []
        state: dict[str, int] = {}  # 1: on the stack, 2: done
        for root in self.defs:
            if state.get(root) == 2:
                continue
            stack: list[tuple[str, int]] = [(root, 0)]
            state[root] = 1
            while stack:
                name, i = stack.pop()
                if i < len(calls[name]):
                    stack.append((name, i + 1))
                    callee, site = calls[name][i]
                    if state.get(callee) == 1:
                        path = [n for n, _ in stack] + [callee]
                        cycle = " -> ".join(path[path.index(callee):])
                        raise self.src.error(site, f"recursive call ({cycle}): recursion is not supported")
                    if state.get(callee) is None:
                        state[callee] = 1
                        stack.append((callee, 0))
                else:
                    state[name] = 2
                    order.append(name)
        return order

    def resolve_dotted(self, parts: list[str]) -> tuple[str, TensorType, ast.AnnAssign] | None:
        """``child.sub.alias`` as ``(dotted key, type, declaration)``, or None."""
        module: ModuleScope = self
        prefix = ""
        for part in parts[:-1]:
            if part not in module.children:
                return None
            prefix += part + "."
            module = module.children[part]
        found = module.constants.get(parts[-1])
        if found is None:
            return None
        return prefix + found[0], found[1], found[2]


__all__ = ["parse", "parse_function", "script"]
