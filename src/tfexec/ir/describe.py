"""``describe_expr``: the prefix of every error about a node.

With a span it names the authored location, binding and op text
(``model.tf.py:12:8 h = matmul(x, w1)``); without one, the op and a one-level
structural description (``add(x, %const f32[()])``). Never walks the graph.
"""

from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var


def describe_expr(expr: "Expr | Function") -> str:
    """A one-line description of ``expr`` for error messages."""
    span = expr.span
    if span is not None:
        text = span.op or _structure(expr)
        bound = f"{span.binding} = " if span.binding else ""
        return f"{span.location()} {bound}{text}"
    return _structure(expr)


def op_label(expr: "Expr | Function") -> str:
    """The short kind of a node: its op name, callee name or node class."""
    if isinstance(expr, Call):
        return expr.target.name
    if isinstance(expr, Function):
        return f"function {expr.name}"
    if isinstance(expr, GridRegionExpr):
        return "grid"
    return type(expr).__name__


def _operand(expr: Expr) -> str:
    if isinstance(expr, Var):
        return expr.name
    if isinstance(expr, Constant):
        if isinstance(expr.value, (bool, int, float)):
            return repr(expr.value)
        return f"constant {expr.type}"
    if isinstance(expr, ConstTensor):
        return f"const {expr.name}"
    if expr.span is not None and expr.span.binding:
        return expr.span.binding
    return f"<{op_label(expr)}>"


def _structure(expr: "Expr | Function") -> str:
    if isinstance(expr, Function):
        return f"function {expr.name}({', '.join(p.name for p in expr.params)})"
    if isinstance(expr, Call):
        args = ", ".join(_operand(a) for a in expr.args)
        attrs = ""
        if not isinstance(expr.target, Function):
            shown = [f"{k}={v}" for k, v in expr.target.attributes().items()]
            attrs = (", " if args and shown else "") + ", ".join(shown)
        return f"{expr.target.name}({args}{attrs})"
    if isinstance(expr, Var):
        return f"var {expr.name}: {expr.type}"
    if isinstance(expr, Constant):
        return f"constant {_operand(expr)}: {expr.type}"
    if isinstance(expr, ConstTensor):
        return f"const_tensor {expr.name}: {expr.type}"
    if isinstance(expr, Tuple):
        return "tuple(" + ", ".join(_operand(f) for f in expr.fields) + ")"
    if isinstance(expr, TupleGetItem):
        return f"{_operand(expr.tuple)}[{expr.index}]"
    carries = ", ".join(v.name for v in expr.carried_args)
    return f"grid(extent={expr.extent}, index={expr.induction_var.name}, carries=({carries}))"
