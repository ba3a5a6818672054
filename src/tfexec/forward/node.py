"""``ForwardNode``: one forward-only SSA node over the slots that precede it.

The Lean original is ``ForwardNode α Γ τ``: a closure over the context ``Γ`` of earlier
values with its output shape ``τ`` in its type. Here the context is the list of values
computed so far, the closure reads it only through ``Slot``s (checked indices, the Lean
``Idx``), and the output type is a field the runtime checker can verify.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tfexec.ir.expr import Expr
from tfexec.ir.types import Type

if TYPE_CHECKING:
    from tfexec.evaluator.context import EvaluateContext


@dataclass(frozen=True, slots=True)
class Slot:
    """A checked index into a forward context; only ``ForwardData.slot`` makes them."""

    index: int


NodeFn = Callable[[list[object], "EvaluateContext"], object]
"""A node's closure: ``fn(values_so_far, ctx) -> value``."""


@dataclass(frozen=True, slots=True, eq=False)
class ForwardNode:
    """One lowered node: its closure, the slots it reads, its declared output type (None for
    plumbing such as a function-boundary check), its node key, and the HIR node it came from.

    ``dispatch`` marks an op dispatch: a failure inside it becomes the same ``EvalError`` the
    visitor raises for that call (prefixed by ``describe_expr``).
    """

    fn: NodeFn
    reads: tuple[Slot, ...]
    type: Type | None
    key: str | None
    source: Expr | None
    dispatch: bool = False
    label: str = ""
    body: object | None = None
    """For a loop node, the lowered body (a ``tfexec.forward.graph.Body``) it runs per iteration."""
    plain: "tuple[Callable[..., object], tuple[int, ...]] | None" = None
    """When the node is a tensor function applied to slots (``f(v[a], v[b])``), that function
    and those slots: the run loop then calls it directly, without ``fn``'s frame. ``fn``
    computes the same thing."""

    def __repr__(self) -> str:
        return f"ForwardNode({self.label or self.key}, reads={[s.index for s in self.reads]}, type={self.type})"
