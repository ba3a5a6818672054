"""Layout-domain views (evaluator spec §6).

``as_layout_view`` reshapes a value from its logical shape to its layout's shape in
default-contiguous order; ``from_layout_view`` is the inverse. No op of the current
catalogue computes in the layout domain, so no value rule calls them; they exist for
ops defined to do so. Every failure (an unbound dim, a layout that does not hold the
value's element count) is an ``EvalError``.
"""

from collections.abc import Mapping, Sequence

import torch

from tfexec.errors import EvalError
from tfexec.evaluator.value import TensorValue
from tfexec.ir.dims import DimError, ShapeDim, resolve_dim
from tfexec.ir.types import Layout, ShardLayout, TensorType


def _resolve(dims: Sequence[ShapeDim], bindings: Mapping[str, int], what: str) -> tuple[int, ...]:
    try:
        return tuple(resolve_dim(d, bindings) for d in dims)
    except DimError as exc:
        raise EvalError(f"{what}: {exc}") from None


def _layout_shape(t: TensorType, bindings: Mapping[str, int]) -> tuple[int, ...] | None:
    layout = t.layout
    if isinstance(layout, ShardLayout):
        layout = layout.layout
    if not isinstance(layout, Layout):
        return None
    return _resolve(layout.shape, bindings, f"layout {layout} of {t}")


def as_layout_view(value: TensorValue, dim_bindings: Mapping[str, int] | None = None) -> torch.Tensor:
    """``value.data`` organised as its type's layout shape (the data itself when no layout)."""
    shape = _layout_shape(value.type, dim_bindings or {})
    if shape is None:
        return value.data
    if value.data.numel() != _numel(shape):
        raise EvalError(f"layout {value.type.layout} holds {_numel(shape)} elements, the value has {value.data.numel()}")
    return value.data.reshape(shape)


def from_layout_view(data: torch.Tensor, type: TensorType, dim_bindings: Mapping[str, int] | None = None) -> TensorValue:
    """The logical value of layout-domain ``data`` of type ``type`` (inverse of ``as_layout_view``)."""
    logical = _resolve(type.shape, dim_bindings or {}, f"logical shape of {type}")
    if data.numel() != _numel(logical):
        raise EvalError(f"layout data of {data.numel()} elements does not fill logical shape {list(logical)}")
    return TensorValue(data.reshape(logical), TensorType(logical, type.dtype, type.layout))


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
