"""The program a reduction works on: one function, every value a candidate for cutting.

``flatten`` turns the target into a single typed function whose parameters are plain
tensors: calls to functions are inlined (a callee's dims renamed into the caller's), a
tuple parameter becomes one parameter per field, and each module constant (weight)
becomes a parameter fed with its value, so a reduced program is one text file plus one
safetensors file. The *candidates* are the top-scope op calls, loops and (rarely) calls
that cannot be inlined, in topological order; the golden value of each is tfexec's own,
computed once on the flattened program and checked against the original's output.
"""

import dataclasses
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from tfexec.compare import EXACT, compare_tensors
from tfexec.errors import TfexecError
from tfexec.infer import infer_types
from tfexec.evaluator.visitor import evaluate
from tfexec.ir.describe import describe_expr
from tfexec.ir.dims import DimExpr, DimVar, ShapeDim
from tfexec.ir.expr import Call, ConstTensor, Expr, Function, GridRegionExpr, Tuple, Var
from tfexec.ir.graph import operands, post_order
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.ir.walk import dim_names, text_nodes
from tfexec.loading import LoadedModule
from tfexec.reduce._dims import DimBindings, call_bindings, node_needs, renamed, renamed_op
from tfexec.visitor import ExprMutator
from tfexec.wording import a


class ReductionError(TfexecError):
    """A program cannot be reduced: it does not fail, tfexec cannot evaluate it, or the
    predicate misbehaves. The message says which and what to do."""


@dataclass(frozen=True)
class FlatProgram:
    """A flattened program with what the reduction needs about each candidate node."""

    function: Function
    """Typed; its parameters are the original tensor inputs, then one per weight."""
    inputs: tuple[torch.Tensor, ...]
    origins: tuple[str, ...]
    """What each parameter stands for (``input x``, ``weight attn.wq``)."""
    candidates: tuple[Expr, ...]
    reads: tuple[frozenset[int], ...]
    """Per candidate: the candidates it reads directly (through tuples and projections)."""
    golden: tuple[object, ...]
    """Per candidate: tfexec's value (a CPU tensor, or a tuple of them)."""
    names: tuple[str, ...]
    """Per candidate: the parameter name it becomes when it is cut."""


def flatten(target: "Function | LoadedModule", inputs: Sequence[object]) -> FlatProgram:
    """Flatten ``target`` and compute every candidate's golden value on ``inputs``."""
    fn, loaded = _resolve(target)
    infer_types(fn)
    params, leaf_inputs, origins, seeded = _leaf_params(fn, inputs)
    weights = _Weights(loaded, {p.name for p in params})
    flattener = _Flattener(weights, None, fresh_vars=False)
    flattener.memo.update(seeded)
    body = flattener.mutate(fn.body)
    all_params = (*params, *weights.vars)
    all_inputs = (*leaf_inputs, *weights.values)
    flat = infer_types(Function(fn.name, all_params, body, span=fn.span))
    order = post_order([flat.body])
    candidates = tuple(n for n in order if isinstance(n, (Call, GridRegionExpr)))
    if not candidates:
        raise ReductionError(f"{describe_expr(fn)}: the program computes nothing (no op call or loop) to reduce")
    everything = Function(fn.name, all_params, Tuple((*candidates, flat.body)))
    try:
        values = evaluate(everything, *all_inputs)
        original = evaluate(target, *inputs)
    except TfexecError as exc:
        raise ReductionError(
            f"tfexec cannot evaluate the program on these inputs, so it has no golden values to feed cut nodes: {exc}"
        ) from exc
    assert isinstance(values, tuple)
    _check_same(values[-1], original, fn)
    names = _cut_names(candidates, {p.name for p in all_params})
    return FlatProgram(
        flat, all_inputs, (*origins, *weights.origins), candidates, _reads(order, candidates),
        tuple(_cpu(v) for v in values[:-1]), names,
    )


def _resolve(target: "Function | LoadedModule") -> "tuple[Function, LoadedModule | None]":
    if isinstance(target, LoadedModule):
        if target.entry is None:
            raise ReductionError(f"loaded module {target.name!r} has no entry; select a function with .function(name)")
        return target.entry, target
    return target, None


def _leaf_params(
    fn: Function, inputs: Sequence[object]
) -> tuple[list[Var], list[torch.Tensor], list[str], dict[int, Expr]]:
    """One tensor parameter per tensor leaf of the inputs; a tuple parameter is seeded with
    the ``Tuple`` of its fields' parameters."""
    if len(inputs) != len(fn.params):
        names = ", ".join(p.name for p in fn.params) or "none"
        raise ReductionError(f"{describe_expr(fn)}: expects {len(fn.params)} input(s) ({names}), got {len(inputs)}")
    params: list[Var] = []
    values: list[torch.Tensor] = []
    origins: list[str] = []
    seeded: dict[int, Expr] = {}

    def leaves(name: str, t: Type, value: object, what: str, own: Var | None = None) -> Expr:
        """The parameter(s) for one input: ``own`` (the original tensor parameter) or fresh ones."""
        if isinstance(t, TupleType):
            if not isinstance(value, tuple) or len(value) != len(t.fields):
                raise ReductionError(f"{describe_expr(fn)}: input {what} must be {a(f'{len(t.fields)}-tuple')}, got {type(value).__name__}")
            fields = [leaves(f"{name}_{i}", ft, v, f"{what} field {i}") for i, (ft, v) in enumerate(zip(t.fields, value))]
            return Tuple(tuple(fields))
        if isinstance(value, (bool, int, float)):
            value = torch.tensor(value, dtype=t.dtype.torch)
        if not isinstance(value, torch.Tensor):
            raise ReductionError(f"{describe_expr(fn)}: input {what} must be a tensor, got {type(value).__name__}")
        var = own if own is not None else Var(name, t)
        params.append(var)
        values.append(value.detach().to("cpu", t.dtype.torch).contiguous())
        origins.append(f"input {what}")
        return var

    for p, value in zip(fn.params, inputs):
        if isinstance(p.type, TupleType):
            seeded[id(p)] = leaves(p.name, p.type, value, p.name)
        else:
            leaves(p.name, p.type, value, p.name, own=p)
    return params, values, origins, seeded


class _Weights:
    """One parameter per module constant, shared by every inlined scope, with its value."""

    def __init__(self, loaded: "LoadedModule | None", taken: set[str]) -> None:
        self.loaded = loaded
        self.taken = taken
        self.by_name: dict[str, Var] = {}
        self.vars: list[Var] = []
        self.values: list[torch.Tensor] = []
        self.origins: list[str] = []

    def var_for(self, node: ConstTensor) -> Var:
        var = self.by_name.get(node.name)
        if var is None:
            if self.loaded is None:
                raise ReductionError(
                    f"{describe_expr(node)}: constant {node.name} needs a loaded module; reduce a LoadedModule"
                )
            value = self.loaded.constant(node.name, node.type)
            var = self.by_name[node.name] = Var(_unique(_identifier(node.name), self.taken), node.type)
            self.vars.append(var)
            self.values.append(value.detach().cpu().contiguous())
            self.origins.append(f"weight {node.name}")
        return var


class _Flattener(ExprMutator):
    """Inline function calls, turn module constants into parameters, and (inside an inlined
    callee) rename the callee's dims into the caller's and give loop variables fresh ``Var``s."""

    def __init__(self, weights: _Weights, dims: DimBindings | None, *, fresh_vars: bool) -> None:
        super().__init__()
        self.weights = weights
        self.dims = dims
        self.fresh_vars = fresh_vars

    def rewrite_ConstTensor(self, node: ConstTensor) -> Expr:
        return self.weights.var_for(node)

    def rewrite_Var(self, node: Var) -> Expr:
        if not self.fresh_vars:
            return node
        t = renamed(node.type, self.dims) if self.dims else node.type
        assert isinstance(t, (TensorType, TupleType))
        return Var(node.name, t, span=node.span)

    def rewrite_Call(self, node: Call) -> Expr:
        target = node.target
        if isinstance(target, Function):
            bindings = self._inlining(node, target)
            if bindings is not None:
                child = _Flattener(self.weights, bindings, fresh_vars=True)
                args = [self.mutated(arg) for arg in node.args]
                for param, arg in zip(target.params, args):
                    child.memo[id(param)] = arg
                return _named_like(child.mutate(target.body), node, args)
            return self.rebuild(node)
        if self.dims:
            op = renamed_op(target, self.dims)
            return Call(op, tuple(self.mutated(a) for a in node.args), span=node.span)
        return self.rebuild(node)

    def rewrite_GridRegionExpr(self, node: GridRegionExpr) -> Expr:
        if not self.dims:
            return self.rebuild(node)
        inits = tuple(self.mutated(a) for a in node.init_args)
        body = self.mutated(node.body)
        yields = tuple(self.mutated(y) for y in node.yield_values)
        induction = self.mutated(node.induction_var)
        carried = tuple(self.mutated(v) for v in node.carried_args)
        assert isinstance(induction, Var) and all(isinstance(v, Var) for v in carried)
        extent = renamed(node.extent, self.dims)
        return GridRegionExpr(extent, induction, inits, carried, body, yields, span=node.span)  # type: ignore[arg-type]

    def _inlining(self, call: Call, callee: Function) -> DimBindings | None:
        """The callee's dims in this scope's terms, or None when the call must stay whole
        (a dim the callee uses that its parameters do not bind)."""
        arg_types = [a.checked_type for a in call.args if a.checked_type is not None]
        if len(arg_types) != len(call.args):
            return None
        local = call_bindings([p.type for p in callee.params], arg_types)
        if not _used_dims(callee) <= set(local):
            if any(isinstance(n, ConstTensor) for n in text_nodes([callee.body])):
                raise ReductionError(
                    f"{describe_expr(call)}: {callee.name} uses dims its parameters do not bind, so it cannot be "
                    "inlined, and it reads module constants, which a reduced program takes as parameters"
                )
            return None
        bindings: dict[str, ShapeDim] = {}
        for name, dim in local.items():
            outer = renamed(dim, self.dims) if self.dims else dim
            assert isinstance(outer, (int, DimVar, DimExpr))
            bindings[name] = outer
        identity = all(isinstance(d, DimVar) and d.name == n for n, d in bindings.items())
        return {} if identity else bindings


def _named_like(root: Expr, call: Call, args: Sequence[Expr]) -> Expr:
    """An inlined body's root, bound to the call's name when it has none of its own
    (``q = rope(...)`` keeps printing as ``q``)."""
    own = root.span.binding if root.span is not None else None
    if own or call.span is None or not isinstance(root, (Call, GridRegionExpr)) or any(root is a for a in args):
        return root
    return dataclasses.replace(root, span=call.span, checked_type=None)


_USED: "weakref.WeakKeyDictionary[Function, frozenset[str]]" = weakref.WeakKeyDictionary()


def _used_dims(fn: Function) -> frozenset[str]:
    """Every dim name ``fn``'s own body and signature mention (cached per function)."""
    hit = _USED.get(fn)
    if hit is None:
        names: set[str] = set()
        for p in fn.params:
            names.update(dim_names(p.type))
        for node in text_nodes([fn.body]):
            names |= node_needs(node)
        hit = _USED[fn] = frozenset(names)
    return hit


def _reads(order: Sequence[Expr], candidates: Sequence[Expr]) -> tuple[frozenset[int], ...]:
    """For each candidate, the candidates it reads through non-candidate nodes."""
    index = {id(c): i for i, c in enumerate(candidates)}
    reach: dict[int, frozenset[int]] = {}
    reads: list[frozenset[int]] = [frozenset()] * len(candidates)
    for node in order:
        found: set[int] = set()
        for child in operands(node):
            i = index.get(id(child))
            found |= {i} if i is not None else reach.get(id(child), frozenset())
        if id(node) in index:
            reads[index[id(node)]] = frozenset(found)
        else:
            reach[id(node)] = frozenset(found)
    return tuple(reads)


def _identifier(text: str) -> str:
    name = re.sub(r"\W", "_", text).strip("_") or "v"
    return f"v_{name}" if name[0].isdigit() else name


def _unique(base: str, taken: set[str]) -> str:
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    taken.add(name)
    return name


def _cut_names(candidates: Sequence[Expr], taken: set[str]) -> tuple[str, ...]:
    """The parameter name each candidate takes when cut: its binding, else ``v<k>``."""
    out = []
    for k, node in enumerate(candidates):
        binding = node.span.binding if node.span is not None else None
        out.append(_unique(_identifier(binding) if binding else f"v{k}", taken))
    return tuple(out)


def _cpu(value: object) -> object:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().contiguous()
    assert isinstance(value, tuple)
    return tuple(_cpu(v) for v in value)


def _leaves(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    assert isinstance(value, tuple)
    return [t for v in value for t in _leaves(v)]


def _check_same(flat: object, original: object, fn: Function) -> None:
    """The flattened program must compute the original's output, bit for bit. (An original
    run elsewhere than the CPU, where kernels may round differently, is not compared.)"""
    a, b = _leaves(flat), _leaves(original)
    if any(t.device.type != "cpu" for t in b):
        return
    same = len(a) == len(b) and all(compare_tensors(y, x, EXACT).reason is None for x, y in zip(a, b))
    if not same:
        raise ReductionError(
            f"{describe_expr(fn)}: internal error: the flattened program (calls inlined, weights as parameters) "
            "computes a different output than the original; please report this program"
        )


__all__ = ["FlatProgram", "ReductionError", "flatten"]
