"""Checks of a ``ShardLayout`` against a concrete value, shared by the caller and the participants.

They restate the type rule's constraints on ``reshard``/``local`` (hir §1.3, (C1) and
(C2)) for run-time shapes, where a ``DimVar`` has taken its value. The grid arithmetic is
``tfexec.loading.blocks``'s, which also cuts weights into the blocks participants read.
"""

from tfexec.ir.types import ShardLayout
from tfexec.loading.blocks import block_grid, layout_axis_error, uneven_axis


def split_axis_error(layout: ShardLayout, rank: int) -> str | None:
    """Why a ``Split`` of ``layout`` names no axis of a rank-``rank`` value, else None (C1)."""
    return layout_axis_error(layout, rank)


def uneven_split(layout: ShardLayout, shape: tuple[int, ...]) -> str | None:
    """Why ``shape`` does not split evenly under ``layout``, else None (C2). Mesh axes that
    split one tensor axis together divide it by the product of their sizes."""
    grid = block_grid(layout, len(shape))
    axis = uneven_axis(shape, grid)
    if axis is None:
        return None
    return f"axis {axis} (size {shape[axis]}) does not split into {grid[axis]} equal parts under {layout}"
