"""Type inference: fill ``checked_type`` on every node of a function (and its callees).

Types stay symbolic: ``DimVar``s and ``DimExpr``s flow through the op type rules. An
ill-typed node raises ``TypeInferenceError`` whose message starts with
``describe_expr(node)`` and says what was expected and what was found.
"""

from collections.abc import Callable, Sequence
from typing import TypeVar

from tfexec.api_checks import public
from tfexec.errors import IRConstructionError, TypeInferenceError
from tfexec.ir.boundary import call_mismatch, substitute_type
from tfexec.ir.describe import describe_expr
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
from tfexec.ir.graph import MAX_NESTING, NESTING_REFUSED, function_order, loop_plan, post_order
from tfexec.ir.ops.base import Op, Operand, TypeRuleError
from tfexec.ir.ops.promotion import default_dtype_refusal
from tfexec.ir.types import MAX_TUPLE_DEPTH, TUPLE_DEPTH_REFUSED, TensorType, TupleType, Type
from tfexec.ir.weak import weak_source

_INDEX_TYPE = TensorType((), DType.int64)
T = TypeVar("T")


@public
def infer_types(fn: Function) -> Function:
    """Fill ``checked_type`` on every node reachable from ``fn`` and return ``fn``."""
    refusal = default_dtype_refusal()
    if refusal is not None:
        raise TypeInferenceError(f"{describe_expr(fn)}: {refusal}")
    _Inference().function(fn)
    return fn


class _Inference:
    def __init__(self) -> None:
        self.done: set[int] = set()
        self.in_progress: set[int] = set()
        self.depth = 0
        """How deep calls and loops nest at the node being inferred (refused past ``MAX_NESTING``)."""

    def function(self, fn: Function) -> Type:
        if id(fn) in self.in_progress:
            raise TypeInferenceError(f"{describe_expr(fn)}: recursive function calls are not supported")
        if id(fn) not in self.done:
            self.in_progress.add(id(fn))
            bound = {id(p) for p in fn.params}
            for p in fn.params:
                p.with_checked_type(p.type)
            self.scope_order(function_order(fn), bound)
            result = _checked(fn.body)
            if fn.ret_type is not None and fn.ret_type != result:
                raise TypeInferenceError(
                    f"{describe_expr(fn)}: declared return type {fn.ret_type}, body has type {result}"
                )
            self.in_progress.discard(id(fn))
            self.done.add(id(fn))
        return fn.ret_type if fn.ret_type is not None else _checked(fn.body)

    def scope(self, roots: list[Expr], bound: set[int]) -> None:
        self.scope_order(post_order(roots), bound)

    def scope_order(self, order: "Sequence[Expr]", bound: set[int]) -> None:
        for node in order:
            if node.checked_type is not None and not isinstance(node, Var):
                continue
            node.with_checked_type(self.node(node, bound))

    def node(self, node: Expr, bound: set[int]) -> Type:
        if isinstance(node, Var):
            if id(node) not in bound:
                raise TypeInferenceError(
                    f"{describe_expr(node)}: variable {node.name} is not bound here "
                    "(not a parameter, nor an index or carry of an enclosing loop)"
                )
            return node.type
        if isinstance(node, Constant):
            return _constant_type(node)
        if isinstance(node, ConstTensor):
            return node.type
        if isinstance(node, Tuple):
            fields = tuple(_checked(f) for f in node.fields)
            if any(isinstance(f, TupleType) and f.depth >= MAX_TUPLE_DEPTH for f in fields):
                raise TypeInferenceError(f"{describe_expr(node)}: {TUPLE_DEPTH_REFUSED}")
            return TupleType(fields)
        if isinstance(node, TupleGetItem):
            t = _checked(node.tuple)
            if not isinstance(t, TupleType):
                raise TypeInferenceError(f"{describe_expr(node)}: projection [{node.index}] of a non-tuple {t}")
            if node.index >= len(t.fields):
                raise TypeInferenceError(
                    f"{describe_expr(node)}: index {node.index} is out of range for {t} ({len(t.fields)} fields)"
                )
            return t.fields[node.index]
        if isinstance(node, Call):
            if isinstance(node.target, Function):
                return self.call_function(node, node.target)
            return _call_op(node, node.target)
        return self.region(node, bound)

    def call_function(self, call: Call, callee: Function) -> Type:
        if len(call.args) != len(callee.params):
            raise TypeInferenceError(
                f"{describe_expr(call)}: {callee.name} takes {len(callee.params)} argument(s), got {len(call.args)}"
            )
        if id(callee) in self.in_progress:
            raise TypeInferenceError(f"{describe_expr(call)}: recursive call of {callee.name} is not supported")
        result = self.nested(call, lambda: self.function(callee))
        why, bindings = call_mismatch([(p.name, p.type) for p in callee.params], [_checked(a) for a in call.args])
        if why is not None:
            raise TypeInferenceError(f"{describe_expr(call)}: {why}")
        return substitute_type(result, bindings)

    def nested(self, node: Expr, infer: "Callable[[], T]") -> "T":
        """Run ``infer`` one call or loop deeper, refusing ``node`` past ``MAX_NESTING``."""
        if self.depth >= MAX_NESTING:
            raise TypeInferenceError(f"{describe_expr(node)}: {NESTING_REFUSED}")
        self.depth += 1
        try:
            return infer()
        finally:
            self.depth -= 1

    def region(self, region: GridRegionExpr, bound: set[int]) -> Type:
        iv = region.induction_var
        if iv.type != _INDEX_TYPE:
            raise TypeInferenceError(f"{describe_expr(region)}: induction variable {iv.name} must be i64[()], found {iv.type}")
        for phi, init in zip(region.carried_args, region.init_args):
            if _checked(init) != phi.type:
                raise TypeInferenceError(
                    f"{describe_expr(region)}: carry {phi.name} is declared {phi.type} but its init value has type {_checked(init)}"
                )
        inner = bound | {id(iv)} | {id(v) for v in region.carried_args}
        for v in (iv, *region.carried_args):
            v.with_checked_type(v.type)
        plan = loop_plan(region)
        self.nested(region, lambda: self.scope(list(plan.roots), inner))
        if not region.carried_args:
            return _checked(region.body)
        for phi, y in zip(region.carried_args, region.yield_values):
            if _checked(y) != phi.type:
                raise TypeInferenceError(
                    f"{describe_expr(region)}: carry {phi.name} is {phi.type} but its yield value has type {_checked(y)}"
                )
        if len(region.carried_args) == 1:
            return region.carried_args[0].type
        try:
            return TupleType(tuple(v.type for v in region.carried_args))
        except IRConstructionError:
            raise TypeInferenceError(f"{describe_expr(region)}: {TUPLE_DEPTH_REFUSED}") from None


def _checked(node: Expr) -> Type:
    t = node.checked_type
    assert t is not None, "operands are inferred before their users"
    return t


def _constant_type(node: Constant) -> Type:
    value, t = node.value, node.type
    if hasattr(value, "shape"):
        shape = tuple(value.shape)  # a torch.Tensor
        if shape != t.shape:
            raise TypeInferenceError(f"{describe_expr(node)}: tensor of shape {list(shape)} does not match its type {t}")
    elif t.rank != 0:
        raise TypeInferenceError(f"{describe_expr(node)}: a Python scalar constant must have a rank-0 type, found {t}")
    return t


def _operand(arg: Expr) -> Operand:
    t = _checked(arg)
    source = weak_source(arg)
    if source is not None:
        static = source.value if isinstance(source.value, int) and not isinstance(source.value, bool) else None
        return Operand(t, True, static)
    if isinstance(arg, Constant):  # a strong constant: its static value still serves slice starts
        static = arg.value if isinstance(arg.value, int) and not isinstance(arg.value, bool) else None
        return Operand(t, False, static)
    return Operand(t)


def _call_op(call: Call, op: Op) -> Type:
    arity = op.arity_error(len(call.args))
    if arity is not None:
        raise TypeInferenceError(f"{describe_expr(call)}: {arity}")
    try:
        return op.infer(tuple(_operand(a) for a in call.args))
    except (TypeRuleError, IRConstructionError) as err:  # a type rule making a tuple type too deep, say
        raise TypeInferenceError(f"{describe_expr(call)}: {err}") from None
