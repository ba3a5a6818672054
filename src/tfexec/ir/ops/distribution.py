"""Distribution ops (hir §1.3): ``reshard`` and ``local``.

The evaluator models one mesh participant (evaluator spec §6): ``reshard`` keeps the
logical value and changes only its layout type; ``local`` is the identity unless its
operand's ``ShardLayout`` splits an axis, which the single-participant evaluator refuses.
"""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dims import dim_expr
from tfexec.ir.ops.base import Op, Operand, TypeRuleError
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.types import Layout, ShardLayout, TensorType, Type


@dataclass(frozen=True, slots=True)
class Reshard(Op):
    """Change the value's distribution/layout type to ``layout``; the logical value is unchanged."""

    name: ClassVar[str] = "reshard"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    layout: Layout | ShardLayout | None = None

    def __post_init__(self) -> None:
        if self.layout is not None and not isinstance(self.layout, (Layout, ShardLayout)):
            raise TypeError(f"reshard layout must be a Layout, ShardLayout or None, got {self.layout!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        return x.with_layout(self.layout)

    def value_layout(self, operands: "tuple[Layout | ShardLayout | None, ...]") -> "Layout | ShardLayout | None":
        return self.layout


@dataclass(frozen=True, slots=True)
class Local(Op):
    """The calling participant's local view: its type is the local shard's type."""

    name: ClassVar[str] = "local"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        layout = x.layout
        if not isinstance(layout, ShardLayout):
            return x
        shape = list(x.shape)
        for mesh_axis, split in layout.splits:
            if not -x.rank <= split.tensor_axis < x.rank:
                raise TypeRuleError(f"local: Split({split.tensor_axis}) names no axis of {x}")
            axis = split.tensor_axis % x.rank
            parts = layout.mesh.shape[mesh_axis]
            if isinstance(shape[axis], int) and shape[axis] % parts:
                raise TypeRuleError(f"local: axis {axis} of {x} (size {shape[axis]}) does not split into {parts} parts")
            shape[axis] = dim_expr("floordiv", shape[axis], parts)
        return TensorType(tuple(shape), x.dtype, layout.layout)

    def value_layout(self, operands: "tuple[Layout | ShardLayout | None, ...]") -> "Layout | ShardLayout | None":
        layout = operands[0] if operands else None
        return layout.layout if isinstance(layout, ShardLayout) else layout
