"""The manifest of a saved module directory: format, entry, files, and each tensor's dtype,
shape, SHA-256 and file.

Version 2 adds, for a tensor whose declared type carries a ``ShardLayout`` that splits it,
the SHA-256 of each block of that layout (``blocks``: the grid, and one digest per block in
row-major order), so a mesh participant that reads only its block can verify it; a module
with no such tensor is written as version 1, which it then equals. Version 1 manifests (no
``blocks``) are read too: a block is then verified by hashing the whole tensor as it is
streamed past (see ``FileSource.fetch_block``).
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path


from tfexec.errors import ModuleLoadError
from tfexec.ir.dtypes import DType
from tfexec.loading.safetensors_io import is_count, unique_keys_object

FORMAT = "tfexec-module"
FORMAT_VERSION = 2
"""The newest manifest version ``save_module`` writes: 2 when some tensor has block digests,
else 1 (the two are then the same), so older readers still read modules without them."""
READ_VERSIONS = (1, 2)
"""The manifest versions ``load_module`` reads."""
MANIFEST = "manifest.json"
MODULE_TEXT = "module.tf.py"
DEFAULT_SHARD_BYTES = 2 << 30

# -- the manifest -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BlockDigests:
    """The SHA-256 of each block of a tensor cut by ``grid`` (parts per axis), row-major."""

    grid: tuple[int, ...]
    sha256: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TensorRecord:
    """One tensor of the manifest: its file, dtype, shape, SHA-256 and (version 2) block digests."""

    file: str
    dtype: DType
    shape: tuple[int, ...]
    sha256: str
    blocks: BlockDigests | None = None


@dataclass(frozen=True, slots=True)
class Manifest:
    """A validated manifest: where it is, the module text file, the entry, the weights files
    (name to size in bytes) and the tensors."""

    version: int
    path: Path
    text: str
    entry: str | None
    files: dict[str, int]
    tensors: dict[str, TensorRecord]


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
    if not isinstance(value, list) or not all(is_count(v) for v in value):
        raise _Bad(f"{where}.{key} must be a list of sizes, got {value!r}")
    return tuple(value)


def _plain_file(name: str, where: str) -> str:
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise _Bad(f"{where}: {name!r} is not a plain file name inside the module directory")
    return name


def read_manifest(root: Path) -> Manifest:
    """Read and validate ``root/manifest.json`` (structure only; files are checked by the caller)."""
    path = root / MANIFEST
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ModuleLoadError(f"{root}: not a saved module: it has no {MANIFEST}") from None
    except OSError as exc:
        raise ModuleLoadError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=unique_keys_object)
    except ValueError as exc:  # UnicodeDecodeError, JSONDecodeError, a duplicate key
        raise ModuleLoadError(f"{path}: not a tfexec manifest: not JSON ({exc})") from exc
    try:
        return _decode_manifest(path, data)
    except _Bad as exc:
        raise ModuleLoadError(f"{path}: malformed manifest: {exc}") from None


def _decode_manifest(path: Path, data: object) -> Manifest:
    if _str(data, "format", "manifest") != FORMAT:
        raise _Bad(f"format is not {FORMAT!r}")
    version = _field(data, "version", "manifest")
    if not isinstance(version, int) or isinstance(version, bool) or version not in READ_VERSIONS:
        raise _Bad(
            f"format version {version!r} is not supported (this tfexec reads versions "
            f"{', '.join(map(str, READ_VERSIONS))})"
        )
    text = _plain_file(_str(data, "module", "manifest"), "module")
    entry = _opt_str(data, "entry", "manifest")
    files: dict[str, int] = {}
    for fname, rec in _dict(data, "files", "manifest").items():
        nbytes = _field(rec, "bytes", f"files[{fname!r}]")
        if not is_count(nbytes):
            raise _Bad(f"files[{fname!r}].bytes must be a size, got {nbytes!r}")
        assert isinstance(nbytes, int)
        files[_plain_file(fname, "files")] = nbytes
    tensors: dict[str, TensorRecord] = {}
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
        sha = _digest(_str(rec, "sha256", where), f"{where}.sha256")
        shape = _sizes(rec, "shape", where)
        blocks = None
        if version >= 2 and isinstance(rec, dict) and "blocks" in rec:
            blocks = _blocks(rec["blocks"], shape, f"{where}.blocks")
        tensors[name] = TensorRecord(fname, dtype, shape, sha, blocks)
    return Manifest(version, path, text, entry, files, tensors)


def _digest(value: str, where: str) -> str:
    if not re.fullmatch(r"[0-9a-f]{64}", value):
        raise _Bad(f"{where} is not a SHA-256 hex digest")
    return value


def _blocks(raw: object, shape: tuple[int, ...], where: str) -> BlockDigests:
    grid = _sizes(raw, "grid", where)
    if len(grid) != len(shape) or not all(0 < g and s % g == 0 for g, s in zip(grid, shape)):
        raise _Bad(f"{where}.grid {list(grid)} does not cut a tensor of shape {list(shape)} into equal blocks")
    digests = _field(raw, "sha256", where)
    count = 1
    for g in grid:
        count *= g
    if not isinstance(digests, list) or len(digests) != count or not all(isinstance(d, str) for d in digests):
        raise _Bad(f"{where}.sha256 must be a list of {count} SHA-256 hex digests, one per block")
    return BlockDigests(grid, tuple(_digest(d, f"{where}.sha256[{i}]") for i, d in enumerate(digests)))


