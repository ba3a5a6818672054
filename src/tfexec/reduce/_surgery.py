"""Program surgery: the program that keeps a chosen set of candidate nodes.

Given the kept candidates, a node is computed when it is kept; an operand that is a
candidate not kept is *cut*: it becomes a parameter fed with tfexec's golden value for it.
Nodes nothing kept reads are dead and go, parameters nothing reads go, and the program
returns every kept node no other kept node reads (a tuple when there are several). A loop
is one candidate: kept whole, body and all, or cut whole. An original parameter that is
not read stays only when it alone binds a dim a kept node needs.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Expr, Function, Tuple, TupleGetItem, Var
from tfexec.ir.graph import post_order
from tfexec.ir.types import TupleType, Type
from tfexec.ir.walk import dim_names, text_nodes
from tfexec.reduce._dims import bound_by, node_needs
from tfexec.reduce._flatten import FlatProgram, ReductionError
from tfexec.visitor import ExprMutator


@dataclass(frozen=True)
class Candidate:
    """One reduced program exactly as it is tested and written: its text, the function
    parsed from that text, and its inputs in parameter order."""

    kept: tuple[int, ...]
    text: str
    function: Function
    names: tuple[str, ...]
    inputs: tuple[torch.Tensor, ...]
    origins: tuple[str, ...]


class _Surgery(ExprMutator):
    """Rebuild kept nodes over cut operands; a projection of a built tuple is its field."""

    def rewrite_TupleGetItem(self, node: TupleGetItem) -> Expr:
        inner = self.mutated(node.tuple)
        if isinstance(inner, Tuple) and inner is not node.tuple and node.index < len(inner.fields):
            return inner.fields[node.index]
        return self.rebuild(node)


def build(flat: FlatProgram, kept: Sequence[int], filename: str = "<reduced>") -> Candidate | None:
    """The program keeping candidates ``kept`` (indices), or None when no such program
    exists (nothing kept, or a dim a kept node needs that no parameter can bind)."""
    if not kept:
        return None
    keep = set(kept)
    read = set().union(*(flat.reads[k] for k in keep))
    sinks = [k for k in sorted(keep) if k not in read]
    surgery = _Surgery()
    cuts: list[tuple[int, list[Var]]] = []
    for i in sorted(read - keep):
        node = flat.candidates[i]
        assert node.checked_type is not None, "flatten types every candidate"
        leaves: list[Var] = []
        surgery.memo[id(node)] = _cut_expr(flat.names[i], node.checked_type, leaves)
        cuts.append((i, leaves))
    roots = [surgery.mutate(flat.candidates[k]) for k in sinks]
    body = roots[0] if len(roots) == 1 else Tuple(tuple(roots))
    params = _parameters(flat, body, cuts)
    if params is None:
        return None
    chosen, values, origins = params
    fn = Function(flat.function.name, tuple(chosen), body)
    return _as_text(fn, tuple(sorted(keep)), tuple(values), tuple(origins), flat, filename)


def _cut_expr(name: str, t: Type, leaves: list[Var]) -> Expr:
    """A parameter (or a tuple of them, one per field) standing for a cut node's value."""
    if isinstance(t, TupleType):
        return Tuple(tuple(_cut_expr(f"{name}_{i}", f, leaves) for i, f in enumerate(t.fields)))
    var = Var(name, t)
    leaves.append(var)
    return var


def _golden_leaves(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    assert isinstance(value, tuple)
    return [t for v in value for t in _golden_leaves(v)]


def _parameters(
    flat: FlatProgram, body: Expr, cuts: list[tuple[int, list[Var]]]
) -> tuple[list[Var], list[torch.Tensor], list[str]] | None:
    """The reduced program's parameters, values and origins: the original parameters it
    reads (or needs for a dim), then its cut nodes in topological order."""
    used = {id(n) for n in post_order([body]) if isinstance(n, Var)}
    chosen: list[Var] = []
    values: list[torch.Tensor] = []
    origins: list[str] = []
    for i, leaves in cuts:
        golden = _golden_leaves(flat.golden[i])
        for f, (var, value) in enumerate(zip(leaves, golden)):
            if id(var) in used:
                chosen.append(var)
                values.append(value)
                field = f" (tuple leaf {f})" if len(leaves) > 1 else ""
                origins.append(f"value of {describe_expr(flat.candidates[i])}{field}")
    originals = [k for k, p in enumerate(flat.function.params) if id(p) in used]
    needed: set[str] = set()
    for node in text_nodes([body]):
        needed |= node_needs(node)
    for var in chosen + [flat.function.params[k] for k in originals]:
        needed.update(dim_names(var.type))
    bound = set(bound_by([v.type for v in chosen] + [flat.function.params[k].type for k in originals]))
    notes = {k: flat.origins[k] for k in originals}
    for k, p in enumerate(flat.function.params):
        missing = needed - bound
        if not missing:
            break
        binds = set(bound_by([p.type])) & missing
        if k not in notes and binds:
            notes[k] = f"{flat.origins[k]} (not read: it binds {', '.join(sorted(binds))})"
            bound |= binds
    if needed - bound:
        return None
    firsts = sorted(notes)
    return (
        [flat.function.params[k] for k in firsts] + chosen,
        [flat.inputs[k] for k in firsts] + values,
        [notes[k] for k in firsts] + origins,
    )


def _as_text(
    fn: Function, kept: tuple[int, ...], inputs: tuple[torch.Tensor, ...], origins: tuple[str, ...], flat: FlatProgram,
    filename: str,
) -> Candidate:
    """Print ``fn`` and parse it back: the candidate is the parsed program, so what is
    tested is exactly what is written. (What each parameter stands for is kept apart from
    the text, in ``origins``: a comment could change what a text-matching check sees.)"""
    from tfexec.text import parse, print_ir

    text = print_ir(fn)
    module = parse(text, filename=filename)
    parsed = module.functions[module.entry or next(iter(module.functions))]
    names = tuple(p.name for p in parsed.params)
    if len(names) != len(inputs):
        raise ReductionError(f"internal error: the reduced program has {len(names)} parameters for {len(inputs)} inputs")
    return Candidate(kept, text, parsed, names, inputs, origins)
