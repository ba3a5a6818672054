"""Mutation: the one place that decides whether an exported graph writes in place.

``torch.export`` (non-strict) keeps in-place ops as written: ``k[..., :n].copy_(x)`` is
``copy_(slice(k, …), x)`` with later reads of ``k``, whose value the write changed through
the view. HIR values are immutable, so such a graph cannot be translated op by op. The
import runs torch's own functionalization first (``run_decompositions``, which rewrites
every write into a view as ``slice_scatter``/``select_scatter``/``index_put``… on its base
and rebinds the base), and then checks, here, that no node is left whose schema writes to
an operand: the translator refuses any such node by name at its source line. The test is
the op's schema (``is_mutable``: an argument annotated ``Tensor(a!)``, which covers every
in-place, ``out=`` and in-place-view overload), not a list of ops, so an op torch adds later
is covered too. A write that functionalization turns into an extra output of the program
(a buffer or a user input mutated by the model) is refused where the outputs are read.
"""

from collections.abc import Iterator
from typing import Any

import torch

MUTATED_OUTPUTS = {
    "BUFFER_MUTATION": "buffer",
    "USER_INPUT_MUTATION": "input",
    "PARAMETER_MUTATION": "parameter",
    "GRADIENT_TO_PARAMETER": "parameter's gradient",
    "GRADIENT_TO_USER_INPUT": "input's gradient",
    "TOKEN": "effect token",
}
"""``torch.export`` output kinds that are a write to program state (or an effect), not a
value the program returns: by kind, what the refusal calls the written thing."""


def mutates(target: object) -> bool:
    """Whether calling ``target`` may write into one of its arguments: an ``OpOverload``
    whose schema is mutable (``add_``, ``copy_``, ``index_put_``, ``out=`` overloads,
    ``t_``…). Higher-order ops and Python callables are no ATen writes (they are refused,
    or not, by their own rules)."""
    if isinstance(target, torch._ops.OpOverload):
        return bool(target._schema.is_mutable)
    return False


def mutating_nodes(graph: Any) -> Iterator[Any]:
    """The call nodes of ``graph`` whose op writes into an operand, in graph order."""
    for node in graph.nodes:
        if node.op == "call_function" and mutates(node.target):
            yield node


def written_arguments(target: object) -> list[str]:
    """The names of the arguments ``target``'s schema says it writes (``self``, ``out``)."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return []
    return [a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write]


def mutation_reason(target: object) -> str:
    """Why a node calling ``target`` is refused when functionalization left it in the graph."""
    written = ", ".join(written_arguments(target)) or "an operand"
    return (
        f"it writes into {written} in place, and torch's functionalization did not rewrite it as a "
        "functional op; HIR values are immutable, so the write cannot be modelled (the import is refused "
        "rather than drop it)"
    )
