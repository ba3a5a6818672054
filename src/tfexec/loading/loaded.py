"""``LoadedModule``: an ``IRModule`` bound to a reading of its constants, read lazily and once."""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TypeAlias

import torch

from tfexec.errors import ModuleLoadError
from tfexec.ir.expr import Function
from tfexec.ir.module import IRModule
from tfexec.ir.types import TensorType
from tfexec.loading.declared import check_declared, shape_matches
from tfexec.loading.sources import FileReading, FileSource, MappingSource, Source, open_weights

Reading: TypeAlias = Mapping[str, torch.Tensor] | str | os.PathLike[str]
"""A mapping from dotted constant names to tensors, a ``.safetensors`` file, or a saved module directory."""
DeviceLike: TypeAlias = str | torch.device


class ConstantCache:
    """Constants read so far, shared by every selection (function, child) of one loaded module."""

    def __init__(self, source: Source, device: torch.device | None) -> None:
        self.source = source
        self.device = device
        self.values: dict[str, torch.Tensor] = {}
        self.failed: dict[str, ModuleLoadError] = {}
        self.reads: dict[str, int] = {}
        self.dims: dict[str, int] = {}


def as_device(device: DeviceLike | None) -> torch.device | None:
    if device is None or isinstance(device, torch.device):
        return device
    try:
        return torch.device(device)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise ModuleLoadError(f"unknown device {device!r}: {exc}") from exc


class LoadedModule:
    """An ``IRModule`` bound to a reading of its constants; ``entry`` is the function
    ``evaluate`` runs (``None`` when the selected module has no entry).

    Every selection made with ``function`` or ``child`` shares one cache: a constant is read
    from the reading at most once per loaded module, however many selections use it.
    """

    def __init__(self, module: IRModule, cache: ConstantCache, entry: Function | None, prefix: str = "", name: str = "module") -> None:
        self.module = module
        self._cache = cache
        self.entry = entry
        self.prefix = prefix
        self.name = name

    @classmethod
    def from_reading(
        cls, module: IRModule, reading: Reading, device: DeviceLike | None = None, *, verify: bool = True
    ) -> "LoadedModule":
        """Bind ``module`` to ``reading``: a ``Mapping[str, torch.Tensor]`` keyed by dotted
        constant names, a ``.safetensors`` file, or a directory written by ``save_module``.

        A mapping's tensors are used where they are unless ``device`` is given; a file's are
        placed on ``device`` (default CPU). A file's headers are checked against the declared
        constants at once; no tensor data is read until a constant is first used.
        """
        if not isinstance(module, IRModule):
            raise TypeError(f"LoadedModule.from_reading needs an IRModule, got {type(module).__name__}")
        dev = as_device(device)
        if isinstance(reading, (str, os.PathLike)):
            source = open_weights(Path(reading), verify=verify)
            cache = ConstantCache(source, dev if dev is not None else torch.device("cpu"))
            check_headers(module, source, cache.dims)
        elif isinstance(reading, Mapping):
            cache = ConstantCache(MappingSource(reading), dev)
        else:
            raise TypeError(
                f"a reading is a Mapping[str, torch.Tensor] or a path to a .safetensors file, got {type(reading).__name__}"
            )
        entry = module.functions[module.entry] if module.entry is not None else None
        return cls(module, cache, entry)

    @property
    def device(self) -> torch.device | None:
        """Where constants are placed (``None``: a mapping's tensors stay where they are)."""
        return self._cache.device

    def function(self, name: str) -> "LoadedModule":
        """This loaded module with ``name`` selected as the function to run."""
        try:
            fn = self.module.function(name)
        except KeyError as exc:
            raise ModuleLoadError(f"{self.name}: {exc.args[0]}") from None
        return LoadedModule(self.module, self._cache, fn, self.prefix, f"{self.name}.{name}")

    def child(self, path: str) -> "LoadedModule":
        """The child module at dotted ``path``, sharing this module's reading (its constants
        are read under the child's dotted prefix)."""
        try:
            sub = self.module.child(path)
        except KeyError as exc:
            raise ModuleLoadError(f"{self.name}: {exc.args[0]}") from None
        entry = sub.functions[sub.entry] if sub.entry is not None else None
        return LoadedModule(sub, self._cache, entry, f"{self.prefix}{path}.", f"{self.name}.{path}")

    def qualified_name(self, name: str) -> str:
        """The dotted name of this module's constant ``name`` in the whole reading."""
        return self.prefix + name

    @property
    def file_reading(self) -> FileReading | None:
        """Where the constants live on disk (a saved module directory or a ``.safetensors``
        file), or None when they come from an in-memory mapping."""
        source = self._cache.source
        return source.reading if isinstance(source, FileSource) else None

    def constant_type(self, name: str, declared: TensorType | None = None) -> TensorType:
        """The type constant ``name`` is checked against when it is read, without reading it:
        the module's declaration, which ``declared`` (the referencing ``ConstTensor``'s
        type) must equal; ``declared`` when the module declares none."""
        full = self.prefix + name
        t = self.module.constant_type(name)
        if t is None:
            if declared is None:
                raise ModuleLoadError(f"constant {full} is not declared by the module")
            return declared
        if declared is not None and declared != t:
            raise ModuleLoadError(f"constant {full}: the reference declares {declared} but the module declares {t}")
        return t

    def constant(self, name: str, declared: TensorType | None = None) -> torch.Tensor:
        """Constant ``name`` of this module (dotted names reach into children), read on first
        use, checked against its declared type and placed on the module's device.

        ``declared`` is the type the referencing ``ConstTensor`` states; it must equal the
        module's declaration, and stands in for one when the module declares none.
        """
        full = self.prefix + name
        cache = self._cache
        hit = cache.values.get(full)
        if hit is not None:
            return hit
        if full in cache.failed:
            raise cache.failed[full]
        t = self.constant_type(name, declared)
        cache.reads[full] = cache.reads.get(full, 0) + 1
        try:
            data = check_declared(full, t, cache.source.fetch(full), cache.source.where, cache.dims)
            if cache.device is not None and data.device != cache.device:
                try:
                    data = data.to(cache.device)
                except RuntimeError as exc:
                    raise ModuleLoadError(f"constant {full}: cannot place it on {cache.device}: {exc}") from exc
        except ModuleLoadError as exc:
            cache.failed[full] = exc  # a failed read is not retried: the next use fails the same way
            raise
        cache.values[full] = data
        return data

    def reads(self) -> dict[str, int]:
        """How many times each constant was read from the reading (at most once each)."""
        return dict(self._cache.reads)

    def __repr__(self) -> str:
        entry = self.entry.name if self.entry is not None else None
        return f"LoadedModule({self.name!r}, entry={entry!r}, constants read={len(self._cache.values)})"


def check_headers(module: IRModule, source: FileSource, dims: dict[str, int]) -> None:
    """Every declared constant is in the files, with its declared dtype and shape (no data read)."""
    for name, t in module.all_constants().items():
        hit = source.tensors.get(name)
        if hit is None:
            raise ModuleLoadError(f"constant {name}: declared {t}, but {source.where} has no tensor {name}")
        e = hit.file.entries[name]
        if e.dtype != t.dtype or not shape_matches(t.shape, e.shape, dims):
            raise ModuleLoadError(f"constant {name}: declared {t}, found {e.spelled()} in {hit.file.label}")


