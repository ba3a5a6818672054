"""Safetensors files read and written without mapping, pickling or numpy.

Headers are parsed and validated at open; tensor data is read with plain file I/O at the
header's offsets at first use and copied out, so a file truncated after opening fails with
``ModuleLoadError`` instead of SIGBUS.
"""

import contextlib
import ctypes
import hashlib
import io
import json
import os
import struct
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import product
from pathlib import Path

import safetensors
import torch

from tfexec.errors import ModuleLoadError
from tfexec.ir.dtypes import DType
from tfexec.loading.blocks import Bounds
from tfexec.loading.declared import spell
from tfexec.wording import a


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
class TensorEntry:
    """One tensor in a safetensors header: dtype code, shape and absolute byte range."""

    code: str
    shape: tuple[int, ...]
    start: int
    stop: int

    @property
    def dtype(self) -> DType | None:
        return _ST_DTYPES.get(self.code)

    def spelled(self) -> str:
        return spell(self.dtype or self.code, self.shape)


def _read_exact(f: io.FileIO, into: memoryview) -> int:
    """Fill ``into`` from ``f``; the number of bytes read (short only at end of file)."""
    got = 0
    while got < len(into):
        n = f.readinto(into[got:])
        if not n:
            break
        got += n
    return got


class WeightsFile:
    """A safetensors file whose header was validated at open; tensors are read on request."""

    def __init__(self, path: Path, label: str, size: int, entries: dict[str, TensorEntry]) -> None:
        self.path = path
        self.label = label
        self.size = size
        self.entries = entries

    @classmethod
    def open(cls, path: Path, label: str | None = None) -> "WeightsFile":
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
        dtype = self._readable(name)
        out = torch.empty(e.stop - e.start, dtype=torch.uint8)
        with self._opened(name) as f:
            self._read_at(f, name, e.start, _bytes_of(out))
        if sha256 is not None:
            self._check_digest(name, "its bytes", hashlib.sha256(_bytes_of(out)).hexdigest(), sha256)
        return self._typed(name, out, dtype, e.shape)

    def read_block(self, name: str, bounds: Bounds, sha256: str | None, whole_sha256: str | None) -> torch.Tensor:
        """The block ``bounds`` of tensor ``name``, read alone (its bytes only: one positioned
        read per contiguous run, straight into place): a contiguous CPU tensor. It is checked against ``sha256``, the block's own
        digest, when given; else, when ``whole_sha256`` is given, by hashing the whole
        tensor's bytes as they are streamed past (every byte is read, one chunk at a time)."""
        e = self.entries[name]
        dtype = self._readable(name)
        shape = tuple(stop - start for start, stop in bounds)
        itemsize = _ST_ITEMSIZE[e.code]
        count = 1
        for n in shape:
            count *= n
        out = torch.empty(count * itemsize, dtype=torch.uint8)
        if not count:
            return self._typed(name, out, dtype, shape)
        with self._opened(name) as f:
            offsets, run = _runs(e.shape, bounds, itemsize)
            view = _bytes_of(out)
            for i, offset in enumerate(offsets):  # each run straight into its place: only the block's bytes are read
                self._read_at(f, name, e.start + offset, view[i * run:(i + 1) * run])
            if sha256 is not None:
                self._check_digest(name, f"the bytes of its block {list(bounds)}", hashlib.sha256(_bytes_of(out)).hexdigest(), sha256)
            elif whole_sha256 is not None:
                self._check_digest(name, "its bytes", self._stream_digest(f, name, e), whole_sha256)
        return self._typed(name, out, dtype, shape)

    # -- the pieces of a read -------------------------------------------------------------

    def _readable(self, name: str) -> DType:
        e = self.entries[name]
        if e.dtype is None:
            known = ", ".join(_ST_DTYPES)
            raise ModuleLoadError(f"{self.label}: tensor {name} has dtype {e.code}, which HIR cannot hold (supported: {known})")
        if sys.byteorder != "little":
            raise ModuleLoadError(f"{self.label}: tensor {name}: reading safetensors on a big-endian host is not supported")
        return e.dtype

    @contextlib.contextmanager
    def _opened(self, name: str) -> Iterator[io.FileIO]:
        """The file, open for reading, refused when its size changed since the header was read."""
        try:
            with open(self.path, "rb", buffering=0) as f:
                size = os.fstat(f.fileno()).st_size
                if size != self.size:
                    raise ModuleLoadError(
                        f"{self.label}: tensor {name}: the file changed since it was loaded "
                        f"({self.size} bytes then, {size} now{'; truncated' if size < self.size else ''})"
                    )
                yield f
        except OSError as exc:
            raise ModuleLoadError(f"{self.label}: tensor {name}: cannot read: {exc.strerror or exc}") from exc

    def _read_at(self, f: io.FileIO, name: str, offset: int, into: memoryview) -> None:
        got = 0
        while got < len(into):
            n = _pread(f, into[got:], offset + got)
            if not n:
                break
            got += n
        if got != len(into):
            raise ModuleLoadError(f"{self.label}: tensor {name}: truncated: read {got} of {len(into)} bytes at byte {offset}")

    def _stream_digest(self, f: io.FileIO, name: str, e: TensorEntry) -> str:
        digest = hashlib.sha256()
        buffer = torch.empty(min(_CHUNK, e.stop - e.start), dtype=torch.uint8)
        view = _bytes_of(buffer)
        for offset in range(e.start, e.stop, _CHUNK):
            piece = view[: min(_CHUNK, e.stop - offset)]
            self._read_at(f, name, offset, piece)
            digest.update(piece)
        return digest.hexdigest()

    def _check_digest(self, name: str, what: str, digest: str, recorded: str) -> None:
        if digest != recorded:
            raise ModuleLoadError(
                f"{self.label}: tensor {name} is corrupt: {what} hash to SHA-256 {digest}, the manifest records {recorded}"
            )

    def _typed(self, name: str, raw: torch.Tensor, dtype: DType, shape: tuple[int, ...]) -> torch.Tensor:
        if dtype is DType.bool and raw.numel() and int(raw.max()) > 1:
            raise ModuleLoadError(f"{self.label}: tensor {name} is corrupt: a bool byte is neither 0 nor 1")
        return raw.view(dtype.torch).reshape(shape)


_CHUNK = 16 << 20  # bytes read at a time when a read goes past bytes it does not keep


def _pread(f: io.FileIO, into: memoryview, offset: int) -> int:
    """Read into ``into`` from byte ``offset`` of ``f`` (one positioned read; the bytes read).
    Every read of tensor data goes through here, so a test can count the bytes a read takes."""
    if hasattr(os, "preadv"):
        return os.preadv(f.fileno(), [into], offset)
    f.seek(offset)
    return f.readinto(into) or 0


def _bytes_of(t: torch.Tensor) -> memoryview:
    """A writable byte view of a contiguous CPU uint8 tensor."""
    n = t.numel()
    return memoryview((ctypes.c_char * n).from_address(t.data_ptr())).cast("B") if n else memoryview(bytearray())


def _runs(shape: tuple[int, ...], bounds: Bounds, itemsize: int) -> tuple[list[int], int]:
    """The byte offsets (from the tensor's first byte), in order, of the equal contiguous runs
    a block of a row-major tensor is made of, and the run length."""
    last = len(shape) - 1  # the last axis the block does not cover whole
    while last >= 0 and bounds[last] == (0, shape[last]):
        last -= 1
    strides = [itemsize] * len(shape)
    for axis in range(len(shape) - 2, -1, -1):
        strides[axis] = strides[axis + 1] * shape[axis + 1]
    if last < 0:
        total = itemsize
        for n in shape:
            total *= n
        return [0], total
    run = (bounds[last][1] - bounds[last][0]) * strides[last]
    base = bounds[last][0] * strides[last]
    offsets = [
        base + sum(i * strides[axis] for axis, i in enumerate(index))
        for index in product(*(range(a, b) for a, b in bounds[:last]))
    ]
    return offsets, run


def _parse_header(raw: bytes, label: str, data_start: int, size: int) -> dict[str, TensorEntry]:
    """The entries of a safetensors header; every structural fault is a ``ModuleLoadError``."""
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=unique_keys_object)
    except ValueError as exc:  # UnicodeDecodeError, JSONDecodeError, a duplicate key
        raise ModuleLoadError(f"{label}: not a safetensors file: its header is not JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise ModuleLoadError(f"{label}: not a safetensors file: its header is {a(type(header).__name__)}, not an object")
    entries: dict[str, TensorEntry] = {}
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
        if not isinstance(shape, list) or not all(is_count(s) for s in shape):
            raise ModuleLoadError(f"{where}: its shape {shape!r} is not a list of sizes")
        if not isinstance(offsets, list) or len(offsets) != 2 or not all(is_count(o) for o in offsets) or offsets[0] > offsets[1]:
            raise ModuleLoadError(f"{where}: its data_offsets {offsets!r} are not a [begin, end] byte range")
        numel = 1
        for s in shape:
            numel *= s
        if offsets[1] - offsets[0] != numel * _ST_ITEMSIZE[code]:
            raise ModuleLoadError(
                f"{where}: its data_offsets {offsets} hold {offsets[1] - offsets[0]} bytes, "
                f"but {spell(_ST_DTYPES.get(code) or code, tuple(shape))} needs {numel * _ST_ITEMSIZE[code]}"
            )
        entries[name] = TensorEntry(code, tuple(shape), data_start + offsets[0], data_start + offsets[1])
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


def unique_keys_object(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object that refuses duplicate keys (a second entry must not shadow the first)."""
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# -- saving -------------------------------------------------------------------------------


def tensor_bytes(t: torch.Tensor) -> memoryview:
    """The raw bytes of a contiguous CPU tensor, without copying."""
    n = t.numel() * t.element_size()
    if n == 0:
        return memoryview(b"")
    return memoryview((ctypes.c_char * n).from_address(t.data_ptr())).cast("B")


def write_tensors(tensors: Mapping[str, torch.Tensor], path: "str | os.PathLike[str]", metadata: Mapping[str, str] | None = None) -> None:
    """Write named tensors to one safetensors file (CPU copies; no numpy, no pickle)."""
    cpu = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
    if not cpu:  # safetensors 0.8 writes a header that is not JSON for no tensors: write it here
        _write_empty(Path(path), metadata)
        return
    specs = {}
    for name, t in cpu.items():
        DType.from_torch(t.dtype)
        specs[name] = safetensors.TensorSpec(
            dtype=str(t.dtype).removeprefix("torch."), shape=list(t.shape), data_ptr=t.data_ptr(),
            data_len=t.numel() * t.element_size(),
        )
    try:
        # No metadata is None, never {}: safetensors 0.8 writes an unreadable header for no
        # tensors with an empty metadata dict ('{},"__metadata__":{}}').
        safetensors.serialize_file(specs, Path(path), metadata=dict(metadata) if metadata else None)
    except (safetensors.SafetensorError, ValueError, TypeError, OSError) as exc:
        raise ModuleLoadError(f"{path}: cannot write tensors: {exc}") from exc


def _write_empty(path: Path, metadata: Mapping[str, str] | None) -> None:
    """A safetensors file of no tensors: the 8-byte header length, then the JSON header (only
    ``__metadata__``, when given) padded with spaces to a multiple of 8 bytes, as safetensors pads."""
    header = json.dumps({"__metadata__": dict(metadata)} if metadata else {}, separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)
    try:
        path.write_bytes(struct.pack("<Q", len(header)) + header)
    except OSError as exc:
        raise ModuleLoadError(f"{path}: cannot write tensors: {exc.strerror or exc}") from exc
