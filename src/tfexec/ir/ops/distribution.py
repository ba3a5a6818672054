"""Distribution ops (hir §1.3): ``reshard`` and ``local``.

The evaluator models one mesh participant (evaluator spec §6): ``reshard`` keeps the
logical value and changes only its layout type; ``local`` is the identity unless its
operand's ``ShardLayout`` splits an axis, which the single-participant evaluator refuses.
"""

from dataclasses import dataclass
from typing import ClassVar

from tfexec.ir.dims import ShapeDim, dim_expr, shape_product
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.base import Op, Operand, TypeRuleError
from tfexec.ir.ops.promotion import TensorTypeShape, tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import Layout, ShardLayout, TensorType, Type


def local_shape(op: Op, x: TensorType, layout: ShardLayout) -> tuple[ShapeDim, ...]:
    """The shape of one participant's shard of ``x`` under ``layout``.

    (C1) every ``Split(axis)`` names an axis of ``x``; (C2) a static split axis divides
    evenly by the mesh axis size.
    """
    shape = list(x.shape)
    for mesh_axis, split in layout.splits:
        if not -x.rank <= split.tensor_axis < x.rank:
            raise TypeRuleError(
                f"{op.name} (C1): Split({split.tensor_axis}) names no axis of {x} (valid: {-x.rank}..{x.rank - 1})"
            )
        axis = split.tensor_axis % x.rank
        parts = layout.mesh.shape[mesh_axis]
        if isinstance(shape[axis], int) and shape[axis] % parts:
            raise TypeRuleError(
                f"{op.name} (C2): axis {axis} of {x} (size {shape[axis]}) does not split into {parts} equal parts"
            )
        shape[axis] = dim_expr("floordiv", shape[axis], parts)
    return tuple(shape)


def check_layout_count(op: Op, logical: tuple[ShapeDim, ...], layout: Layout, x: TensorType) -> None:
    """(C3) a ``Layout`` holds as many elements as the logical shape it organises. As for
    ``reshape``, only counts that provably differ are refused: both static, or the same
    product of DimVars with different constant factors."""
    want, have = shape_product(logical), shape_product(layout.shape)
    if want is not None and have is not None and want[1] == have[1] and want[0] != have[0]:
        raise TypeRuleError(
            f"{op.name} (C3): {layout} must hold the {_count(want)} elements of shape {TensorTypeShape(logical)} "
            f"of {x}, found {_count(have)}"
        )


def _count(factors: tuple[int, tuple[str, ...]]) -> str:
    const, names = factors
    return "*".join(([str(const)] if const != 1 or not names else []) + list(names))


@dataclass(frozen=True, slots=True)
class Reshard(Op):
    """Change the value's distribution/layout type to ``layout``; the logical value is unchanged.

    Type rule: ``x``'s type with layout ``layout`` (``None`` removes it).
    Value rule: the identity on the logical value (evaluator spec §6: the evaluator models
    one mesh participant, so there is no data movement).
    Constraints:
        (C1) every ``Split(axis)`` of a ``ShardLayout`` names an axis of ``x``.
        (C2) a static split axis divides evenly by the size of its mesh axis.
        (C3) a ``Layout`` (alone, or a ``ShardLayout``'s, for the local shard) holds as many
        elements as the logical shape it organises. As for ``reshape``, only counts that
        provably differ are refused.
    Example: def example(x: f32[2, 4]): return reshard(x, layout=Layout((8,)))
    Example: def example(x: f32[4, 2]): return reshard(x, layout=ShardLayout(Mesh((2,), ('d',)), (Split(0),)))
    Refused (C1): def example(x: f32[4]): return reshard(x, layout=ShardLayout(Mesh((2,), ('d',)), (Split(1),)))
    Refused (C2): def example(x: f32[3]): return reshard(x, layout=ShardLayout(Mesh((2,), ('d',)), (Split(0),)))
    Refused (C3): def example(x: f32[2, 4]): return reshard(x, layout=Layout((6,)))
    """

    name: ClassVar[str] = "reshard"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    layout: Layout | ShardLayout | None = None

    def __post_init__(self) -> None:
        if self.layout is not None and not isinstance(self.layout, (Layout, ShardLayout)):
            raise TypeError(f"reshard layout must be a Layout, ShardLayout or None, got {self.layout!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        layout = self.layout
        if isinstance(layout, Layout):
            check_layout_count(self, x.shape, layout, x)
        elif isinstance(layout, ShardLayout):
            local = local_shape(self, x, layout)
            if layout.layout is not None:
                check_layout_count(self, local, layout.layout, x)
        return x.with_layout(layout)

    def value_layout(self, operands: "tuple[Layout | ShardLayout | None, ...]") -> "Layout | ShardLayout | None":
        return self.layout


@dataclass(frozen=True, slots=True)
class Local(Op):
    """The calling participant's local view of ``x``: its type is the local shard's type.

    Type rule: for a ``ShardLayout`` operand, the local shard's shape (each split axis
    divided by its mesh axis size) with the ``ShardLayout``'s inner layout; otherwise ``x``'s
    type.
    Value rule: the identity when ``x``'s ``ShardLayout`` has no ``Split`` (the local view is
    the whole value). For a split axis the evaluator, which models one mesh participant,
    raises an ``EvalError`` that says so and names evaluator spec §6.
    Constraints:
        (C1) every ``Split(axis)`` of ``x``'s ``ShardLayout`` names an axis of ``x``.
        (C2) a static split axis divides evenly by the size of its mesh axis.
    Example: def example(x: f32[2, 3] @ ShardLayout(Mesh((2,), ('d',)), (Replicate(),))): return local(x)
    Refused (C1): def example(x: f32[4] @ ShardLayout(Mesh((2,), ('d',)), (Split(-3),))): return local(x)
    Refused (C2): def example(x: f32[2, 6] @ ShardLayout(Mesh((4,), ('d',)), (Split(1),))): return local(x)
    """

    name: ClassVar[str] = "local"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        layout = x.layout
        if not isinstance(layout, ShardLayout):
            return x
        return TensorType(local_shape(self, x, layout), x.dtype, layout.layout)

    def value_layout(self, operands: "tuple[Layout | ShardLayout | None, ...]") -> "Layout | ShardLayout | None":
        layout = operands[0] if operands else None
        return layout.layout if isinstance(layout, ShardLayout) else layout


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def reshard(x: ExprLike, *, layout: Layout | ShardLayout | None, span: Span | None = None) -> Call:
    """Change ``x``'s layout type; the logical value is unchanged."""
    return apply(Reshard(layout), x, span=span)


def local(x: ExprLike, *, span: Span | None = None) -> Call:
    """The calling participant's local view of a ``ShardLayout`` value."""
    return apply(Local(), x, span=span)
