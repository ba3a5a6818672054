"""Checks of a ``ShardLayout`` against a concrete value, shared by the caller and the participants.

They restate the type rule's constraints on ``reshard``/``local`` (hir §1.3, (C1) and
(C2)) for run-time shapes, where a ``DimVar`` has taken its value.
"""

from tfexec.ir.types import ShardLayout


def split_axis_error(layout: ShardLayout, rank: int) -> str | None:
    """Why a ``Split`` of ``layout`` names no axis of a rank-``rank`` value, else None (C1)."""
    for _, split in layout.splits:
        if not -rank <= split.tensor_axis < rank:
            return f"{split} names no axis of a rank-{rank} value (valid: {-rank}..{rank - 1}) in {layout}"
    return None


def uneven_split(layout: ShardLayout, shape: tuple[int, ...]) -> str | None:
    """Why ``shape`` does not split evenly under ``layout``, else None (C2). Mesh axes that
    split one tensor axis together divide it by the product of their sizes."""
    parts: dict[int, int] = {}
    for mesh_axis, split in layout.splits:
        axis = split.tensor_axis % len(shape)
        parts[axis] = parts.get(axis, 1) * layout.mesh.shape[mesh_axis]
    for axis, n in sorted(parts.items()):
        if shape[axis] % n:
            return f"axis {axis} (size {shape[axis]}) does not split into {n} equal parts under {layout}"
    return None
