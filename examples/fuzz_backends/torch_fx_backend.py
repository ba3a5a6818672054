"""A real backend for ``tfexec fuzz``: the HIR program as a torch.fx graph, run by torch
eager or compiled by torch.compile (inductor, C++ on the CPU).

    tfexec fuzz --check "python examples/fuzz_backends/torch_fx_backend.py --mode inductor {program} {inputs} {dump}"

The graph is built node by node with the ``torch.fx.Graph`` construction API (placeholders,
``call_function`` nodes, one output) — no source text is generated. Loops are unrolled (their
trip counts are known once the inputs bind the dims), index arithmetic on known integers
(``dim_*`` of a loop index) is folded at build time, and every op call and loop of the top
scope becomes a graph output, so the dump holds each node's value under its tfexec node key.
In Python, ``backend("inductor")`` is the same adapter as a ``tfexec.fuzz.Backend``.
``--mode eager`` runs the same graph without compiling: the sanity row, which must agree
with tfexec on every program. An op or construct the adapter does not map makes it decline
the program (exit 3, the protocol's "unsupported"), never guess.
"""

import argparse
import operator
import sys
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.fx as fx

import tfexec
from tfexec.ir.dims import DimVar
from tfexec.ir.expr import Call, Constant, Expr, Function, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.ir.graph import function_order, loop_plan
from tfexec.ir.types import TensorType
from tfexec.ir.weak import weak_source
from tfexec.semantics.keys import function_keys, is_reported

DECLINED = 3
Value = Any  # an fx.Node (a tensor), a Python int/float/bool known at build time, or a tuple of those


class Unsupported(Exception):
    """The adapter does not map this program (the backend declines it)."""


UNARY: dict[str, Callable[..., Any]] = {
    "neg": torch.neg, "abs": torch.abs, "relu": torch.relu, "exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "silu": torch.nn.functional.silu,
    "erf": torch.erf, "sin": torch.sin, "cos": torch.cos, "floor": torch.floor, "ceil": torch.ceil,
    "trunc": torch.trunc, "sign": torch.sign, "log1p": torch.log1p, "expm1": torch.expm1, "log2": torch.log2,
    "log10": torch.log10, "tan": torch.tan, "atan": torch.atan, "reciprocal": torch.reciprocal,
    "isnan": torch.isnan, "isinf": torch.isinf, "isfinite": torch.isfinite, "logical_not": torch.logical_not,
    "bitwise_not": torch.bitwise_not,
}
BINARY: dict[str, Callable[..., Any]] = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "pow": torch.pow,
    "maximum": torch.maximum, "minimum": torch.minimum, "eq": torch.eq, "ne": torch.ne, "lt": torch.lt,
    "le": torch.le, "gt": torch.gt, "ge": torch.ge, "logical_and": torch.logical_and, "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor, "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or,
    "bitwise_xor": torch.bitwise_xor,
}
DIM_OPS: dict[str, Callable[[int, int], int]] = {
    "dim_add": operator.add, "dim_sub": operator.sub, "dim_mul": operator.mul, "dim_floordiv": operator.floordiv,
    "dim_mod": operator.mod, "dim_min": min, "dim_max": max,
}
RUNTIME_DIM_OPS: dict[str, Callable[..., Any]] = {
    "dim_add": torch.add, "dim_sub": torch.sub, "dim_mul": torch.mul, "dim_min": torch.minimum,
    "dim_max": torch.maximum, "dim_floordiv": torch.floor_divide, "dim_mod": torch.remainder,
}
REDUCERS: dict[str, Callable[..., Any]] = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}


class Builder:
    """Builds the fx graph of one function for concrete dim sizes."""

    def __init__(self, fn: Function, dims: dict[str, int]) -> None:
        self.fn = fn
        self.dims = dims
        self.graph = fx.Graph()
        self.root = torch.nn.Module()

    def call(self, target: Callable[..., Any], *args: Any, **kwargs: Any) -> fx.Node:
        return self.graph.call_function(target, tuple(args), kwargs)

    def size(self, d: Any) -> int:
        return int(tfexec.resolve_dim(d, self.dims))

    def tensor(self, v: Value, dtype: torch.dtype) -> Value:
        """A build-time scalar as a graph tensor (for a dump entry or a tensor-only op)."""
        if isinstance(v, fx.Node):
            return v
        return self.call(torch.scalar_tensor, v, dtype=dtype)

    def build(self, inputs: Sequence[torch.Tensor]) -> tuple[fx.GraphModule, list[str]]:
        env: dict[int, Value] = {}
        for p in self.fn.params:
            env[id(p)] = self.graph.placeholder(p.name.replace(" ", "_"))
        keys = function_keys(self.fn)
        outputs: list[Value] = []
        names: list[str] = []
        for node in function_order(self.fn):
            env[id(node)] = self.value(node, env)
            if is_reported(node):
                self.collect(keys.key(self.fn.name, node), env[id(node)], node, outputs, names)
        self.graph.output(tuple(outputs))
        return fx.GraphModule(self.root, self.graph), names

    def collect(self, key: str, v: Value, node: Expr, outputs: list[Value], names: list[str]) -> None:
        t = node.checked_type
        if isinstance(v, tuple):
            for i, f in enumerate(v):
                sub = t.fields[i] if t is not None and hasattr(t, "fields") else None
                self.collect(f"{key}.{i}", f, _typed(sub), outputs, names)
            return
        dtype = t.dtype.torch if isinstance(t, TensorType) else torch.int64
        outputs.append(self.tensor(v, dtype))
        names.append(key)

    def value(self, node: Expr, env: dict[int, Value]) -> Value:
        if id(node) in env:
            return env[id(node)]
        if isinstance(node, Var):
            raise Unsupported(f"unbound variable {node.name}")
        if isinstance(node, Constant):
            if isinstance(node.value, torch.Tensor):  # a module buffer, read with get_attr
                name = f"const{len(self.root._buffers)}"
                self.root.register_buffer(name, node.value.clone())
                return self.graph.get_attr(name)
            if weak_source(node) is not None and isinstance(node.value, float):
                return float(torch.tensor(node.value, dtype=torch.float32))  # a weak float is an f32 (hir)
            return node.value
        if isinstance(node, Tuple):
            return tuple(self.value(f, env) for f in node.fields)
        if isinstance(node, TupleGetItem):
            inner = self.value(node.tuple, env)
            if not isinstance(inner, tuple):
                raise Unsupported("a projection of a value that is not a tuple")
            return inner[node.index]
        if isinstance(node, GridRegionExpr):
            return self.loop(node, env)
        if isinstance(node, Call):
            if isinstance(node.target, Function):
                raise Unsupported("a call the flattening left in place")
            return self.op(node, [self.value(a, env) for a in node.args])
        raise Unsupported(f"a {type(node).__name__} node")

    def operand(self, expr: Expr, v: Value) -> Value:
        """A build-time scalar operand as a 0-d graph tensor: a weak one of its own kind
        (b1, i64, f32, as tfexec's kernels take it), an index value as i64."""
        if isinstance(v, (fx.Node, tuple)):
            return v
        t = expr.checked_type
        dtype = t.dtype.torch if isinstance(t, TensorType) and weak_source(expr) is None else _scalar_dtype(v)
        return self.tensor(v, dtype)

    def loop(self, region: GridRegionExpr, env: dict[int, Value]) -> Value:
        """The loop unrolled: each iteration's body evaluated with the index a known int."""
        trips = self.size(region.extent)
        carries = [self.value(i, env) for i in region.init_args]
        plan = loop_plan(region)
        last: Value = None
        for i in range(trips):
            inner = dict(env)
            inner[id(region.induction_var)] = i
            for phi, c in zip(region.carried_args, carries):
                inner[id(phi)] = c
            for n in plan.schedule:
                if id(n) not in inner:
                    inner[id(n)] = self.value(n, inner)
            if region.carried_args:
                carries = [self.value(y, inner) for y in region.yield_values]
            else:
                last = self.value(region.body, inner)
        if not region.carried_args:
            if trips == 0:
                raise Unsupported("a loop without carries that runs zero times")
            return last
        return carries[0] if len(carries) == 1 else tuple(carries)

    def op(self, node: Call, args: list[Value]) -> Value:
        op = node.target
        name = op.name
        t = node.checked_type
        out = t.dtype.torch if isinstance(t, TensorType) else None
        if name in DIM_OPS:
            a, b = args
            if isinstance(a, int) and isinstance(b, int):
                return DIM_OPS[name](a, b)  # folded at build time
            a, b = (self.operand(e, v) for e, v in zip(node.args, args))
            return self.call(RUNTIME_DIM_OPS[name], a, b)  # index arithmetic on a run-time i64 (argmax, say)
        # A Python scalar operand as tfexec takes it: a 0-d tensor (a weak one of its own kind); slice starts stay ints.
        args = [self.operand(e, v) for e, v in zip(node.args[:1], args[:1])] + args[1:] if name == "slice" else [
            self.operand(e, v) for e, v in zip(node.args, args)]
        if name in UNARY:
            y = self.call(UNARY[name], args[0])
        elif name == "gelu":
            y = self.call(torch.nn.functional.gelu, args[0], approximate=op.approximate)
        elif name in BINARY:
            y = self.call(BINARY[name], *args)
        elif name == "where":
            y = self.call(torch.where, *args)
        elif name == "cast":
            y = self.call(torch.Tensor.to, args[0], op.dtype.torch)
        elif name == "matmul":
            y = self.call(torch.matmul, *args)
        elif name == "reduce":
            if op.axes == ():
                return args[0]
            rank = len(node.args[0].checked_type.shape)  # type: ignore[union-attr]
            axes = tuple(range(rank)) if op.axes is None else tuple(sorted(a % rank for a in op.axes))
            if op.kind == "prod":
                if len(axes) != 1:
                    raise Unsupported("prod over several axes")
                y = self.call(torch.prod, args[0], axes[0], keepdim=op.keepdims)
            else:
                y = self.call(REDUCERS[op.kind], args[0], dim=axes, keepdim=op.keepdims)
        elif name == "argmax":
            y = self.call(torch.argmax, args[0], dim=op.axis, keepdim=op.keepdims)
        elif name == "softmax":
            y = self.call(torch.softmax, args[0], op.axis)
        elif name == "transpose":
            y = self.call(torch.permute, args[0], tuple(op.perm))
        elif name == "reshape":
            y = self.call(torch.reshape, args[0], tuple(self.size(d) for d in op.shape))
        elif name == "broadcast_to":
            y = self.call(torch.broadcast_to, args[0], tuple(self.size(d) for d in op.shape))
        elif name == "concat":
            y = self.call(torch.cat, list(args), op.axis)
        elif name == "slice":
            x, starts = args
            strides = (1,) * len(starts) if op.strides is None else tuple(self.size(s) for s in op.strides)
            y = x
            for axis, (s, n, st) in enumerate(zip(starts, (self.size(n) for n in op.sizes), strides)):
                span = (n - 1) * st + 1 if n else 0
                y = self.call(torch.narrow, y, axis, s, span)  # a start computed at run time is a 0-d tensor
                if st != 1:
                    y = self.call(operator.getitem, y, (slice(None),) * axis + (slice(None, None, st),))
        elif name == "full":
            y = self.call(torch.full, tuple(self.size(d) for d in op.shape), op.value, dtype=op.dtype.torch)
        elif name == "arange":
            y = self.call(torch.arange, self.size(op.extent), dtype=op.dtype.torch)
        elif name == "take":
            x, idx = args
            axis = op.axis % len(_shape(node.args[0]))
            flat = self.call(torch.reshape, idx, (-1,))
            picked = self.call(torch.index_select, x, axis, flat)
            xs, ids = _shape(node.args[0]), _shape(node.args[1])
            y = self.call(torch.reshape, picked, tuple(self.size(d) for d in (*xs[:axis], *ids, *xs[axis + 1:])))
        elif name == "gather":
            y = self.call(torch.gather, args[0], op.axis, args[1])
        elif name in ("rms_norm", "layer_norm"):
            xs = _shape(node.args[0])
            normalized = [self.size(xs[a % len(xs)]) for a in sorted(a % len(xs) for a in op.axes)]
            fn = torch.nn.functional.rms_norm if name == "rms_norm" else torch.nn.functional.layer_norm
            y = self.call(fn, args[0], normalized, *args[1:], eps=op.eps)
        elif name == "linear":
            y = self.call(torch.nn.functional.linear, *args)
        elif name in ("floor_divide", "trunc_divide"):
            y = self.call(torch.div, *args, rounding_mode="floor" if name == "floor_divide" else "trunc")
        elif name in ("remainder", "fmod"):
            y = self.call(getattr(torch, name), *args)
        elif name == "round":
            y = self.call(torch.round, args[0], decimals=op.decimals)
        elif name in ("any", "all"):
            y = args[0] if op.axes == () else self.call(
                getattr(torch, name), args[0], dim=None if op.axes is None else tuple(op.axes), keepdim=op.keepdims)
        elif name in ("tril", "triu"):
            y = self.call(getattr(torch, name), args[0], op.diagonal)
        elif name == "clamp":
            y = self.call(torch.clamp, *args)
        elif name in ("cumsum", "cumprod"):
            y = self.call(getattr(torch, name), args[0], op.axis, dtype=None if op.dtype is None else op.dtype.torch)
        else:
            raise Unsupported(f"op {name}")
        if out is not None:
            y = self.call(torch.Tensor.to, y, out)  # the dtype tfexec's type rule gives (a no-op when torch agrees)
        return y


def _shape(expr: Expr) -> tuple[Any, ...]:
    t = expr.checked_type
    if not isinstance(t, TensorType):
        raise Unsupported("an operand that is not a tensor")
    return tuple(t.shape)


def _typed(t: Any) -> Expr:
    """A stand-in node carrying only a checked type (for a tuple field's dump entry)."""
    holder = Var("_", t) if isinstance(t, TensorType) else Var("_", TensorType((), tfexec.DType.int64))
    return holder


def _scalar_dtype(v: Any) -> torch.dtype:
    return torch.bool if isinstance(v, bool) else torch.int64 if isinstance(v, int) else torch.float32


def bind_dims(fn: Function, inputs: Sequence[torch.Tensor]) -> dict[str, int]:
    """The size of every dim a parameter's axis names."""
    dims: dict[str, int] = {}
    for p, x in zip(fn.params, inputs):
        if isinstance(p.type, TensorType):
            for d, n in zip(p.type.shape, x.shape):
                if isinstance(d, DimVar):
                    dims[d.name] = int(n)
    return dims


def compute(fn: Function, inputs: Sequence[torch.Tensor], mode: str) -> dict[str, torch.Tensor]:
    """Every top-scope node's value of ``fn`` on ``inputs``, by node key, from the fx graph
    run eagerly (``mode="eager"``) or compiled by inductor (``mode="inductor"``)."""
    tfexec.infer_types(fn)
    for p in fn.params:
        if isinstance(p.type, TensorType) and p.type.layout is not None:
            raise Unsupported(f"parameter {p.name} has a layout")
    gm, names = Builder(fn, bind_dims(fn, inputs)).build(inputs)
    if mode == "eager":
        outputs = gm(*inputs)
    else:
        torch._dynamo.reset()  # each program is a new graph: no recompile limit, no stale guards
        outputs = torch.compile(gm, backend="inductor", dynamic=False)(*inputs)
    return {k: v for k, v in zip(names, outputs)}


def backend(mode: str) -> Callable[[Function, tuple[torch.Tensor, ...]], dict[str, torch.Tensor]]:
    """The adapter as an in-process ``tfexec.fuzz.Backend`` (no process start per program)."""
    from tfexec.fuzz import BackendDeclined

    def run_backend(function: Function, inputs: tuple[torch.Tensor, ...]) -> dict[str, torch.Tensor]:
        try:
            return compute(function, inputs, mode)
        except Unsupported as exc:
            raise BackendDeclined(str(exc)) from None

    return run_backend


def run(mode: str, program: str, inputs_path: str, dump: str) -> int:
    """The check command: read the program and inputs, write the dump."""
    from safetensors.torch import load_file

    from tfexec.loading import write_tensors

    module = tfexec.parse(open(program, encoding="utf-8").read(), filename=program)
    fn = module.functions[module.entry or next(iter(module.functions))]
    tensors = load_file(inputs_path)
    write_tensors(compute(fn, [tensors[p.name] for p in fn.params], mode), dump)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=("eager", "inductor"), default="inductor")
    p.add_argument("program")
    p.add_argument("inputs")
    p.add_argument("dump")
    args = p.parse_args(argv)
    try:
        return run(args.mode, args.program, args.inputs, args.dump)
    except Unsupported as exc:
        print(f"unsupported: {exc}", file=sys.stderr)
        return DECLINED


if __name__ == "__main__":
    sys.exit(main())
