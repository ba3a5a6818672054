"""The wire form of a program for the mesh participants: JSON records and named tensors.

A participant is a fresh Python process, so the program must reach it as data. Nothing
is pickled: ``encode`` turns a ``Function`` (with every callee, loop body and constant)
into a list of JSON records in operands-first order plus a mapping of named tensors
(tensor-valued ``Constant``s), and ``decode`` rebuilds the same DAG — same sharing, same
spans, same ``checked_type``s — so ``describe_expr`` reads identically on both sides and a
record index names the same node in the caller and in every participant.

An op is sent as its class (``module:qualname``, imported by the participant) and its
dataclass fields. Attribute values are plain data: ``None``, ``bool``, ``int``, ``float``,
``str``, tuples, lists and str-keyed dicts of those, and the IR's own values (``DType``,
dims, types, layouts, meshes). Anything else is refused before any process starts.
"""

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TypeAlias, Union

import torch

from tfexec.errors import EvalError
from tfexec.ir.describe import describe_expr
from tfexec.ir.dims import DimExpr, DimVar
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.ops.base import Op
from tfexec.ir.span import Span
from tfexec.ir.types import Layout, Mesh, Replicate, ShardLayout, Split, TensorType, TupleType
from tfexec.mesh._internals import eval_registry
from tfexec.wording import a

Json: TypeAlias = Union[None, bool, int, float, str, list["Json"], dict[str, "Json"]]
Item: TypeAlias = Union[Expr, Function]


class WireError(EvalError):
    """A program that cannot be sent to the mesh participants (raised in the caller)."""


@dataclass(frozen=True, slots=True)
class Encoded:
    """A program as records (operands first, the entry function last), its tensors, the
    nodes each record came from (the caller's, for messages), the meshes its layouts
    name (each with the first node naming it) and the modules a participant must import."""

    records: list[Json]
    tensors: dict[str, torch.Tensor]
    nodes: list[Item]
    meshes: list[tuple[Mesh, Item]]
    modules: list[str]


def _children(item: Item) -> list[Item]:
    if isinstance(item, Function):
        return [*item.params, item.body]
    if isinstance(item, Call):
        return [*item.args, *([item.target] if isinstance(item.target, Function) else [])]
    if isinstance(item, Tuple):
        return list(item.fields)
    if isinstance(item, TupleGetItem):
        return [item.tuple]
    if isinstance(item, GridRegionExpr):
        return [item.induction_var, *item.init_args, *item.carried_args, item.body, *item.yield_values]
    return []


def encode(fn: Function, key: str) -> Encoded:
    """``fn`` and everything it reaches as wire records; tensor names start with ``key``."""
    enc = _Encoder(key)
    index = enc.index
    stack: list[tuple[Item, bool]] = [(fn, False)]
    while stack:
        item, expanded = stack.pop()
        if id(item) in index:
            continue
        if expanded:
            enc.emit(item)
            continue
        stack.append((item, True))
        stack.extend((c, False) for c in reversed(_children(item)) if id(c) not in index)
    return Encoded(enc.records, enc.tensors, enc.nodes, enc.meshes, sorted(enc.modules))


class _Encoder:
    def __init__(self, key: str) -> None:
        self.key = key
        self.index: dict[int, int] = {}
        self.records: list[Json] = []
        self.nodes: list[Item] = []
        self.tensors: dict[str, torch.Tensor] = {}
        self.meshes: list[tuple[Mesh, Item]] = []
        self.modules: set[str] = set()
        self.item: Item | None = None

    def ref(self, item: Item) -> int:
        return self.index[id(item)]

    def refs(self, items: tuple[Expr, ...]) -> list[Json]:
        return [self.ref(i) for i in items]

    def emit(self, item: Item) -> None:
        self.item = item
        record: dict[str, Json]
        if isinstance(item, Function):
            record = {"k": "fn", "name": item.name, "params": self.refs(item.params), "body": self.ref(item.body),
                      "ret": self.value(item.ret_type)}
        elif isinstance(item, Var):
            record = {"k": "var", "name": item.name, "type": self.value(item.type)}
        elif isinstance(item, Constant):
            record = {"k": "const", "value": self.constant(item), "type": self.value(item.type), "weak": item.weak}
        elif isinstance(item, ConstTensor):
            record = {"k": "ctensor", "name": item.name, "type": self.value(item.type)}
        elif isinstance(item, Call):
            target = item.target
            head: Json = self.ref(target) if isinstance(target, Function) else self.op(item, target)
            record = {"k": "call", "target": head, "args": self.refs(item.args)}
        elif isinstance(item, Tuple):
            record = {"k": "tuple", "fields": self.refs(item.fields)}
        elif isinstance(item, TupleGetItem):
            record = {"k": "get", "of": self.ref(item.tuple), "index": item.index}
        else:
            record = {
                "k": "grid", "extent": self.value(item.extent), "iv": self.ref(item.induction_var),
                "init": self.refs(item.init_args), "carried": self.refs(item.carried_args),
                "body": self.ref(item.body), "yields": self.refs(item.yield_values),
            }
        span = item.span
        record["span"] = None if span is None else [span.file, span.line, span.column, span.binding, span.op]
        if not isinstance(item, Function):
            record["ct"] = self.value(item.checked_type)
        self.index[id(item)] = len(self.records)
        self.records.append(record)
        self.nodes.append(item)

    def constant(self, node: Constant) -> Json:
        if isinstance(node.value, torch.Tensor):
            name = f"{self.key}c{len(self.records)}"
            try:
                DType.from_torch(node.value.dtype)
            except TypeError as exc:
                raise WireError(f"{describe_expr(node)}: cannot send this constant to the mesh participants: {exc}") from None
            self.tensors[name] = node.value
            return {"tensor": name}
        return self.value(node.value)

    def op(self, call: Call, op: Op) -> Json:
        cls = type(op)
        module = _importable(call, cls, f"op class {cls.__qualname__}")
        if not module.startswith("tfexec."):  # the catalogue is imported with tfexec itself
            self.modules.add(module)
        handler = eval_registry.lookup(cls)
        where = getattr(handler, "__module__", None)
        if handler is not None and isinstance(where, str) and not where.startswith("tfexec."):
            self.modules.add(_importable(call, handler, f"the evaluator handler of {cls.__qualname__}", where))
        attrs: dict[str, Json] = {}
        for f in fields(op):
            if f.init:
                try:
                    attrs[f.name] = self.value(getattr(op, f.name))
                except WireError as exc:
                    raise WireError(f"{describe_expr(call)}: attribute {f.name} of {cls.__name__}: {exc}") from None
        return {"cls": f"{cls.__module__}:{cls.__qualname__}", "attrs": attrs}

    def value(self, v: object) -> Json:
        """Plain data (attributes, types, dims, layouts) as tagged JSON."""
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, float):
            return {"float": v.hex() if math.isfinite(v) else repr(v)}
        if isinstance(v, tuple):
            return {"tuple": [self.value(x) for x in v]}
        if isinstance(v, list):
            return {"list": [self.value(x) for x in v]}
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return {"dict": {k: self.value(x) for k, x in v.items()}}
        if isinstance(v, DType):
            return {"dtype": v.value}
        if isinstance(v, DimVar):
            return {"dimvar": v.name}
        if isinstance(v, DimExpr):
            return {"dimexpr": [v.op, self.value(v.lhs), self.value(v.rhs)]}
        if isinstance(v, TensorType):
            return {"tensor_type": [self.value(v.shape), self.value(v.dtype), self.value(v.layout)]}
        if isinstance(v, TupleType):
            return {"tuple_type": [self.value(f) for f in v.fields]}
        if isinstance(v, Layout):
            return {"layout": self.value(v.shape)}
        if isinstance(v, ShardLayout):
            return {"shard_layout": [self.value(v.mesh), self.value(v.attrs), self.value(v.layout)]}
        if isinstance(v, Mesh):
            if self.item is not None:
                self.meshes.append((v, self.item))
            return {"mesh": [self.value(v.shape), self.value(v.axis_names)]}
        if isinstance(v, Split):
            return {"split": v.tensor_axis}
        if isinstance(v, Replicate):
            return {"replicate": None}
        raise WireError(f"{a(type(v).__name__)} ({_short(v)}) is not plain data that can be sent to the mesh participants")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _importable(call: Call, obj: object, what: str, module: str | None = None) -> str:
    module = module if module is not None else getattr(obj, "__module__", "")
    qualname = getattr(obj, "__qualname__", "")
    if module == "__main__" or "<locals>" in qualname or not module:
        raise WireError(
            f"{describe_expr(call)}: {what} is defined in {module or 'an unknown module'}"
            f"{' inside a function' if '<locals>' in qualname else ''}; mesh participants are separate processes "
            "that import it by module name: define it at the top level of an importable module"
        )
    return str(module)


# -- decoding (in a participant) ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Decoded:
    """A program rebuilt from its records: the entry function, every node by record index,
    and the record index of each op instance (to say which node a participant is in)."""

    function: Function
    nodes: list[Item]
    op_nodes: dict[int, int]


def decode(records: list[Json], tensors: Callable[[str], torch.Tensor]) -> Decoded:
    """Rebuild the program ``encode`` wrote; ``tensors`` reads a named tensor."""
    nodes: list[Item] = []
    op_nodes: dict[int, int] = {}

    def expr(i: Json) -> Expr:
        node = nodes[_int(i)]
        assert not isinstance(node, Function)
        return node

    def exprs(items: Json) -> tuple[Expr, ...]:
        return tuple(expr(i) for i in _list(items))

    def var(i: Json) -> Var:
        node = nodes[_int(i)]
        assert isinstance(node, Var)
        return node

    for raw in records:
        r = _dict(raw)
        kind = r["k"]
        span = _span(r.get("span"))
        item: Item
        if kind == "fn":
            fn_ret = _value(r["ret"])
            assert fn_ret is None or isinstance(fn_ret, (TensorType, TupleType))
            item = Function(_str(r["name"]), tuple(var(i) for i in _list(r["params"])), expr(r["body"]), fn_ret, span=span)
        elif kind == "var":
            item = Var(_str(r["name"]), _type(r["type"]), span=span)
        elif kind == "const":
            raw_value = r["value"]
            if isinstance(raw_value, dict) and "tensor" in raw_value:
                value: object = tensors(_str(raw_value["tensor"]))
            else:
                value = _value(raw_value)
            assert isinstance(value, (bool, int, float, torch.Tensor))
            ctype = _type(r["type"])
            assert isinstance(ctype, TensorType)
            item = Constant(value, ctype, bool(r["weak"]), span=span)
        elif kind == "ctensor":
            ttype = _type(r["type"])
            assert isinstance(ttype, TensorType)
            item = ConstTensor(_str(r["name"]), ttype, span=span)
        elif kind == "call":
            target = r["target"]
            if isinstance(target, int):
                callee = nodes[target]
                assert isinstance(callee, Function)
                item = Call(callee, exprs(r["args"]), span=span)
            else:
                op = _op(_dict(target))
                op_nodes[id(op)] = len(nodes)
                item = Call(op, exprs(r["args"]), span=span)
        elif kind == "tuple":
            item = Tuple(exprs(r["fields"]), span=span)
        elif kind == "get":
            item = TupleGetItem(expr(r["of"]), _int(r["index"]), span=span)
        elif kind == "grid":
            extent = _value(r["extent"])
            assert isinstance(extent, (int, DimVar, DimExpr))
            item = GridRegionExpr(
                extent, var(r["iv"]), exprs(r["init"]), tuple(var(i) for i in _list(r["carried"])),
                expr(r["body"]), exprs(r["yields"]), span=span,
            )
        else:
            raise ValueError(f"unknown wire record kind {kind!r}")
        if not isinstance(item, Function):
            checked = _value(r.get("ct"))
            if checked is not None:
                assert isinstance(checked, (TensorType, TupleType))
                item.with_checked_type(checked)
        nodes.append(item)
    entry = nodes[-1]
    assert isinstance(entry, Function)
    return Decoded(entry, nodes, op_nodes)


def _op(raw: dict[str, Json]) -> Op:
    module, _, qualname = _str(raw["cls"]).partition(":")
    obj: object = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not (isinstance(obj, type) and issubclass(obj, Op)):
        raise TypeError(f"{module}:{qualname} is not an Op class")
    attrs = {k: _value(v) for k, v in _dict(raw["attrs"]).items()}
    op: Op = obj(**attrs)
    return op


def _type(raw: Json) -> TensorType | TupleType:
    t = _value(raw)
    assert isinstance(t, (TensorType, TupleType))
    return t


def _span(raw: Json) -> Span | None:
    if raw is None:
        return None
    file, line, column, binding, op = _list(raw)
    return Span(_str(file), _int(line), _int(column), None if binding is None else _str(binding), _str(op))


def _value(raw: Json) -> object:
    if raw is None or isinstance(raw, (bool, int, str)):
        return raw
    if isinstance(raw, list):  # never written at top level; records hold lists of refs
        raise ValueError("untagged list in wire data")
    assert isinstance(raw, dict) and len(raw) == 1, raw
    ((tag, body),) = raw.items()
    if tag == "float":
        text = _str(body)
        return float(text) if text in ("inf", "-inf", "nan") else float.fromhex(text)
    if tag == "tuple":
        return tuple(_value(x) for x in _list(body))
    if tag == "list":
        return [_value(x) for x in _list(body)]
    if tag == "dict":
        return {k: _value(x) for k, x in _dict(body).items()}
    if tag == "dtype":
        return DType(_str(body))
    if tag == "dimvar":
        return DimVar(_str(body))
    if tag == "dimexpr":
        op, lhs, rhs = _list(body)
        return DimExpr(_str(op), _value(lhs), _value(rhs))  # type: ignore[arg-type]
    if tag == "tensor_type":
        shape, dtype, layout = (_value(x) for x in _list(body))
        return TensorType(shape, dtype, layout)  # type: ignore[arg-type]
    if tag == "tuple_type":
        return TupleType(tuple(_type(x) for x in _list(body)))
    if tag == "layout":
        return Layout(_value(body))  # type: ignore[arg-type]
    if tag == "shard_layout":
        mesh, attrs, layout = (_value(x) for x in _list(body))
        return ShardLayout(mesh, attrs, layout)  # type: ignore[arg-type]
    if tag == "mesh":
        shape, names = (_value(x) for x in _list(body))
        return Mesh(shape, names)  # type: ignore[arg-type]
    if tag == "split":
        return Split(_int(body))
    if tag == "replicate":
        return Replicate()
    raise ValueError(f"unknown wire value tag {tag!r}")


def _int(raw: Json) -> int:
    assert isinstance(raw, int) and not isinstance(raw, bool), raw
    return raw


def _str(raw: Json) -> str:
    assert isinstance(raw, str), raw
    return raw


def _list(raw: Json) -> list[Json]:
    assert isinstance(raw, list), raw
    return raw


def _dict(raw: Json) -> dict[str, Json]:
    assert isinstance(raw, dict), raw
    return raw
