"""Deliberately broken backends for the fuzzer's tests: tfexec with one bug planted.

Each is a ``tfexec.fuzz.Backend`` — ``(function, inputs) -> {node key: tensor}`` — that
computes tfexec's own table on a fresh parse of the program's text, with one wrong rule:
``gelu`` off by one ulp on every third element, ``slice`` reading its window one element
early along an axis whose start is positive, or a loop whose last carry never updates.
"""

import dataclasses
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import torch

import tfexec
from tfexec.compare import tfexec_table
from tfexec.ir.expr import Expr, Function, GridRegionExpr, Tuple
from tfexec.ir.ops.elementwise import Gelu
from tfexec.ir.ops.shape import Slice
from tfexec.visitor import ExprMutator


def _reparsed(function: Function) -> Function:
    """A fresh copy of ``function`` (its text parsed again), so no state is shared with tfexec's run."""
    return tfexec.parse_function(tfexec.print_ir(function))


@contextmanager
def _rule(op: type[tfexec.Op], handler: "object") -> Iterator[None]:
    real = tfexec.eval_registry.lookup(op)
    tfexec.register_eval(op, override=True)(handler)  # type: ignore[arg-type]
    try:
        yield
    finally:
        tfexec.eval_registry.add(op, real, override=True)


def _ulp_gelu(ctx: tfexec.EvaluateContext) -> tfexec.Value:
    (x,) = ctx.args
    assert isinstance(x, tfexec.TensorValue) and isinstance(ctx.op, Gelu)
    y = torch.nn.functional.gelu(x.data, approximate=ctx.op.approximate)
    every_third = (torch.arange(y.numel()) % 3 == 0).reshape(y.shape)
    nudged = torch.nextafter(y, torch.full_like(y, float("inf")))
    return tfexec.TensorValue(torch.where(every_third, nudged, y), x.type)


def gelu_off_by_an_ulp(function: Function, inputs: tuple[torch.Tensor, ...]) -> Mapping[str, torch.Tensor]:
    """tfexec, but ``gelu`` is one ulp high on every third element (only exact tolerances see it)."""
    with _rule(Gelu, _ulp_gelu):
        return tfexec_table(_reparsed(function), inputs)


def _early_slice(ctx: tfexec.EvaluateContext) -> tfexec.Value:
    x, starts = ctx.args
    assert isinstance(x, tfexec.TensorValue) and isinstance(starts, tfexec.TupleValue) and isinstance(ctx.op, Slice)
    begin = [int(f.data) for f in starts.elements if isinstance(f, tfexec.TensorValue)]
    sizes = [tfexec.resolve_dim(s, ctx.dim_bindings) for s in ctx.op.sizes]
    strides = [1] * len(sizes) if ctx.op.strides is None else [tfexec.resolve_dim(s, ctx.dim_bindings) for s in ctx.op.strides]
    begin = [b - 1 if b > 0 else b for b in begin]  # the bug: a positive start read one element early
    index = tuple(slice(b, b + (n - 1) * st + 1, st) for b, n, st in zip(begin, sizes, strides))
    return tfexec.TensorValue(x.data[index], ctx.result_type or x.type)  # type: ignore[arg-type]


def slice_start_off_by_one(function: Function, inputs: tuple[torch.Tensor, ...]) -> Mapping[str, torch.Tensor]:
    """tfexec, but ``slice`` reads its window one element early on an axis whose start is positive."""
    with _rule(Slice, _early_slice):
        return tfexec_table(_reparsed(function), inputs)


class _DropLastCarry(ExprMutator):
    """Every loop with carries yields its last carry unchanged (the update is dropped)."""

    def rewrite_GridRegionExpr(self, node: GridRegionExpr) -> Expr:
        rebuilt = self.rebuild(node)
        assert isinstance(rebuilt, GridRegionExpr)
        if not rebuilt.carried_args:
            return rebuilt
        phi = rebuilt.carried_args[-1]
        yields = (*rebuilt.yield_values[:-1], phi)
        body: Expr = phi if len(yields) == 1 else Tuple(yields)
        return dataclasses.replace(rebuilt, yield_values=yields, body=body, checked_type=None)


def dropped_loop_carry(function: Function, inputs: tuple[torch.Tensor, ...]) -> Mapping[str, torch.Tensor]:
    """tfexec on the program with every loop's last carry never updated. The rewrite drops
    nodes (and so renumbers unnamed keys): each value is stored under its original node's key."""
    from tfexec.compare._tables import node_key_of
    from tfexec.semantics.keys import node_sources

    fn = _reparsed(function)
    mutator = _DropLastCarry()
    broken = Function(fn.name, fn.params, mutator.mutate(fn.body), fn.ret_type, span=fn.span)
    tfexec.infer_types(broken)
    new_key = {id(node): key for key, node in node_sources(broken).items()}
    original = {new_key[id(mutator.memo[id(node)])]: key for key, node in node_sources(fn).items()
                if id(node) in mutator.memo and id(mutator.memo[id(node)]) in new_key}
    out = {}
    for key, value in tfexec_table(broken, inputs).items():
        node = node_key_of(key)
        if node in original:
            out[original[node] + key[len(node):]] = value
    return out


def eager_tfexec(function: Function, inputs: tuple[torch.Tensor, ...]) -> Mapping[str, torch.Tensor]:
    """tfexec itself on a fresh parse: a backend that must never diverge."""
    return tfexec_table(_reparsed(function), inputs)
