"""The text of a function's values and names for the printer: constants, op attributes, and
the dim names a function's text mentions (``tfexec.text._print_body`` uses them)."""

import dataclasses

import torch

from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, GridRegionExpr
from tfexec.ir.ops.base import Op
from tfexec.ir.types import TensorType, Type
from tfexec.ir.walk import dim_names
from tfexec.text import grammar as g

_DEFAULT_WEAK = {bool: TensorType((), DType.bool), int: TensorType((), DType.int64), float: TensorType((), DType.float32)}



def is_literal(node: Constant) -> bool:
    value = node.value
    return node.weak and type(value) in _DEFAULT_WEAK and node.type == _DEFAULT_WEAK[type(value)]


def _identical(a: object, b: object) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_identical(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def attribute_texts(op: Op) -> list[str]:
    required = g.required_attributes(type(op))
    out = []
    for f in dataclasses.fields(op):
        value = getattr(op, f.name)
        if f.name in required or f.default is dataclasses.MISSING or not _identical(value, f.default):
            out.append(f"{f.name}={g.format_value(value)}")
    return out


def _list_shape(data: object) -> tuple[int, ...]:
    dims = []
    while isinstance(data, list):
        dims.append(len(data))
        if not data:
            break
        data = data[0]
    return tuple(dims)


def _data_text(data: object) -> str:
    if isinstance(data, list):
        return "[" + ", ".join(_data_text(x) for x in data) + "]"
    assert isinstance(data, (bool, int, float))
    return g.format_scalar(data)


def constant_text(node: Constant) -> str:
    if is_literal(node):
        assert not isinstance(node.value, torch.Tensor)
        return g.format_scalar(node.value)
    t = node.type
    extra = ""
    if isinstance(node.value, torch.Tensor):
        tensor = node.value.detach().cpu()
        if tensor.dtype != t.dtype.torch:
            tensor = tensor.to(t.dtype.torch)  # the parser makes tensors of the type's dtype
        data = tensor.tolist() if tensor.dim() else [tensor.item()]
        shape = tuple(tensor.shape)
        if _list_shape(data) != shape:
            extra = f", shape={g.format_value(shape)}"
        text = _data_text(data)
        plain = t.shape == shape and t.layout is None
    else:
        text = g.format_scalar(node.value)
        plain = t.rank == 0 and t.layout is None
    kind = f"dtype={t.dtype}" if plain else f"type={t}"
    weak = ", weak=True" if node.weak else ""
    return f"constant({text}, {kind}{extra}{weak})"


def dim_names_of(fn: Function, nodes: list[Expr]) -> set[str]:
    """DimVar names the function's text mentions: a local value may not take one."""
    out: set[str] = set()
    types: list[Type] = [p.type for p in fn.params] + ([fn.ret_type] if fn.ret_type is not None else [])
    for node in nodes:
        if isinstance(node, Call) and not isinstance(node.target, Function):
            out.update(dim_names(tuple(getattr(node.target, f.name) for f in dataclasses.fields(node.target))))
        elif isinstance(node, GridRegionExpr):
            out.update(dim_names(node.extent))
            types += [v.type for v in (node.induction_var, *node.carried_args)]
        elif isinstance(node, (Constant, ConstTensor)):
            types.append(node.type)
    out.update(dim_names(tuple(types)))
    return out


__all__ = ["attribute_texts", "constant_text", "dim_names_of", "is_literal"]
