"""Where constant values come from: an in-memory mapping, or safetensors files (one file, or
a saved module directory whose manifest records each tensor's checksums).

``open_weights`` opens the files of a reading without the module text (headers and manifest
checked, no tensor data read); ``FileSource.fetch`` reads a whole tensor and
``FileSource.fetch_block`` one block of a ``ShardLayout`` (what a mesh participant holds).
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from tfexec.errors import ModuleLoadError
from tfexec.ir.types import ShardLayout
from tfexec.loading.blocks import block_bounds, block_grid, block_index, block_number, layout_axis_error, uneven_axis
from tfexec.loading.declared import spell
from tfexec.loading.manifest import BlockDigests, Manifest, read_manifest
from tfexec.loading.safetensors_io import WeightsFile


class Source:
    """Where constant values come from; ``fetch`` reads one (the caller caches it)."""

    where = "the reading"

    def fetch(self, name: str) -> object:
        raise NotImplementedError


class MappingSource(Source):
    """An in-memory ``Mapping[str, torch.Tensor]``, indexed by name on first use."""

    def __init__(self, mapping: Mapping[str, torch.Tensor]) -> None:
        self.mapping = mapping

    def fetch(self, name: str) -> object:
        try:
            return self.mapping[name]
        except KeyError:
            raise ModuleLoadError(f"constant {name} is missing from the reading") from None
        except Exception as exc:  # a lazy mapping failing to produce it, however it fails
            raise ModuleLoadError(
                f"constant {name}: the reading failed to produce it: {type(exc).__name__}: {exc}"
            ) from exc


@dataclass(frozen=True, slots=True)
class StoredTensor:
    """A tensor in a weights file, with the digests to check it against (None: unchecked)."""

    file: WeightsFile
    sha256: str | None
    blocks: BlockDigests | None = None


@dataclass(frozen=True, slots=True)
class FileReading:
    """Where a loaded module's constants live on disk: a saved module directory or one
    ``.safetensors`` file, and whether reads are checked against the manifest's SHA-256s."""

    path: Path
    verify: bool


class FileSource(Source):
    """Tensors in safetensors files, each with its recorded digests."""

    def __init__(self, tensors: dict[str, StoredTensor], where: str, reading: FileReading) -> None:
        self.tensors = tensors
        self.where = where
        self.reading = reading

    def stored(self, name: str) -> StoredTensor:
        hit = self.tensors.get(name)
        if hit is None:
            raise ModuleLoadError(f"constant {name} is missing from {self.where}")
        return hit

    def fetch(self, name: str) -> object:
        hit = self.stored(name)
        return hit.file.read(name, hit.sha256)

    def fetch_block(self, name: str, layout: ShardLayout, coord: tuple[int, ...]) -> torch.Tensor:
        """The block of tensor ``name`` that ``layout`` gives the participant at mesh
        coordinate ``coord``, read alone.

        What is verified: with a block digest for this layout in the manifest (version 2),
        the block's own bytes; with none (version 1, or a layout other than the declared
        one), the whole tensor's SHA-256, by streaming every byte of it past the hash while
        only the block is kept; nothing for a plain ``.safetensors`` file or ``verify=False``.
        """
        hit = self.stored(name)
        entry = hit.file.entries[name]
        shape = entry.shape
        why = layout_axis_error(layout, len(shape))
        if why is not None:
            raise ModuleLoadError(f"constant {name}: {why}")
        grid = block_grid(layout, len(shape))
        uneven = uneven_axis(shape, grid)
        if uneven is not None:
            raise ModuleLoadError(
                f"constant {name}: axis {uneven} (size {shape[uneven]}) of {entry.spelled()} does not split into "
                f"{grid[uneven]} equal parts under {layout}"
            )
        index = block_index(layout, len(shape), coord)
        block_sha: str | None = None
        if hit.sha256 is not None and hit.blocks is not None and hit.blocks.grid == grid:
            block_sha = hit.blocks.sha256[block_number(grid, index)]
        return hit.file.read_block(name, block_bounds(shape, grid, index), block_sha, None if block_sha else hit.sha256)

    def found(self, name: str) -> str | None:
        hit = self.tensors.get(name)
        return None if hit is None else hit.file.entries[name].spelled()


def open_saved(root: Path, manifest: Manifest, verify: bool) -> FileSource:
    """Open every weights file's header and check it against the manifest (no data read)."""
    files: dict[str, WeightsFile] = {}
    for fname, nbytes in manifest.files.items():
        path = root / fname
        if not path.is_file():
            raise ModuleLoadError(f"{path}: weights file named by the manifest is missing")
        wf = WeightsFile.open(path)
        if wf.size != nbytes:
            raise ModuleLoadError(
                f"{path}: the manifest records {nbytes} bytes but the file has {wf.size}"
                f"{' (truncated)' if wf.size < nbytes else ''}"
            )
        files[fname] = wf
    tensors: dict[str, StoredTensor] = {}
    for name, rec in manifest.tensors.items():
        wf = files[rec.file]
        e = wf.entries.get(name)
        if e is None:
            raise ModuleLoadError(f"{wf.label}: tensor {name}, which the manifest places in this file, is missing from it")
        if e.dtype != rec.dtype or e.shape != rec.shape:
            raise ModuleLoadError(
                f"{wf.label}: tensor {name} is {e.spelled()} in the file but {spell(rec.dtype, rec.shape)} in the manifest"
            )
        tensors[name] = StoredTensor(wf, rec.sha256 if verify else None, rec.blocks)
    for fname, wf in files.items():
        for name in wf.entries:
            if manifest.tensors.get(name) is None or manifest.tensors[name].file != fname:
                raise ModuleLoadError(f"{wf.label}: tensor {name} is in the file but the manifest does not place it there")
    return FileSource(tensors, f"{root}", FileReading(root, verify))


def open_weights(path: "str | os.PathLike[str]", *, verify: bool = True) -> FileSource:
    """The weights of a saved module directory (manifest and headers checked against each
    other) or of one ``.safetensors`` file (header checked; no digests to verify against).
    No tensor data is read."""
    root = Path(path)
    if root.is_dir():
        return open_saved(root, read_manifest(root), verify)
    wf = WeightsFile.open(root)
    return FileSource({n: StoredTensor(wf, None) for n in wf.entries}, wf.label, FileReading(root, verify))
