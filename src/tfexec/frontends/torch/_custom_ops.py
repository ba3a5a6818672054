"""Custom ops (``torch.library``, outside ``aten``): decomposed, translated by a rule, or refused.

A custom op is a name over a kernel tfexec cannot see into. Three cases:

* it has a decomposition torch can run (a ``CompositeImplicitAutograd`` kernel, or an entry
  in torch's decomposition table): ``decomposable`` says so, and the import decomposes it
  into the ops it is made of (``_api``);
* it has a rule here (``CUSTOM_RULES``, by qualified name), written from the op's documented
  semantics in HIR ops: transformers' ``grouped_mm_fallback``, the CPU path of every
  mixture-of-experts model;
* otherwise it is opaque, and refused by name (``opaque_reason``).
"""

from collections.abc import Callable
from typing import Any

import torch
from torch._export.utils import _get_decomp_for_cia

import tfexec.ops as hir
from tfexec.ir.operands import Operand
from tfexec.frontends.torch._context import NodeContext, Result, RuleError
from tfexec.ir.dtypes import DType


def qualified_name(target: object) -> str | None:
    """``namespace::op`` of a custom ``OpOverload`` (not ``aten``/``prims``), else None."""
    if not isinstance(target, torch._ops.OpOverload):
        return None
    namespace = getattr(target, "namespace", "")
    if namespace in ("aten", "prims", "_c10d_functional", "c10d_functional"):
        return None
    return str(target._schema.name)


def decomposable(target: object) -> bool:
    """Whether torch itself can decompose the custom op ``target`` into other ops."""
    if qualified_name(target) is None or qualified_name(target) in CUSTOM_RULES:
        return False
    assert isinstance(target, torch._ops.OpOverload)
    if target in torch._decomp.decomposition_table:
        return True
    return bool(torch._C._dispatch_has_kernel_for_dispatch_key(str(target._schema.name), "CompositeImplicitAutograd"))


def decompositions(graph: Any) -> dict[Any, Callable[..., Any]]:
    """The decomposition table entries for the decomposable custom ops of ``graph``."""
    table: dict[Any, Callable[..., Any]] = {}
    for node in graph.nodes:
        if node.op == "call_function" and decomposable(node.target):
            found = torch._decomp.decomposition_table.get(node.target)
            # a CompositeImplicitAutograd kernel is run through torch.export's own wrapper for it
            table[node.target] = found if found is not None else _get_decomp_for_cia(node.target)
    return table


def opaque_reason(target: object) -> str:
    """Why a custom op without a decomposition or a rule is refused."""
    return (
        f"the custom op {qualified_name(target)} is opaque: its implementation is a kernel registered with "
        "torch.library, not a decomposition into ATen ops, and tfexec has no rule for it (its result cannot be "
        "modelled; register a CompositeImplicitAutograd implementation or a decomposition to import it)"
    )


def _grouped_mm_fallback(t: NodeContext) -> Result:
    """``out[s] = input[s] @ weight[e]`` for the rows ``s`` of group ``e``: ``offs`` holds the
    groups' cumulative ends, so row ``s`` is in group ``#{e : offs[e] <= s}``; rows past
    ``offs[-1]`` are zeros (the fallback's ``zeros`` output, never written)."""
    x, weight, offs = t.tensor("input"), t.tensor("weight"), t.tensor("offs")
    xt, wt = t.type_of(x), t.type_of(weight)
    if len(xt.shape) != 2 or len(wt.shape) != 3:
        raise RuleError(f"grouped_mm_fallback needs input [S, K] and weight [E, K, N], found {xt} and {wt}")
    rows, groups = xt.shape[0], wt.shape[0]
    position = hir.reshape(hir.arange(extent=rows, span=t.span), shape=(rows, 1), span=t.span)
    ends = hir.reshape(hir.cast(offs, dtype=DType.int64, span=t.span), shape=(1, groups), span=t.span)
    group = hir.reduce(hir.cast(hir.ge(position, ends, span=t.span), dtype=DType.int64, span=t.span),
                       kind="sum", axes=(1,), span=t.span)
    count: Operand = groups if isinstance(groups, int) else t.tensor_of_dim(groups)
    last: Operand = groups - 1 if isinstance(groups, int) else hir.sub(t.tensor_of_dim(groups), 1, span=t.span)
    picked = hir.take(weight, hir.minimum(group, last, span=t.span), axis=0, span=t.span)
    product = hir.matmul(hir.reshape(x, shape=(rows, 1, xt.shape[1]), span=t.span), picked, span=t.span)
    out = hir.reshape(product, shape=(rows, wt.shape[2]), span=t.span)
    inside = hir.reshape(hir.lt(group, count, span=t.span), shape=(rows, 1), span=t.span)
    return hir.where(inside, out, 0, span=t.span)


CUSTOM_RULES: dict[str, Callable[[NodeContext], Result]] = {
    "transformers::grouped_mm_fallback": _grouped_mm_fallback,
}
"""Rules for custom ops, by qualified name (the op exists only once its library is loaded)."""
