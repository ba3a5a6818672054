"""The blocks a ``ShardLayout`` cuts a tensor into: what each mesh participant holds of it.

A layout splits tensor axis ``a`` into as many parts as the product of the sizes of the
mesh axes that ``Split(a)``, in mesh-axis order (the first such mesh axis outermost, as
DTensor shards). The *grid* is the number of parts of every tensor axis; the participant at
mesh coordinate ``coord`` holds one block of it, and participants that differ only on
replicated mesh axes hold the same block. ``save_module`` records one SHA-256 per block of
this grid (manifest version 2), and a participant reads and checks only its own block.
"""

from collections.abc import Iterator
from itertools import product

from tfexec.ir.types import ShardLayout

Bounds = tuple[tuple[int, int], ...]
"""A block as a ``[start, stop)`` range per tensor axis."""


def layout_axis_error(layout: ShardLayout, rank: int) -> str | None:
    """Why a ``Split`` of ``layout`` names no axis of a rank-``rank`` tensor, else None."""
    for _, split in layout.splits:
        if not -rank <= split.tensor_axis < rank:
            return f"{split} names no axis of a rank-{rank} value (valid: {-rank}..{rank - 1}) in {layout}"
    return None


def block_grid(layout: ShardLayout, rank: int) -> tuple[int, ...]:
    """How many parts ``layout`` cuts each axis of a rank-``rank`` tensor into (axes must exist)."""
    grid = [1] * rank
    for mesh_axis, split in layout.splits:
        grid[split.tensor_axis % rank] *= layout.mesh.shape[mesh_axis]
    return tuple(grid)


def block_index(layout: ShardLayout, rank: int, coord: tuple[int, ...]) -> tuple[int, ...]:
    """The block of the grid the participant at mesh coordinate ``coord`` holds."""
    index = [0] * rank
    for mesh_axis, split in layout.splits:
        axis = split.tensor_axis % rank
        index[axis] = index[axis] * layout.mesh.shape[mesh_axis] + coord[mesh_axis]
    return tuple(index)


def uneven_axis(shape: tuple[int, ...], grid: tuple[int, ...]) -> int | None:
    """The first axis whose size the grid does not divide, else None."""
    for axis, (size, parts) in enumerate(zip(shape, grid)):
        if size % parts:
            return axis
    return None


def block_bounds(shape: tuple[int, ...], grid: tuple[int, ...], index: tuple[int, ...]) -> Bounds:
    """The ranges block ``index`` covers of a tensor of ``shape`` (the grid must divide it)."""
    out = []
    for size, parts, i in zip(shape, grid, index):
        step = size // parts
        out.append((i * step, (i + 1) * step))
    return tuple(out)


def block_number(grid: tuple[int, ...], index: tuple[int, ...]) -> int:
    """The position of block ``index`` in row-major order of ``grid`` (the order of the digests)."""
    number = 0
    for parts, i in zip(grid, index):
        number = number * parts + i
    return number


def all_blocks(grid: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """Every block index of ``grid``, in row-major order."""
    return product(*(range(parts) for parts in grid))
