"""Typing the HIR a translation builds: each node's type from its operands' (the op's own
type rule), and which FX targets compute sizes rather than tensors."""

import torch

from tfexec.frontends.torch._context import RuleError
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.ops.base import Op, Operand, TypeRuleError
from tfexec.ir.types import TupleType, Type

_SIZE_OPS = frozenset({"aten.sym_size.int", "aten.sym_numel.default", "aten.sym_stride.int", "aten.sym_storage_offset.default"})


def is_size_op(target: object) -> bool:
    """Whether ``target`` computes a size from sizes: ``sym_size`` & co., or Python
    arithmetic on SymInts. A tensor op returning a number (``item``) is data-dependent."""
    if isinstance(target, torch._ops.OpOverload):
        return str(target) in _SIZE_OPS
    return getattr(target, "__module__", None) in ("_operator", "operator", "math", "builtins", "torch", "torch.sym_float")


def children_of(node: Expr) -> tuple[Expr, ...]:
    """The operands of a node the translation built (a call's arguments, a tuple's fields)."""
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Tuple):
        return node.fields
    if isinstance(node, TupleGetItem):
        return (node.tuple,)
    return ()


def type_of_node(node: Expr) -> Type:
    """The type of ``node`` from its operands' checked types; a ``RuleError`` naming the node
    when its op's type rule refuses them."""
    if isinstance(node, (Var, Constant, ConstTensor)):
        return node.type
    if isinstance(node, Tuple):
        return TupleType(tuple(_checked(f) for f in node.fields))
    if isinstance(node, TupleGetItem):
        t = _checked(node.tuple)
        assert isinstance(t, TupleType)
        return t.fields[node.index]
    if isinstance(node, Call) and isinstance(node.target, Op):
        op = node.target
        arity = op.arity_error(len(node.args))
        if arity is not None:
            raise RuleError(f"{describe_expr(node)}: {arity}")
        operands = []
        for a in node.args:
            static = a.value if isinstance(a, Constant) and isinstance(a.value, int) and not isinstance(a.value, bool) else None
            operands.append(Operand(_checked(a), isinstance(a, Constant) and a.weak, static))
        try:
            return op.infer(tuple(operands))
        except TypeRuleError as exc:
            raise RuleError(f"{describe_expr(node)}: {exc}") from None
    assert not isinstance(node, GridRegionExpr)
    raise RuleError(f"{describe_expr(node)}: the translation built a node it cannot type")


def _checked(node: Expr) -> Type:
    assert node.checked_type is not None
    return node.checked_type
