"""``ForwardData``: a shape-indexed forward SSA list, built only by ``nil`` and ``snoc``.

``snoc`` refuses a node that reads a slot that does not exist yet, so a node can read only
the list's inputs and earlier nodes; and a node's closure receives only the values of the
reads it declares (``tfexec.forward.node``), so that is all it *can* read. The induction
over this list is what makes the equivalence argument (proofs_notes/) well-founded.
"""

from collections.abc import Sequence

from tfexec.errors import LoweringError
from tfexec.forward.node import ForwardNode


class ForwardData:
    """An immutable view of ``n_inputs`` input slots followed by ``len(nodes)`` node slots.

    Views share one backing list: ``snoc`` extends the newest view in O(1) and returns a new
    view; extending an older view (which would fork the list) is refused.
    """

    __slots__ = ("n_inputs", "_nodes", "_size")

    def __init__(self, n_inputs: int, nodes: list[ForwardNode], size: int) -> None:
        self.n_inputs = n_inputs
        self._nodes = nodes
        self._size = size

    @staticmethod
    def nil(n_inputs: int) -> "ForwardData":
        """A graph with ``n_inputs`` input slots and no computed nodes."""
        return ForwardData(n_inputs, [], 0)

    def snoc(self, node: ForwardNode) -> "ForwardData":
        """Append ``node``, which may read the inputs and every preceding node."""
        if self._size != len(self._nodes):
            raise LoweringError("ForwardData.snoc on a stale view: only the newest view can be extended")
        limit = self.n_inputs + self._size
        for read in node.reads:
            if not 0 <= read.slot < limit:
                raise LoweringError(
                    f"ForwardData.snoc: node {node.label} reads slot {read.slot}, "
                    f"but only slots 0..{limit - 1} exist before it"
                )
        self._nodes.append(node)
        return ForwardData(self.n_inputs, self._nodes, self._size + 1)

    @property
    def next_index(self) -> int:
        """The slot the next ``snoc``'d node will fill."""
        return self.n_inputs + self._size

    @property
    def nodes(self) -> Sequence[ForwardNode]:
        return tuple(self._nodes[: self._size])

    def __len__(self) -> int:
        return self._size
