"""``ForwardData``: a shape-indexed forward SSA list, built only by ``nil`` and ``snoc``.

``snoc`` refuses a node that reads a slot that does not exist yet, so a node can read only
the graph inputs and earlier nodes; evaluation appends each value as it is computed, so
a later slot is not even present when a node runs. The induction over this list is what
makes the equivalence argument (proofs_notes/) well-founded.
"""

from collections.abc import Sequence

from tfexec.errors import LoweringError
from tfexec.forward.node import ForwardNode, Slot


class ForwardData:
    """An immutable view of ``n_inputs`` input slots followed by ``len(nodes)`` node slots.

    Views share one backing list: ``snoc`` extends the newest view in O(1) and returns a new
    view; extending an older view (which would fork the list) is refused.
    """

    __slots__ = ("n_inputs", "_nodes", "_size", "_slots")

    def __init__(self, n_inputs: int, nodes: list[ForwardNode], size: int, slots: list[Slot] | None = None) -> None:
        self.n_inputs = n_inputs
        self._nodes = nodes
        self._size = size
        self._slots = slots if slots is not None else []
        """``Slot`` objects made so far, shared by the views (one per index)."""

    @staticmethod
    def nil(n_inputs: int) -> "ForwardData":
        """A graph with ``n_inputs`` input slots and no computed nodes."""
        return ForwardData(n_inputs, [], 0)

    def snoc(self, node: ForwardNode) -> "ForwardData":
        """Append ``node``, which may read the inputs and every preceding node."""
        if self._size != len(self._nodes):
            raise LoweringError("ForwardData.snoc on a stale view: only the newest view can be extended")
        limit = self.n_inputs + self._size
        for slot in node.reads:
            if not 0 <= slot.index < limit:
                raise LoweringError(
                    f"ForwardData.snoc: node {node.label or node.key} reads slot {slot.index}, "
                    f"but only slots 0..{limit - 1} exist before it"
                )
        self._nodes.append(node)
        return ForwardData(self.n_inputs, self._nodes, self._size + 1, self._slots)

    def slot(self, index: int) -> Slot:
        """A checked index to an existing slot (an input or an already appended node)."""
        if not 0 <= index < self.n_inputs + self._size:
            raise LoweringError(f"slot {index} does not exist (size {self.n_inputs + self._size})")
        slots = self._slots
        while len(slots) <= index:
            slots.append(Slot(len(slots)))
        return slots[index]

    @property
    def next_index(self) -> int:
        """The slot the next ``snoc``'d node will fill."""
        return self.n_inputs + self._size

    @property
    def nodes(self) -> Sequence[ForwardNode]:
        return tuple(self._nodes[: self._size])

    def __len__(self) -> int:
        return self._size
