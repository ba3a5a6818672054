"""Print HIR in its text form: ``print_ir(module_or_function) -> str``.

The output parses back (``tfexec.parse``) to a structurally equal program, and printing
that again gives the same text (the printer is a fixed point after one print).

How it prints a function body:

* **Scopes.** A loop body holds exactly the nodes that depend on its index or carries;
  a loop-invariant node is printed before the loop (as ``tfexec.ir.graph`` plans it).
* **Sharing and names.** A node read more than once, a node the parser bound to a name
  (its ``span.binding``), and every loop is a statement of its own; a node read once and
  never named is written inline at its single use, at most ``INLINE_DEPTH`` levels deep,
  so ``ast.parse`` never meets a deep expression and the printer never recurses over the
  graph. Names come from bindings and ``Var`` names, made unique per function
  (``h``, ``h_1``); unnamed statements get ``v0``, ``v1``…
* **Loops.** ``for k, acc in grid(extent, init):`` … ``carry(y)``; with several carries
  ``for k, (a, b) in grid(...)`` and the names after the loop are the loop's projections;
  ``(r := grid(...))`` names the whole tuple when it is read otherwise. ``types=`` is
  printed only when a carry's type is not its init value's inferred type (which may fill
  ``checked_type`` on the init values, as ``infer_types`` would).
* **Constants.** A weak scalar of its default type is a bare literal; other constants are
  ``constant(data, dtype=...)``; a module constant is its name (``wq``, ``attn.wq``).
"""

from tfexec.api_checks import public
from tfexec.ir.expr import Call, ConstTensor, Function
from tfexec.ir.module import IRModule
from tfexec.ir.walk import text_nodes
from tfexec.text._print_body import (
    INDENT,
    INLINE_DEPTH,
    Context,
    FunctionPrinter,
    Names,
)


@public
def print_ir(target: "IRModule | Function") -> str:
    """The text form of a module or a function (with the functions it calls)."""
    if isinstance(target, IRModule):
        return "\n".join(_ModulePrinter(target).lines()) + "\n"
    if isinstance(target, Function):
        return "\n".join(_standalone(target)) + "\n"
    raise TypeError(f"print_ir takes an IRModule or a Function, got {type(target).__name__}")


# -- modules --------------------------------------------------------------------------


class _ModulePrinter:
    def __init__(self, module: IRModule) -> None:
        self.module = module
        self.ctx = Context()

    def lines(self) -> list[str]:
        module, ctx = self.module, self.ctx
        names = Names()
        sections: list[list[str]] = []
        decls: list[str] = []
        for key, t in module.constants.items():
            alias = names.take(key, "c")
            ctx.constants[key] = (alias, t)
            arg = "" if alias == key else repr(key)
            decls.append(f"{alias}: {t} = const({arg})")
        if decls:
            sections.append(decls)
        for child_key, child in module.children.items():
            cname = names.take(child_key, "m")
            printer = _ModulePrinter(child)
            body = printer.lines() or ['"""An empty module."""']
            sections.append([f"class {cname}:"] + [(INDENT + line) if line else "" for line in body])
            for key, (spelling, t) in printer.ctx.constants.items():
                ctx.constants.setdefault(f"{child_key}.{key}", (f"{cname}.{spelling}", t))
        fn_names: dict[str, str] = {}
        for key, fn in module.functions.items():
            fn_names[key] = names.take(key, "f")
            ctx.functions.setdefault(id(fn), fn_names[key])
        extras = _callees([fn for fn in module.functions.values()], ctx.functions)
        for fn in extras:
            ctx.functions[id(fn)] = names.take(fn.name, "f")
        ctx.module_names = set(names.taken)
        for fn in extras:
            sections.append(FunctionPrinter(fn, ctx.functions[id(fn)], ctx, False).lines())
        for key, fn in module.functions.items():
            sections.append(FunctionPrinter(fn, fn_names[key], ctx, key == module.entry).lines())
        out: list[str] = []
        for i, section in enumerate(sections):
            if i:
                out.append("")
            out.extend(section)
        return out


def _standalone(fn: Function) -> list[str]:
    ctx = Context()
    names = Names()
    decls: list[str] = []
    extras = _callees([fn], {})
    for node in text_nodes([f.body for f in (*extras, fn)]):
        if isinstance(node, ConstTensor) and node.name not in ctx.constants:
            alias = names.take(node.name, "c")
            ctx.constants[node.name] = (alias, node.type)
            decls.append(f"{alias}: {node.type} = const({'' if alias == node.name else repr(node.name)})")
    for callee in extras:
        ctx.functions[id(callee)] = names.take(callee.name, "f")
    ctx.functions[id(fn)] = names.take(fn.name, "f")
    ctx.module_names = set(names.taken)
    sections = [decls] if decls else []
    sections += [FunctionPrinter(c, ctx.functions[id(c)], ctx, False).lines() for c in extras]
    sections.append(FunctionPrinter(fn, ctx.functions[id(fn)], ctx, bool(extras)).lines())
    out: list[str] = []
    for i, section in enumerate(sections):
        if i:
            out.append("")
        out.extend(section)
    return out


def _callees(roots: list[Function], known: dict[int, str]) -> list[Function]:
    """Functions called (transitively) from ``roots`` that are not in ``known``, callees first."""
    order: list[Function] = []
    state: dict[int, int] = {}
    for root in roots:
        stack: list[tuple[Function, list[Function] | None]] = [(root, None)]
        while stack:
            fn, pending = stack.pop()
            if pending is None:
                if state.get(id(fn)):
                    continue
                state[id(fn)] = 1
                pending = [n.target for n in text_nodes([fn.body]) if isinstance(n, Call) and isinstance(n.target, Function)]
            if pending:
                callee = pending.pop(0)
                stack.append((fn, pending))
                if not state.get(id(callee)):
                    stack.append((callee, None))
                continue
            if fn not in roots and id(fn) not in known:
                order.append(fn)
    return order


__all__ = ["INLINE_DEPTH", "print_ir"]
