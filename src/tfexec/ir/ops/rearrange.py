"""Rearranging ops: ``flip``, ``roll``, ``diagonal``, ``triu``, ``tril``, ``pad``.

Each moves or masks elements without arithmetic on them, so the dtype is always the
operand's; sizes follow torch's functions of the same names.
"""

from dataclasses import dataclass
from typing import ClassVar, Literal

from tfexec.ir.dims import ShapeDim, dim_expr
from tfexec.ir.expr import Call
from tfexec.ir.operands import Operand as ExprLike, apply
from tfexec.ir.ops.attrs import check_choice, check_int, check_ints, check_number, check_optional_ints
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite, normalize_axis
from tfexec.ir.ops.promotion import tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type

PadMode = Literal["constant", "reflect", "replicate", "circular"]
PAD_MODES: tuple[str, ...] = ("constant", "reflect", "replicate", "circular")


def distinct_axes(op: Op, axes: tuple[int, ...], rank: int, label: str) -> tuple[int, ...]:
    """``axes`` made non-negative; out of range or named twice is a ``TypeRuleError`` citing ``label``."""
    norm = tuple(normalize_axis(op, a, rank, label) for a in axes)
    if len(set(norm)) != len(norm):
        raise TypeRuleError(f"{op.name}: axes {axes} name an axis twice{cite(op.name, label)}")
    return norm


@dataclass(frozen=True, slots=True)
class Flip(Op):
    """Reverse the order of ``x``'s elements along each of ``axes``.

    Type rule: ``x``'s type.
    Value rule: ``torch.flip(x, dims=axes)`` on the run's device.
    Constraints:
        (C1) every axis is in range for ``x``'s rank and none is named twice.
    Example: def example(x: f32[2, 3]): return flip(x, axes=(1,))
    Refused (C1): def example(x: f32[2, 3]): return flip(x, axes=(0, -2))
    """

    name: ClassVar[str] = "flip"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    axes: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        check_ints("flip", "axes", self.axes)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        distinct_axes(self, self.axes, x.rank, "C1")
        return TensorType(x.shape, x.dtype)


@dataclass(frozen=True, slots=True)
class Roll(Op):
    """Rotate ``x``'s elements by ``shifts[i]`` positions along ``axes[i]`` (elements pushed off one end come back at the other).

    With ``axes=None``, ``x`` is rolled as one flat sequence (by ``shifts[0]``) and keeps
    its shape.

    Type rule: ``x``'s type.
    Value rule: ``torch.roll(x, shifts, dims=axes)`` on the run's device (a negative shift
    rolls toward the front).
    Constraints:
        (C1) every axis is in range for ``x``'s rank.
        (C2) one shift per axis (exactly one shift when ``axes`` is None).
    Example: def example(x: f32[2, 3]): return roll(x, shifts=(1,), axes=(1,))
    Example: def example(x: i32[2, 3]): return roll(x, shifts=(-2,))
    Refused (C1): def example(x: f32[2, 3]): return roll(x, shifts=(1,), axes=(2,))
    Refused (C2): def example(x: f32[2, 3]): return roll(x, shifts=(1, 1), axes=(1,))
    """

    name: ClassVar[str] = "roll"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    shifts: tuple[int, ...] = (0,)
    axes: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        check_ints("roll", "shifts", self.shifts)
        check_optional_ints("roll", "axes", self.axes)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        want = 1 if self.axes is None else len(self.axes)
        if len(self.shifts) != want or not self.shifts:
            raise TypeRuleError(
                f"roll needs one shift per axis: shifts {self.shifts} for axes {self.axes}{cite(self.name, 'C2')}"
            )
        for a in self.axes or ():
            normalize_axis(self, a, x.rank, "C1")
        return TensorType(x.shape, x.dtype)


@dataclass(frozen=True, slots=True)
class Diagonal(Op):
    """The diagonal of ``x`` in the plane of ``axis1`` and ``axis2``, ``offset`` above the main one (below when negative).

    Type rule: ``x``'s shape without ``axis1`` and ``axis2``, then a last axis holding the
    diagonal: ``max(0, min(d1, d2 - offset))`` elements for ``offset >= 0``,
    ``max(0, min(d1 + offset, d2))`` below; the dtype is ``x``'s.
    Value rule: ``torch.diagonal(x, offset, axis1, axis2)`` on the run's device (a view).
    Constraints:
        (C1) ``axis1`` and ``axis2`` are in range for ``x``'s rank and differ.
    Example: def example(x: f32[3, 3]): return diagonal(x)
    Example: def example(x: f32[2, 3, 4]): return diagonal(x, offset=1, axis1=1, axis2=2)
    Refused (C1): def example(x: f32[3, 3]): return diagonal(x, axis1=1, axis2=-1)
    """

    name: ClassVar[str] = "diagonal"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    offset: int = 0
    axis1: int = 0
    axis2: int = 1

    def __post_init__(self) -> None:
        for field in ("offset", "axis1", "axis2"):
            check_int("diagonal", field, getattr(self, field))

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        a1, a2 = distinct_axes(self, (self.axis1, self.axis2), x.rank, "C1")
        d1, d2 = x.shape[a1], x.shape[a2]
        if self.offset >= 0:
            length = dim_expr("min", d1, dim_expr("sub", d2, self.offset))
        else:
            length = dim_expr("min", dim_expr("add", d1, self.offset), d2)
        length = dim_expr("max", length, 0)
        rest = tuple(d for i, d in enumerate(x.shape) if i not in (a1, a2))
        return TensorType(rest + (length,), x.dtype)


@dataclass(frozen=True, slots=True)
class TriangleOp(Op):
    """Base of ``triu`` and ``tril``: the last two axes of ``x`` as matrices, masked to a triangle.

    Type rule: ``x``'s type.
    Value rule: ``torch.{op}(x, diagonal=diagonal)`` on the run's device: elements outside
    the triangle are 0 (``False`` for ``b1``).
    Constraints:
        (C1) ``x`` has rank at least 2.
    Example: def example(x: f32[3, 3]): return {op}(x)
    Example: def example(x: i32[2, 3]): return {op}(x, diagonal=1)
    Refused (C1): def example(x: f32[3]): return {op}(x)
    """

    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    diagonal: int = 0

    def __post_init__(self) -> None:
        check_int(self.name, "diagonal", self.diagonal)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        if x.rank < 2:
            raise TypeRuleError(f"{self.name} needs a matrix or a batch of them (rank >= 2), found {x}{cite(self.name, 'C1')}")
        return TensorType(x.shape, x.dtype)


@dataclass(frozen=True, slots=True)
class Triu(TriangleOp):
    """The upper triangle of ``x``: elements on and above the ``diagonal``-th diagonal (column - row >= diagonal)."""

    name: ClassVar[str] = "triu"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class Tril(TriangleOp):
    """The lower triangle of ``x``: elements on and below the ``diagonal``-th diagonal (column - row <= diagonal)."""

    name: ClassVar[str] = "tril"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class Pad(Op):
    """Pad ``x``: ``pads`` gives (before, after) counts per axis, starting from the last axis, as ``F.pad`` does.

    ``pads = (1, 2)`` adds one element before and two after on the last axis; ``(1, 1, 0,
    2)`` also adds two after on the second-to-last. ``mode`` says what the new elements hold:
    ``value`` (``constant``), the mirror image without the edge (``reflect``), the edge
    element (``replicate``) or the elements of the other end (``circular``).

    Type rule: ``x``'s shape with each padded axis grown by its two counts; ``x``'s dtype.
    Value rule: ``torch.nn.functional.pad(x, pads, mode, value)`` on the run's device;
    ``value`` converts to ``x``'s dtype as torch converts it (toward zero for integers).
    Constraints:
        (C1) ``pads`` has an even length, at most twice ``x``'s rank; in ``constant`` mode a
        negative count crops, and no axis may end below size 0.
        (C2) the other modes pad 1 to 3 trailing axes of an ``x`` with one or two more axes
        than that (``(C, W)`` or ``(N, C, W)`` for one padded axis), with counts that are not
        negative.
        (C3) ``reflect`` pads less than the axis's size, ``circular`` at most its size (torch's
        limits; checked at run time where sizes are symbolic).
    Example: def example(x: f32[2, 3]): return pad(x, pads=(1, 2))
    Example: def example(x: f32[1, 2, 3]): return pad(x, pads=(2, 1), mode="reflect")
    Refused (C1): def example(x: f32[2, 3]): return pad(x, pads=(1, 1, 1))
    Refused (C2): def example(x: f32[3]): return pad(x, pads=(1, 1), mode="replicate")
    Refused (C3): def example(x: f32[1, 2, 3]): return pad(x, pads=(3, 0), mode="reflect")
    """

    name: ClassVar[str] = "pad"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    pads: tuple[int, ...] = ()
    mode: PadMode = "constant"
    value: float = 0.0

    def __post_init__(self) -> None:
        check_ints("pad", "pads", self.pads)
        check_choice("pad", "mode", self.mode, PAD_MODES)
        check_number("pad", "value", self.value)

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        return TensorType(self.padded_shape(x), x.dtype)

    def padded_shape(self, x: TensorType) -> tuple[ShapeDim, ...]:
        """The result's shape, or a ``TypeRuleError`` citing the constraint broken."""
        pads, count = self.pads, len(self.pads) // 2
        if len(pads) % 2 or count > x.rank:
            raise TypeRuleError(
                f"pad needs (before, after) pairs for at most the {x.rank} axes of {x}, got pads {pads}{cite(self.name, 'C1')}"
            )
        if self.mode != "constant":
            if not 1 <= count <= 3 or x.rank not in (count + 1, count + 2) or any(p < 0 for p in pads):
                raise TypeRuleError(
                    f"pad mode {self.mode!r} pads 1 to 3 trailing axes of a value with one or two more axes, by counts"
                    f" of at least 0; got pads {pads} for {x}{cite(self.name, 'C2')}"
                )
        shape = list(x.shape)
        for k in range(count):
            axis = x.rank - 1 - k
            before, after = pads[2 * k], pads[2 * k + 1]
            size = shape[axis]
            if isinstance(size, int):
                self._check_limits(x, axis, size, before, after)
            shape[axis] = dim_expr("add", dim_expr("add", size, before), after)
        return tuple(shape)

    def _check_limits(self, x: TensorType, axis: int, size: int, before: int, after: int) -> None:
        if self.mode == "constant" and size + before + after < 0:
            raise TypeRuleError(
                f"pad ({before}, {after}) would leave axis {axis} of {x} with {size + before + after} elements{cite(self.name, 'C1')}"
            )
        if self.mode == "reflect" and max(before, after) >= size:
            raise TypeRuleError(
                f"pad mode 'reflect' needs counts below the size {size} of axis {axis} of {x}, got ({before}, {after})"
                f"{cite(self.name, 'C3')}"
            )
        if self.mode == "circular" and max(before, after) > size:
            raise TypeRuleError(
                f"pad mode 'circular' needs counts of at most the size {size} of axis {axis} of {x}, got ({before}, {after})"
                f"{cite(self.name, 'C3')}"
            )
        if self.mode == "replicate" and size == 0 and (before or after):
            raise TypeRuleError(f"pad mode 'replicate' cannot pad the empty axis {axis} of {x}{cite(self.name, 'C3')}")


REARRANGE_OPS: tuple[type[Op], ...] = (Flip, Roll, Diagonal, Triu, Tril, Pad)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


def flip(x: ExprLike, *, axes: tuple[int, ...], span: Span | None = None) -> Call:
    """``torch.flip(x, axes)``."""
    return apply(Flip(axes), x, span=span)


def roll(x: ExprLike, *, shifts: tuple[int, ...], axes: tuple[int, ...] | None = None, span: Span | None = None) -> Call:
    """``torch.roll(x, shifts, axes)`` (``axes=None``: the flattened value)."""
    return apply(Roll(shifts, axes), x, span=span)


def diagonal(x: ExprLike, *, offset: int = 0, axis1: int = 0, axis2: int = 1, span: Span | None = None) -> Call:
    """``torch.diagonal(x, offset, axis1, axis2)``: the diagonal as a new last axis."""
    return apply(Diagonal(offset, axis1, axis2), x, span=span)


def triu(x: ExprLike, *, diagonal: int = 0, span: Span | None = None) -> Call:
    """``torch.triu(x, diagonal)``: zeros below the diagonal."""
    return apply(Triu(diagonal), x, span=span)


def tril(x: ExprLike, *, diagonal: int = 0, span: Span | None = None) -> Call:
    """``torch.tril(x, diagonal)``: zeros above the diagonal."""
    return apply(Tril(diagonal), x, span=span)


def pad(
    x: ExprLike, *, pads: tuple[int, ...], mode: PadMode = "constant", value: float = 0.0, span: Span | None = None
) -> Call:
    """``F.pad(x, pads, mode, value)``: (before, after) pairs from the last axis."""
    return apply(Pad(pads, mode, value), x, span=span)
