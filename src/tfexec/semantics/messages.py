"""The errors both routes raise, each worded once here so the two raise the same message.

Every message starts with ``describe_expr`` of the node it is about (its source location,
binding and op), then says what is wrong and, where there is one, what to do.
"""

from collections.abc import Sequence
from dataclasses import fields

from tfexec.errors import EvalError, TfexecError
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Call, Expr, Function, GridRegionExpr, TupleGetItem, Var, is_expr
from tfexec.ir.graph import NESTING_REFUSED
from tfexec.ir.ops.base import Op
from tfexec.ir.types import TUPLE_DEPTH_REFUSED
from tfexec.semantics.values import TupleValue, Value
from tfexec.wording import a



def unbound_var(var: Var) -> EvalError:
    """A ``Var`` with no binding in the scope where it is read."""
    return EvalError(
        f"{describe_expr(var)}: variable {var.name} is not bound here "
        "(not a parameter, nor an index or carry of an enclosing loop)"
    )


def projection_of_tensor(node: TupleGetItem) -> EvalError:
    return EvalError(f"{describe_expr(node)}: projection [{node.index}] of a tensor, not a tuple")


def projection_out_of_range(node: TupleGetItem, size: int) -> EvalError:
    return EvalError(f"{describe_expr(node)}: index {node.index} is out of range for {a(f'{size}-tuple')}")


def recursive_call(call: Call, callee: Function) -> EvalError:
    return EvalError(f"{describe_expr(call)}: recursive call of {callee.name} is not supported")


def nesting_too_deep(node: Call | GridRegionExpr) -> EvalError:
    return EvalError(f"{describe_expr(node)}: {NESTING_REFUSED}")


def tuple_value(node: Expr, elements: Sequence[Value]) -> TupleValue:
    """The tuple of ``elements`` that ``node`` makes, or the ``EvalError`` naming ``node`` when
    it would nest deeper than ``MAX_TUPLE_DEPTH``."""
    try:
        return TupleValue(tuple(elements))
    except EvalError:
        raise EvalError(f"{describe_expr(node)}: {TUPLE_DEPTH_REFUSED}") from None


def missing_handler(call: Call) -> EvalError:
    """A call whose op class has no registered handler (it names the class)."""
    return EvalError(f"{describe_expr(call)}: no evaluator handler is registered for op class {type(call.target).__name__}")


def arity(call: Call, op: Op) -> EvalError | None:
    """The error for a call with an operand count ``op`` does not take, else None."""
    why = op.arity_error(len(call.args))
    return None if why is None else EvalError(f"{describe_expr(call)}: {why}")


def expr_attribute(call: Call, op: Op) -> EvalError | None:
    """The error for an op carrying an ``Expr`` as a static attribute, else None.

    Runtime data is always a ``Call`` operand (spec §4): a handler sees evaluated operands
    and must never re-enter the evaluator through an attribute.
    """
    for f in fields(op):
        if _holds_expr(getattr(op, f.name, None)):
            return EvalError(
                f"{describe_expr(call)}: attribute {f.name} of {type(op).__name__} is an expression; runtime data "
                "must be a Call operand, not an op attribute (evaluator spec §4)"
            )
    return None


def _holds_expr(value: object) -> bool:
    """Whether an attribute value is, or contains (in tuples, lists, dicts), an ``Expr``."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if is_expr(item):
            return True
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, (tuple, list)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return False


def reason_of(exc: BaseException) -> str:
    """The user-facing reason for an exception raised inside a dispatch."""
    if isinstance(exc, TfexecError):
        return str(exc)
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else '(no message)'}"


def dispatch_failed(call: Expr, exc: BaseException) -> EvalError:
    """The ``EvalError`` for a failed dispatch of ``call``, prefixed by ``describe_expr``."""
    err = EvalError(f"{describe_expr(call)}: {reason_of(exc)}")
    err.__cause__ = exc
    return err
