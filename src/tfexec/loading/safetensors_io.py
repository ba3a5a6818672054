"""Safetensors files read and written without mapping, pickling or numpy.

Headers are parsed and validated at open; tensor data is read with plain file I/O at the
header's offsets at first use and copied out, so a file truncated after opening fails with
``ModuleLoadError`` instead of SIGBUS.
"""

import ctypes
import hashlib
import io
import json
import os
import struct
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import safetensors
import torch

from tfexec.errors import ModuleLoadError
from tfexec.ir.dtypes import DType
from tfexec.loading.declared import _spell


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


