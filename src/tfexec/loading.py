"""Loaded modules and weight readings (hir.md §modules).

A *reading* is where a module's constant values live: an in-memory
``Mapping[str, torch.Tensor]`` (looked up lazily by name), a ``.safetensors`` file, or a
module directory written by ``save_module``. ``LoadedModule`` binds an ``IRModule`` to a
reading; each constant is read on first use, at most once per loaded module, checked
against its declared dtype and shape, and placed on the loaded module's device.

Main definitions
----------------
* ``LoadedModule`` — an ``IRModule`` bound to a reading; ``entry`` is what ``evaluate`` runs,
  ``function(name)`` / ``child(path)`` select another function or a child module.
* ``save_module(module, weights, path)`` — write a module directory (text, safetensors
  weights, manifest).
* ``load_module(path, device=None)`` — open one: the manifest and every safetensors header
  are validated at once; tensor data is read only when a constant is first used.

Implementation notes
--------------------
* Safetensors files are read with plain file I/O at the header's offsets: never mapped,
  never unpickled. Each tensor is copied out of the file at its first read, so a file
  truncated after loading fails with ``ModuleLoadError`` rather than killing the process
  with SIGBUS, and memory grows only by the tensors a run actually touches.
* The manifest records each tensor's SHA-256, checked on first read (``verify=False`` opts
  out); it catches flipped bytes and swapped offsets that no header check can.
* The module text (``module.tf.py``, children as ``class`` blocks) is written with
  ``tfexec.text.print_ir`` and read back with ``tfexec.text.parse``; its entry must match
  the manifest's, and its declared constants must match the saved tensors.

Directory layout::

    path/
      manifest.json          format, version, module text file, entry, files, tensors
      module.tf.py           the module tree in the tfexec text form
      weights.safetensors    or weights-00001-of-0000N.safetensors when sharded
"""

import ctypes
import hashlib
import importlib
import io
import json
import os
import re
import shutil
import struct
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TypeAlias

import safetensors
import torch

from tfexec.errors import ModuleLoadError
from tfexec.ir.dims import DimExpr, DimVar, ShapeDim, resolve_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Function
from tfexec.ir.module import IRModule
from tfexec.ir.types import TensorType

Reading: TypeAlias = Mapping[str, torch.Tensor] | str | os.PathLike[str]
"""A mapping from dotted constant names to tensors, a ``.safetensors`` file, or a saved module directory."""
DeviceLike: TypeAlias = str | torch.device

FORMAT = "tfexec-module"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
MODULE_TEXT = "module.tf.py"
DEFAULT_SHARD_BYTES = 2 << 30
"""``save_module`` starts a new weights file when the current one would exceed this size."""

# safetensors dtype codes: those with an HIR dtype, and the byte width of every code we know.
_ST_DTYPES: dict[str, DType] = {
    "BOOL": DType.bool, "U8": DType.uint8, "I8": DType.int8, "I16": DType.int16, "I32": DType.int32,
    "I64": DType.int64, "F16": DType.float16, "BF16": DType.bfloat16, "F32": DType.float32, "F64": DType.float64,
}
_ST_ITEMSIZE: dict[str, int] = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1, "I16": 2, "U16": 2, "F16": 2,
    "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "C64": 8, "I64": 8, "U64": 8, "F64": 8,
}
_MAX_HEADER_BYTES = 100_000_000


# -- shapes and types ---------------------------------------------------------------------


def _shape_matches(declared: tuple[ShapeDim, ...], found: tuple[int, ...], dims: dict[str, int]) -> bool:
    """Whether ``found`` has the declared shape; ``DimVar``s bind (consistently) into ``dims``."""
    if len(declared) != len(found):
        return False
    bound = dict(dims)
    for want, size in zip(declared, found):
        if isinstance(want, int):
            if want != size:
                return False
        elif isinstance(want, DimVar):
            if bound.setdefault(want.name, size) != size:
                return False
    for want, size in zip(declared, found):
        if isinstance(want, DimExpr):
            try:
                if resolve_dim(want, bound) != size:
                    return False
            except ValueError:
                pass  # depends on a dim no constant binds: any size fits
    dims.update(bound)
    return True


def _spell(dtype: DType | str, shape: tuple[int, ...]) -> str:
    name = dtype.value if isinstance(dtype, DType) else dtype
    return f"{name}[{', '.join(str(s) for s in shape) or '()'}]"


def _spell_tensor(data: torch.Tensor) -> str:
    try:
        name: DType | str = DType.from_torch(data.dtype)
    except TypeError:
        name = str(data.dtype)
    return _spell(name, tuple(data.shape))


def _check_declared(name: str, t: TensorType, data: object, where: str, dims: dict[str, int]) -> torch.Tensor:
    """``data`` as constant ``name`` of type ``t``, or a ``ModuleLoadError`` naming declared vs found."""
    if not isinstance(data, torch.Tensor):
        raise ModuleLoadError(f"constant {name}: declared {t}, but {where} holds a {type(data).__name__}, not a tensor")
    if data.dtype != t.dtype.torch or not _shape_matches(t.shape, tuple(data.shape), dims):
        raise ModuleLoadError(f"constant {name}: declared {t}, found {_spell_tensor(data)} in {where}")
    return data


# -- safetensors files: header at open, data by plain reads at first use -------------------


@dataclass(frozen=True, slots=True)
class _Entry:
    """One tensor in a safetensors header: dtype code, shape and absolute byte range."""

    code: str
    shape: tuple[int, ...]
    start: int
    stop: int

    @property
    def dtype(self) -> DType | None:
        return _ST_DTYPES.get(self.code)

    def spelled(self) -> str:
        return _spell(self.dtype or self.code, self.shape)


def _read_exact(f: io.FileIO, into: memoryview) -> int:
    """Fill ``into`` from ``f``; the number of bytes read (short only at end of file)."""
    got = 0
    while got < len(into):
        n = f.readinto(into[got:])
        if not n:
            break
        got += n
    return got


class _WeightsFile:
    """A safetensors file whose header was validated at open; tensors are read on request."""

    def __init__(self, path: Path, label: str, size: int, entries: dict[str, _Entry]) -> None:
        self.path = path
        self.label = label
        self.size = size
        self.entries = entries

    @classmethod
    def open(cls, path: Path, label: str | None = None) -> "_WeightsFile":
        """Read and validate the header of ``path``: JSON, dtypes, and byte ranges that tile the data."""
        label = label or str(path)
        try:
            with open(path, "rb", buffering=0) as f:
                size = os.fstat(f.fileno()).st_size
                if size == 0:
                    raise ModuleLoadError(f"{label}: the weights file is empty")
                if size < 8:
                    raise ModuleLoadError(f"{label}: not a safetensors file: only {size} bytes")
                head = bytearray(8)
                _read_exact(f, memoryview(head))
                (n,) = struct.unpack("<Q", head)
                if n > _MAX_HEADER_BYTES or 8 + n > size:
                    raise ModuleLoadError(
                        f"{label}: not a safetensors file, or truncated: its header claims {n} bytes "
                        f"but the file has {size}"
                    )
                raw = bytearray(n)
                if _read_exact(f, memoryview(raw)) != n:
                    raise ModuleLoadError(f"{label}: truncated while reading its header")
        except IsADirectoryError:
            raise ModuleLoadError(f"{label}: is a directory, not a safetensors file (use load_module for a saved module)") from None
        except OSError as exc:
            raise ModuleLoadError(f"{label}: cannot read the weights file: {exc.strerror or exc}") from exc
        return cls(path, label, size, _parse_header(bytes(raw), label, 8 + n, size))

    def read(self, name: str, sha256: str | None) -> torch.Tensor:
        """Tensor ``name`` copied out of the file (on CPU), checked against ``sha256`` when given."""
        e = self.entries[name]
        dtype = e.dtype
        if dtype is None:
            known = ", ".join(_ST_DTYPES)
            raise ModuleLoadError(f"{self.label}: tensor {name} has dtype {e.code}, which HIR cannot hold (supported: {known})")
        if sys.byteorder != "little":
            raise ModuleLoadError(f"{self.label}: tensor {name}: reading safetensors on a big-endian host is not supported")
        nbytes = e.stop - e.start
        out = torch.empty(nbytes, dtype=torch.uint8)
        view = memoryview((ctypes.c_char * nbytes).from_address(out.data_ptr())).cast("B") if nbytes else memoryview(b"")
        try:
            with open(self.path, "rb", buffering=0) as f:
                size = os.fstat(f.fileno()).st_size
                if size != self.size:
                    raise ModuleLoadError(
                        f"{self.label}: tensor {name}: the file changed since it was loaded "
                        f"({self.size} bytes then, {size} now{'; truncated' if size < self.size else ''})"
                    )
                f.seek(e.start)
                got = _read_exact(f, view)
        except OSError as exc:
            raise ModuleLoadError(f"{self.label}: tensor {name}: cannot read: {exc.strerror or exc}") from exc
        if got != nbytes:
            raise ModuleLoadError(f"{self.label}: tensor {name}: truncated: read {got} of its {nbytes} bytes")
        if sha256 is not None:
            digest = hashlib.sha256(view).hexdigest()
            if digest != sha256:
                raise ModuleLoadError(
                    f"{self.label}: tensor {name} is corrupt: its bytes hash to SHA-256 {digest}, "
                    f"the manifest records {sha256}"
                )
        del view
        if dtype is DType.bool and nbytes and int(out.max()) > 1:
            raise ModuleLoadError(f"{self.label}: tensor {name} is corrupt: a bool byte is neither 0 nor 1")
        return out.view(dtype.torch).reshape(e.shape)


def _parse_header(raw: bytes, label: str, data_start: int, size: int) -> dict[str, _Entry]:
    """The entries of a safetensors header; every structural fault is a ``ModuleLoadError``."""
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_json_object)
    except ValueError as exc:  # UnicodeDecodeError, JSONDecodeError, a duplicate key
        raise ModuleLoadError(f"{label}: not a safetensors file: its header is not JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise ModuleLoadError(f"{label}: not a safetensors file: its header is a {type(header).__name__}, not an object")
    entries: dict[str, _Entry] = {}
    for name, info in header.items():
        if name == "__metadata__":
            if not isinstance(info, dict) or not all(isinstance(v, str) for v in info.values()):
                raise ModuleLoadError(f"{label}: __metadata__ must map names to strings")
            continue
        where = f"{label}: tensor {name}"
        if not isinstance(info, dict):
            raise ModuleLoadError(f"{where}: its header entry is not an object")
        code, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if not isinstance(code, str):
            raise ModuleLoadError(f"{where}: its header entry has no dtype")
        if code not in _ST_ITEMSIZE:
            raise ModuleLoadError(f"{where}: unknown dtype {code!r} (supported: {', '.join(_ST_DTYPES)})")
        if not isinstance(shape, list) or not all(_is_count(s) for s in shape):
            raise ModuleLoadError(f"{where}: its shape {shape!r} is not a list of sizes")
        if not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_count(o) for o in offsets) or offsets[0] > offsets[1]:
            raise ModuleLoadError(f"{where}: its data_offsets {offsets!r} are not a [begin, end] byte range")
        numel = 1
        for s in shape:
            numel *= s
        if offsets[1] - offsets[0] != numel * _ST_ITEMSIZE[code]:
            raise ModuleLoadError(
                f"{where}: its data_offsets {offsets} hold {offsets[1] - offsets[0]} bytes, "
                f"but {_spell(_ST_DTYPES.get(code) or code, tuple(shape))} needs {numel * _ST_ITEMSIZE[code]}"
            )
        entries[name] = _Entry(code, tuple(shape), data_start + offsets[0], data_start + offsets[1])
    end = data_start
    for name, e in sorted(entries.items(), key=lambda kv: (kv[1].start, kv[1].stop)):
        if e.start != end:
            raise ModuleLoadError(
                f"{label}: tensor {name}: its data starts at byte {e.start - data_start} of the data section, "
                f"expected {end - data_start} (tensors overlap or leave a gap)"
            )
        end = e.stop
    if end > size:
        raise ModuleLoadError(f"{label}: truncated: its header describes {end} bytes but the file has {size}")
    if end < size:
        raise ModuleLoadError(f"{label}: {size - end} trailing bytes that its header does not describe")
    return entries


def _json_object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object that refuses duplicate keys (a second entry must not shadow the first)."""
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# -- readings -----------------------------------------------------------------------------


class _Source:
    """Where constant values come from; ``fetch`` reads one (the caller caches it)."""

    where = "the reading"

    def fetch(self, name: str) -> object:
        raise NotImplementedError


class _MappingSource(_Source):
    """An in-memory ``Mapping[str, torch.Tensor]``, indexed by name on first use."""

    def __init__(self, mapping: Mapping[str, torch.Tensor]) -> None:
        self.mapping = mapping

    def fetch(self, name: str) -> object:
        try:
            return self.mapping[name]
        except KeyError:
            raise ModuleLoadError(f"constant {name} is missing from the reading") from None
        except (OSError, RuntimeError, ValueError, TypeError) as exc:  # a lazy mapping failing to produce it
            raise ModuleLoadError(f"constant {name}: the reading failed to produce it: {exc}") from exc


class _FileSource(_Source):
    """Tensors in safetensors files, each with the SHA-256 to check it against (or None)."""

    def __init__(self, tensors: dict[str, tuple[_WeightsFile, str | None]], where: str) -> None:
        self.tensors = tensors
        self.where = where

    def fetch(self, name: str) -> object:
        hit = self.tensors.get(name)
        if hit is None:
            raise ModuleLoadError(f"constant {name} is missing from {self.where}")
        file, sha = hit
        return file.read(name, sha)

    def found(self, name: str) -> str | None:
        hit = self.tensors.get(name)
        return None if hit is None else hit[0].entries[name].spelled()


class _Cache:
    """Constants read so far, shared by every selection (function, child) of one loaded module."""

    def __init__(self, source: _Source, device: torch.device | None) -> None:
        self.source = source
        self.device = device
        self.values: dict[str, torch.Tensor] = {}
        self.failed: dict[str, ModuleLoadError] = {}
        self.reads: dict[str, int] = {}
        self.dims: dict[str, int] = {}


def _as_device(device: DeviceLike | None) -> torch.device | None:
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

    def __init__(self, module: IRModule, cache: _Cache, entry: Function | None, prefix: str = "", name: str = "module") -> None:
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
        dev = _as_device(device)
        if isinstance(reading, (str, os.PathLike)):
            path = Path(reading)
            if path.is_dir():
                source = _open_saved(path, _read_manifest(path), verify)
            else:
                wf = _WeightsFile.open(path)
                source = _FileSource({n: (wf, None) for n in wf.entries}, wf.label)
            cache = _Cache(source, dev if dev is not None else torch.device("cpu"))
            _check_headers(module, source, cache.dims)
        elif isinstance(reading, Mapping):
            cache = _Cache(_MappingSource(reading), dev)
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
        t = self.module.constant_type(name)
        if t is None:
            if declared is None:
                raise ModuleLoadError(f"constant {full} is not declared by the module")
            t = declared
        elif declared is not None and declared != t:
            raise ModuleLoadError(f"constant {full}: the reference declares {declared} but the module declares {t}")
        cache.reads[full] = cache.reads.get(full, 0) + 1
        try:
            data = _check_declared(full, t, cache.source.fetch(full), cache.source.where, cache.dims)
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


def _check_headers(module: IRModule, source: _FileSource, dims: dict[str, int]) -> None:
    """Every declared constant is in the files, with its declared dtype and shape (no data read)."""
    for name, t in module.all_constants().items():
        hit = source.tensors.get(name)
        if hit is None:
            raise ModuleLoadError(f"constant {name}: declared {t}, but {source.where} has no tensor {name}")
        e = hit[0].entries[name]
        if e.dtype != t.dtype or not _shape_matches(t.shape, e.shape, dims):
            raise ModuleLoadError(f"constant {name}: declared {t}, found {e.spelled()} in {hit[0].label}")


# -- the manifest -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _TensorRecord:
    file: str
    dtype: DType
    shape: tuple[int, ...]
    sha256: str


@dataclass(frozen=True, slots=True)
class _Manifest:
    path: Path
    text: str
    entry: str | None
    files: dict[str, int]
    tensors: dict[str, _TensorRecord]


class _Bad(Exception):
    """A malformed manifest field (turned into a ``ModuleLoadError`` naming the manifest)."""


def _field(obj: object, key: str, where: str) -> object:
    if not isinstance(obj, dict):
        raise _Bad(f"{where} must be an object, got {obj!r}")
    if key not in obj:
        raise _Bad(f"{where} has no {key!r}")
    return obj[key]


def _str(obj: object, key: str, where: str) -> str:
    value = _field(obj, key, where)
    if not isinstance(value, str):
        raise _Bad(f"{where}.{key} must be a string, got {value!r}")
    return value


def _opt_str(obj: object, key: str, where: str) -> str | None:
    value = _field(obj, key, where)
    if value is not None and not isinstance(value, str):
        raise _Bad(f"{where}.{key} must be a string or null, got {value!r}")
    return value


def _dict(obj: object, key: str, where: str) -> dict[str, object]:
    value = _field(obj, key, where)
    if not isinstance(value, dict):
        raise _Bad(f"{where}.{key} must be an object, got {value!r}")
    return value


def _sizes(obj: object, key: str, where: str) -> tuple[int, ...]:
    value = _field(obj, key, where)
    if not isinstance(value, list) or not all(_is_count(v) for v in value):
        raise _Bad(f"{where}.{key} must be a list of sizes, got {value!r}")
    return tuple(value)


def _plain_file(name: str, where: str) -> str:
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise _Bad(f"{where}: {name!r} is not a plain file name inside the module directory")
    return name


def _read_manifest(root: Path) -> _Manifest:
    """Read and validate ``root/manifest.json`` (structure only; files are checked by the caller)."""
    path = root / MANIFEST
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ModuleLoadError(f"{root}: not a saved module: it has no {MANIFEST}") from None
    except OSError as exc:
        raise ModuleLoadError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_json_object)
    except ValueError as exc:  # UnicodeDecodeError, JSONDecodeError, a duplicate key
        raise ModuleLoadError(f"{path}: not a tfexec manifest: not JSON ({exc})") from exc
    try:
        return _decode_manifest(path, data)
    except _Bad as exc:
        raise ModuleLoadError(f"{path}: malformed manifest: {exc}") from None


def _decode_manifest(path: Path, data: object) -> _Manifest:
    if _str(data, "format", "manifest") != FORMAT:
        raise _Bad(f"format is not {FORMAT!r}")
    version = _field(data, "version", "manifest")
    if version != FORMAT_VERSION:
        raise _Bad(f"format version {version!r} is not supported (this tfexec reads version {FORMAT_VERSION})")
    text = _plain_file(_str(data, "module", "manifest"), "module")
    entry = _opt_str(data, "entry", "manifest")
    files: dict[str, int] = {}
    for fname, rec in _dict(data, "files", "manifest").items():
        nbytes = _field(rec, "bytes", f"files[{fname!r}]")
        if not _is_count(nbytes):
            raise _Bad(f"files[{fname!r}].bytes must be a size, got {nbytes!r}")
        assert isinstance(nbytes, int)
        files[_plain_file(fname, "files")] = nbytes
    tensors: dict[str, _TensorRecord] = {}
    for name, rec in _dict(data, "tensors", "manifest").items():
        where = f"tensors[{name!r}]"
        fname = _str(rec, "file", where)
        if fname not in files:
            raise _Bad(f"{where}.file {fname!r} is not one of the files")
        dname = _str(rec, "dtype", where)
        try:
            dtype = DType.from_short(dname)
        except ValueError:
            raise _Bad(f"{where}: unknown dtype {dname!r}") from None
        sha = _str(rec, "sha256", where)
        if not re.fullmatch(r"[0-9a-f]{64}", sha):
            raise _Bad(f"{where}.sha256 is not a SHA-256 hex digest")
        tensors[name] = _TensorRecord(fname, dtype, _sizes(rec, "shape", where), sha)
    return _Manifest(path, text, entry, files, tensors)


# -- opening a saved module ---------------------------------------------------------------


def _open_saved(root: Path, manifest: _Manifest, verify: bool) -> _FileSource:
    """Open every weights file's header and check it against the manifest (no data read)."""
    files: dict[str, _WeightsFile] = {}
    for fname, nbytes in manifest.files.items():
        path = root / fname
        if not path.is_file():
            raise ModuleLoadError(f"{path}: weights file named by the manifest is missing")
        wf = _WeightsFile.open(path)
        if wf.size != nbytes:
            raise ModuleLoadError(
                f"{path}: the manifest records {nbytes} bytes but the file has {wf.size}"
                f"{' (truncated)' if wf.size < nbytes else ''}"
            )
        files[fname] = wf
    tensors: dict[str, tuple[_WeightsFile, str | None]] = {}
    for name, rec in manifest.tensors.items():
        wf = files[rec.file]
        e = wf.entries.get(name)
        if e is None:
            raise ModuleLoadError(f"{wf.label}: tensor {name}, which the manifest places in this file, is missing from it")
        if e.dtype != rec.dtype or e.shape != rec.shape:
            raise ModuleLoadError(
                f"{wf.label}: tensor {name} is {e.spelled()} in the file but {_spell(rec.dtype, rec.shape)} in the manifest"
            )
        tensors[name] = (wf, rec.sha256 if verify else None)
    for fname, wf in files.items():
        for name in wf.entries:
            if manifest.tensors.get(name) is None or manifest.tensors[name].file != fname:
                raise ModuleLoadError(f"{wf.label}: tensor {name} is in the file but the manifest does not place it there")
    return _FileSource(tensors, f"{root}")


def _text_function(name: str) -> Callable[..., object]:
    """``tfexec.text.<name>``, imported on first use (the text form is only needed to save/load)."""
    try:
        text: ModuleType | None = importlib.import_module("tfexec.text")
    except ModuleNotFoundError as exc:
        if exc.name != "tfexec.text":
            raise
        text = None
    fn: object = getattr(text, name, None)
    if not callable(fn):
        raise ModuleLoadError(f"saving and loading module text needs tfexec.text.{name}, which is not available")
    return fn


def _print_module(module: IRModule) -> str:
    out = _text_function("print_ir")(module)
    if not isinstance(out, str):
        raise ModuleLoadError(f"tfexec.text.print_ir returned {type(out).__name__}, not text")
    return out


def _parse_module(text: str, filename: str) -> IRModule:
    out = _text_function("parse")(text, filename=filename)
    if not isinstance(out, IRModule):
        raise ModuleLoadError(f"{filename}: tfexec.text.parse returned {type(out).__name__}, not an IRModule")
    return out


def _read_module_text(root: Path, manifest: _Manifest) -> IRModule:
    """The module tree parsed from its text; its entry must be the manifest's."""
    file = root / manifest.text
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModuleLoadError(f"{file}: module text named by the manifest is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModuleLoadError(f"{file}: cannot read the module text: {exc}") from exc
    module = _parse_module(text, str(file))
    if module.entry != manifest.entry:
        raise ModuleLoadError(f"{file}: the text's entry {module.entry!r} disagrees with the manifest's {manifest.entry!r}")
    return module


def load_module(path: "str | os.PathLike[str]", device: DeviceLike | None = None, *, verify: bool = True) -> LoadedModule:
    """Open the module directory ``path`` written by ``save_module``.

    The manifest, the module text and every safetensors header are validated now (cheap:
    no tensor data is read), so a truncated or mislabelled file fails here. Each constant's
    data is read when first used, at most once, checked against its SHA-256 (unless
    ``verify=False``) and placed on ``device`` (default CPU).
    """
    root = Path(path)
    if not root.is_dir():
        raise ModuleLoadError(f"{root}: not a saved module directory{' (it does not exist)' if not root.exists() else ''}")
    manifest = _read_manifest(root)
    source = _open_saved(root, manifest, verify)
    module = _read_module_text(root, manifest)
    declared = module.all_constants()
    dev = _as_device(device) or torch.device("cpu")
    cache = _Cache(source, dev)
    _check_headers(module, source, cache.dims)
    extra = sorted(set(manifest.tensors) - set(declared))
    if extra:
        raise ModuleLoadError(f"{root}: tensors {', '.join(extra)} are saved but the module declares no such constants")
    entry = module.functions[module.entry] if module.entry is not None else None
    return LoadedModule(module, cache, entry, name=root.name)


# -- saving -------------------------------------------------------------------------------


def _tensor_bytes(t: torch.Tensor) -> memoryview:
    """The raw bytes of a contiguous CPU tensor, without copying."""
    n = t.numel() * t.element_size()
    if n == 0:
        return memoryview(b"")
    return memoryview((ctypes.c_char * n).from_address(t.data_ptr())).cast("B")


def write_tensors(tensors: Mapping[str, torch.Tensor], path: "str | os.PathLike[str]", metadata: Mapping[str, str] | None = None) -> None:
    """Write named tensors to one safetensors file (CPU copies; no numpy, no pickle)."""
    cpu = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
    specs = {}
    for name, t in cpu.items():
        DType.from_torch(t.dtype)
        specs[name] = safetensors.TensorSpec(
            dtype=str(t.dtype).removeprefix("torch."), shape=list(t.shape), data_ptr=t.data_ptr(),
            data_len=t.numel() * t.element_size(),
        )
    try:
        safetensors.serialize_file(specs, Path(path), metadata=dict(metadata or {}))
    except (safetensors.SafetensorError, ValueError, TypeError, OSError) as exc:
        raise ModuleLoadError(f"{path}: cannot write tensors: {exc}") from exc


def _weights_for_saving(module: IRModule, weights: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The weights as contiguous CPU tensors, checked against the declared constants."""
    declared = module.all_constants()
    problems: list[str] = []
    for name, t in declared.items():
        if name not in weights:
            problems.append(f"constant {name}: declared {t}, missing from the weights")
    for name in weights:
        if name not in declared:
            value = weights[name]
            found = _spell_tensor(value) if isinstance(value, torch.Tensor) else type(value).__name__
            problems.append(f"weight {name} ({found}) is not a declared constant of the module")
    out: dict[str, torch.Tensor] = {}
    dims: dict[str, int] = {}
    for name, t in declared.items():
        if name not in weights:
            continue
        try:
            value = _check_declared(name, t, weights[name], "the weights", dims)
        except ModuleLoadError as exc:
            problems.append(str(exc))
            continue
        if value.device.type == "meta" or value.layout != torch.strided:
            problems.append(f"constant {name}: a {value.layout} tensor on {value.device} has no data to save")
            continue
        out[name] = value.detach().to("cpu").contiguous()
    if problems:
        more = f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""
        raise ModuleLoadError("cannot save the module: " + "; ".join(problems[:8]) + more)
    return out


def _shards(tensors: dict[str, torch.Tensor], shard_bytes: int) -> list[list[str]]:
    shards: list[list[str]] = [[]]
    size = 0
    for name, t in tensors.items():
        n = t.numel() * t.element_size()
        if shards[-1] and size + n > shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append(name)
        size += n
    return shards


def save_module(
    module: IRModule,
    weights: Mapping[str, torch.Tensor],
    path: "str | os.PathLike[str]",
    *,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
) -> Path:
    """Write ``module`` and its ``weights`` as the new directory ``path`` and return it.

    ``weights`` maps every declared constant's dotted name to a tensor (a PyTorch
    ``state_dict`` works as is); a missing, extra or mistyped weight is a ``ModuleLoadError``
    naming the constant, declared vs found. The directory holds the module text, the weights
    as safetensors file(s) of at most ``shard_bytes`` each (a larger single tensor gets a
    file of its own), and ``manifest.json`` with each tensor's dtype, shape, SHA-256 and
    file. It is written beside ``path`` and renamed into place, so a failed save leaves
    nothing behind. ``path`` must not exist, or be an empty directory.
    """
    if not isinstance(module, IRModule):
        raise TypeError(f"save_module needs an IRModule, got {type(module).__name__}")
    if not isinstance(weights, Mapping):
        raise TypeError(f"save_module needs weights as a Mapping[str, torch.Tensor], got {type(weights).__name__}")
    tensors = _weights_for_saving(module, weights)
    text = _print_module(module)
    target = Path(path)
    try:
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise ModuleLoadError(f"{target}: already exists; save_module writes a new directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    except OSError as exc:
        raise ModuleLoadError(f"{target}: cannot create the module directory: {exc.strerror or exc}") from exc
    try:
        manifest = _write_contents(tmp, module, text, tensors, shard_bytes)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        if target.exists():
            target.rmdir()
        os.replace(tmp, target)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ModuleLoadError(f"{target}: cannot write the module: {exc.strerror or exc}") from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _write_contents(
    tmp: Path, module: IRModule, text: str, tensors: dict[str, torch.Tensor], shard_bytes: int
) -> dict[str, object]:
    (tmp / MODULE_TEXT).write_text(text, encoding="utf-8")
    shards = _shards(tensors, shard_bytes)
    fnames = (
        ["weights.safetensors"] if len(shards) == 1
        else [f"weights-{i + 1:05d}-of-{len(shards):05d}.safetensors" for i in range(len(shards))]
    )
    files: dict[str, object] = {}
    records: dict[str, object] = {}
    for fname, names in zip(fnames, shards):
        specs = {}
        for name in names:
            t = tensors[name]
            dtype = DType.from_torch(t.dtype)
            specs[name] = safetensors.TensorSpec(
                dtype=str(t.dtype).removeprefix("torch."), shape=list(t.shape), data_ptr=t.data_ptr(),
                data_len=t.numel() * t.element_size(),
            )
            records[name] = {
                "file": fname, "dtype": dtype.value, "shape": list(t.shape),
                "sha256": hashlib.sha256(_tensor_bytes(t)).hexdigest(),
            }
        try:
            safetensors.serialize_file(specs, tmp / fname, metadata={"format": "pt", "writer": "tfexec"})
        except (safetensors.SafetensorError, ValueError, TypeError) as exc:
            raise ModuleLoadError(f"{tmp / fname}: cannot write the weights: {exc}") from exc
        files[fname] = {"bytes": (tmp / fname).stat().st_size}
    return {
        "format": FORMAT, "version": FORMAT_VERSION, "module": MODULE_TEXT, "entry": module.entry,
        "files": files, "tensors": records,
    }
