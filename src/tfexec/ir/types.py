"""Tensor and tuple types (types §2) and the layouts a tensor type may carry.

Types are values: frozen, slotted, compared structurally, and their ``str`` is the
text-format spelling (``f32[B, 64]``, ``(f32[4], i64[()])``, ``f32[8] @ Layout((2, 4))``).
"""

from dataclasses import dataclass, field
from typing import TypeAlias, Union

from tfexec.errors import IRConstructionError
from tfexec.ir.dims import DimExpr, DimVar, ShapeDim, is_shape_dim
from tfexec.ir.dtypes import DType


def _check_shape(owner: str, shape: object) -> None:
    if not isinstance(shape, tuple):
        raise IRConstructionError(f"{owner}.shape must be a tuple of dims, got {type(shape).__name__} {shape!r}")
    for d in shape:
        if not is_shape_dim(d):
            raise IRConstructionError(f"{owner}.shape entries must be int, DimVar or DimExpr, got {d!r}")
        if isinstance(d, int) and d < 0:
            raise IRConstructionError(f"{owner}.shape has a negative size {d} in {shape!r}")


def _shape_str(shape: tuple[ShapeDim, ...]) -> str:
    return "()" if not shape else ", ".join(str(d) for d in shape)


@dataclass(frozen=True, slots=True)
class Mesh:
    """A device mesh: its shape and one name per axis."""

    shape: tuple[int, ...]
    axis_names: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.shape, tuple) or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in self.shape):
            raise IRConstructionError(f"Mesh.shape must be a tuple of positive ints, got {self.shape!r}")
        if not isinstance(self.axis_names, tuple) or not all(isinstance(n, str) for n in self.axis_names):
            raise IRConstructionError(f"Mesh.axis_names must be a tuple of str, got {self.axis_names!r}")
        if len(self.shape) != len(self.axis_names):
            raise IRConstructionError(
                f"Mesh has {len(self.shape)} axes but {len(self.axis_names)} axis names"
            )
        if len(set(self.axis_names)) != len(self.axis_names):
            raise IRConstructionError(f"Mesh.axis_names must be distinct, got {self.axis_names!r}")

    def __str__(self) -> str:
        return f"Mesh({self.shape!r}, {self.axis_names!r})"


@dataclass(frozen=True, slots=True)
class Replicate:
    """The value is replicated along a mesh axis."""

    def __str__(self) -> str:
        return "Replicate()"


@dataclass(frozen=True, slots=True)
class Split:
    """The value's logical axis ``tensor_axis`` is split along a mesh axis."""

    tensor_axis: int

    def __post_init__(self) -> None:
        if not isinstance(self.tensor_axis, int) or isinstance(self.tensor_axis, bool):
            raise IRConstructionError(f"Split.tensor_axis must be an int, got {self.tensor_axis!r}")

    def __str__(self) -> str:
        return f"Split({self.tensor_axis})"


@dataclass(frozen=True, slots=True)
class Layout:
    """A layout-domain organisation of a value's elements (same count, contiguous order)."""

    shape: tuple[ShapeDim, ...]

    def __post_init__(self) -> None:
        _check_shape("Layout", self.shape)

    def __str__(self) -> str:
        inner = ", ".join(str(d) for d in self.shape)
        return f"Layout(({inner}{',' if len(self.shape) == 1 else ''}))"


@dataclass(frozen=True, slots=True)
class ShardLayout:
    """How a value is distributed over a mesh: one ``Replicate``/``Split`` per mesh axis."""

    mesh: Mesh
    attrs: tuple[Replicate | Split, ...]
    layout: Layout | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.mesh, Mesh):
            raise IRConstructionError(f"ShardLayout.mesh must be a Mesh, got {self.mesh!r}")
        if not isinstance(self.attrs, tuple) or not all(isinstance(a, (Replicate, Split)) for a in self.attrs):
            raise IRConstructionError(f"ShardLayout.attrs must be a tuple of Replicate()/Split(axis), got {self.attrs!r}")
        if len(self.attrs) != len(self.mesh.shape):
            raise IRConstructionError(
                f"ShardLayout needs one attr per mesh axis: mesh has {len(self.mesh.shape)}, got {len(self.attrs)}"
            )
        if self.layout is not None and not isinstance(self.layout, Layout):
            raise IRConstructionError(f"ShardLayout.layout must be a Layout or None, got {self.layout!r}")

    @property
    def splits(self) -> tuple[tuple[int, Split], ...]:
        """``(mesh_axis, Split)`` for every split mesh axis."""
        return tuple((i, a) for i, a in enumerate(self.attrs) if isinstance(a, Split))

    def __str__(self) -> str:
        attrs = ", ".join(str(a) for a in self.attrs) + ("," if len(self.attrs) == 1 else "")
        tail = f", {self.layout}" if self.layout is not None else ""
        return f"ShardLayout({self.mesh}, ({attrs}){tail})"


@dataclass(frozen=True, slots=True)
class TensorType:
    """A tensor's logical shape, dtype and optional layout; rank 0 is a scalar."""

    shape: tuple[ShapeDim, ...]
    dtype: DType
    layout: Layout | ShardLayout | None = None

    def __post_init__(self) -> None:
        _check_shape("TensorType", self.shape)
        if not isinstance(self.dtype, DType):
            raise IRConstructionError(f"TensorType.dtype must be a DType, got {self.dtype!r}")
        if self.layout is not None and not isinstance(self.layout, (Layout, ShardLayout)):
            raise IRConstructionError(f"TensorType.layout must be a Layout, ShardLayout or None, got {self.layout!r}")

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        """True when every dim is an int."""
        return all(isinstance(d, int) for d in self.shape)

    def with_layout(self, layout: "Layout | ShardLayout | None") -> "TensorType":
        return TensorType(self.shape, self.dtype, layout)

    def __matmul__(self, layout: "Layout | ShardLayout") -> "TensorType":
        """``f32[128, 64] @ Layout((8, 16, 64))``: the text form's spelling of a laid-out type."""
        if not isinstance(layout, (Layout, ShardLayout)):
            return NotImplemented
        return self.with_layout(layout)

    def __str__(self) -> str:
        base = f"{self.dtype.value}[{_shape_str(self.shape)}]"
        return base if self.layout is None else f"{base} @ {self.layout}"


MAX_TUPLE_DEPTH = 64
"""How deep tuples may nest (a tensor is depth 0, a tuple of tensors depth 1): a type, a value
and a ``Tuple`` node deeper than this are refused, alike on both routes and in ``bind_inputs``,
so no walk over a tuple tree meets Python's recursion limit."""
TUPLE_DEPTH_REFUSED = f"tuples nest more than {MAX_TUPLE_DEPTH} deep here; tfexec refuses deeper tuples (MAX_TUPLE_DEPTH)"
"""Why a tuple past ``MAX_TUPLE_DEPTH`` is refused (after ``describe_expr`` of its node)."""


@dataclass(frozen=True, slots=True)
class TupleType:
    """The type of a tuple value: one type per field; ``depth`` is how deep it nests (at most
    ``MAX_TUPLE_DEPTH``)."""

    fields: tuple["Type", ...]
    depth: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.fields, tuple) or not all(isinstance(f, (TensorType, TupleType)) for f in self.fields):
            raise IRConstructionError(f"TupleType.fields must be a tuple of types, got {self.fields!r}")
        depth = 1 + max((f.depth for f in self.fields if isinstance(f, TupleType)), default=0)
        if depth > MAX_TUPLE_DEPTH:
            raise IRConstructionError(f"TupleType: {TUPLE_DEPTH_REFUSED}")
        object.__setattr__(self, "depth", depth)

    def __str__(self) -> str:
        if len(self.fields) == 1:
            return f"({self.fields[0]},)"
        return "(" + ", ".join(str(f) for f in self.fields) + ")"


Type: TypeAlias = Union[TensorType, TupleType]

__all__ = [
    "MAX_TUPLE_DEPTH",
    "TUPLE_DEPTH_REFUSED",
    "DimExpr",
    "DimVar",
    "Layout",
    "Mesh",
    "Replicate",
    "ShardLayout",
    "Split",
    "TensorType",
    "TupleType",
    "Type",
]



# -- the short spellings: f32[B, 64] is TensorType((B, 64), DType.float32) ---------------


class DTypeSpelling:
    """A short dtype spelling usable as a type constructor: ``f32[B, 64]``, ``i64[()]``."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: DType) -> None:
        self.dtype = dtype

    def __getitem__(self, shape: ShapeDim | tuple[ShapeDim, ...]) -> TensorType:
        dims = shape if isinstance(shape, tuple) else (shape,)
        return TensorType(dims, self.dtype)

    def __repr__(self) -> str:
        return self.dtype.value


b1 = DTypeSpelling(DType.bool)
i8 = DTypeSpelling(DType.int8)
i16 = DTypeSpelling(DType.int16)
i32 = DTypeSpelling(DType.int32)
i64 = DTypeSpelling(DType.int64)
u8 = DTypeSpelling(DType.uint8)
f16 = DTypeSpelling(DType.float16)
bf16 = DTypeSpelling(DType.bfloat16)
f32 = DTypeSpelling(DType.float32)
f64 = DTypeSpelling(DType.float64)
