"""``ForwardNode``: one forward-only SSA node over the slots that precede it.

The Lean original is ``ForwardNode α Γ τ``: a closure over the context ``Γ`` of earlier
values with its output shape ``τ`` in its type. Here a node is *what* it computes (an op
applied to its reads, a constant, a loop over a nested body, … — ``tfexec.forward.kinds``),
the ``Read``s it declares (checked indices into earlier slots, the Lean ``Idx``) and its
declared output type. The run loop hands the node exactly the values of its reads; a node
never sees the context, so it cannot read anything it did not declare.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tfexec.ir.expr import Expr
from tfexec.ir.types import Type

if TYPE_CHECKING:
    from tfexec.forward.kinds import NodeKind


@dataclass(frozen=True, slots=True)
class Read:
    """A read of slot ``slot``'s value, or of field ``path`` of it (a tuple-valued slot)."""

    slot: int
    path: tuple[int, ...] = ()

    def __str__(self) -> str:
        return f"%{self.slot}" + "".join(f"[{i}]" for i in self.path)


@dataclass(frozen=True, slots=True, eq=False)
class ForwardNode:
    """One lowered node.

    ``what`` is what it computes from the values of ``reads`` (in order); ``type`` its
    declared output type (``None`` only for a node that always fails); ``key`` its node key
    when its value goes in the per-node table; ``source`` the HIR node it came from;
    ``scope`` the dim scope whose ``DimVar`` sizes it sees (0: the entry function's; an
    inlined call opens a new one).
    """

    what: "NodeKind"
    reads: tuple[Read, ...]
    type: Type | None
    key: str | None
    source: Expr
    scope: int = 0

    @property
    def label(self) -> str:
        """A short name for listings and errors: the key, else what the node computes."""
        return self.key or self.what.describe()

    def __repr__(self) -> str:
        return f"ForwardNode({self.label}, reads=[{', '.join(map(str, self.reads))}], type={self.type})"
