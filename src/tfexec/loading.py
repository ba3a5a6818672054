"""Loaded modules: an ``IRModule`` bound to a reading of its constants.

A reading is where constant values live; here a ``Mapping[str, torch.Tensor]`` looked up
lazily by name. Each constant is read at most once per loaded module, on first use, and
checked against its declared dtype and shape.
"""

from collections.abc import Mapping
from typing import Any

import torch

from tfexec.errors import ModuleLoadError
from tfexec.ir.dims import DimVar
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Function
from tfexec.ir.module import IRModule
from tfexec.ir.types import TensorType


class _Cache:
    """Constants read so far, shared by every selection of one loaded module."""

    def __init__(self, reading: Mapping[str, torch.Tensor], device: str | None) -> None:
        self.reading = reading
        self.device = device
        self.values: dict[str, torch.Tensor] = {}
        self.reads: dict[str, int] = {}


class LoadedModule:
    """An ``IRModule`` with a reading of its constants; ``entry`` is the function evaluate runs."""

    def __init__(self, module: IRModule, cache: _Cache, entry: Function | None, prefix: str = "", name: str = "module") -> None:
        self.module = module
        self._cache = cache
        self.entry = entry
        self.prefix = prefix
        self.name = name

    @classmethod
    def from_reading(cls, module: IRModule, reading: Mapping[str, torch.Tensor], device: str | None = None) -> "LoadedModule":
        """Bind ``module`` to ``reading`` (a mapping from dotted constant names to tensors)."""
        entry = module.functions[module.entry] if module.entry is not None else None
        return cls(module, _Cache(reading, device), entry)

    def function(self, name: str) -> "LoadedModule":
        """This loaded module with ``name`` selected as the function to run."""
        try:
            fn = self.module.function(name)
        except KeyError as exc:
            raise ModuleLoadError(str(exc.args[0])) from None
        return LoadedModule(self.module, self._cache, fn, self.prefix, f"{self.name}.{name}")

    def child(self, path: str) -> "LoadedModule":
        """The child module at dotted ``path``, sharing this module's reading."""
        try:
            sub = self.module.child(path)
        except KeyError as exc:
            raise ModuleLoadError(str(exc.args[0])) from None
        entry = sub.functions[sub.entry] if sub.entry is not None else None
        return LoadedModule(sub, self._cache, entry, f"{self.prefix}{path}.", f"{self.name}.{path}")

    def constant(self, name: str, declared: TensorType | None = None) -> torch.Tensor:
        """Constant ``name`` of this module, read on first use and checked against its declaration."""
        full = self.prefix + name
        cache = self._cache
        if full in cache.values:
            return cache.values[full]
        t = self.module.constants.get(name, declared)
        if t is None:
            raise ModuleLoadError(f"constant {full} is not declared by the module")
        try:
            data = cache.reading[full]
        except KeyError:
            raise ModuleLoadError(f"constant {full} is missing from the reading") from None
        _check_declared(full, t, data)
        cache.values[full] = data
        cache.reads[full] = cache.reads.get(full, 0) + 1
        return data

    def reads(self) -> dict[str, int]:
        """How many times each constant was read from the reading (at most once each)."""
        return dict(self._cache.reads)


def _check_declared(name: str, t: TensorType, data: Any) -> None:
    if not isinstance(data, torch.Tensor):
        raise ModuleLoadError(f"constant {name}: the reading holds {type(data).__name__}, not a tensor")
    found = DType.from_torch(data.dtype) if data.dtype in (d.torch for d in DType) else None
    shape_ok = len(t.shape) == data.dim() and all(
        isinstance(d, DimVar) or not isinstance(d, int) or d == s for d, s in zip(t.shape, data.shape)
    )
    if found != t.dtype or not shape_ok:
        raise ModuleLoadError(
            f"constant {name}: declared {t}, found {data.dtype} {list(data.shape)} in the reading"
        )
