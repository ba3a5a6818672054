"""The dump format: per-node values in a safetensors file plus a small JSON index.

``NAME.safetensors`` holds one tensor per node value, named by its node key (a
tuple-valued node's fields as ``KEY.0``, ``KEY.1``, …). ``NAME.index.json`` lists, in
topological order, each tensor's key, the node key it belongs to, its op, its source
location, its shape and its dtype. Any runtime can write the pair; tfexec reads it back
with ``read_dump``. The format is documented, with its versioning rule, in
``docs/dump-format.md``.
"""

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from tfexec.errors import TfexecError
from tfexec.ir.dtypes import DType

FORMAT = "tfexec-dump"
VERSION = 1
"""Bumped when a reader of the previous version would misread a file; fields may be added
to the index without a bump (readers ignore fields they do not know)."""


class DumpError(TfexecError):
    """A dump or its index cannot be read, or they disagree with each other."""


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One tensor of a dump as its index describes it."""

    key: str
    """The tensor's name in the safetensors file: a node key, or ``KEY.i`` for a tuple field."""
    node: str
    """The node key this tensor belongs to (``key`` itself for a tensor-valued node)."""
    op: str
    location: str
    """``file:line:col`` of the node's source, or ``""`` when it has none."""
    shape: tuple[int, ...]
    dtype: str
    """The text-format spelling: ``f32``, ``bf16``, ``i64``, ``b1``, …"""

    def as_json(self) -> dict[str, object]:
        return {
            "key": self.key, "node": self.node, "op": self.op, "location": self.location,
            "shape": list(self.shape), "dtype": self.dtype,
        }


@dataclass(frozen=True)
class Dump:
    """A dump read back: its tensors in index order (then any the index does not list),
    the index entries by key (empty without an index) and the program's name, if recorded."""

    path: Path
    tensors: dict[str, torch.Tensor]
    entries: dict[str, IndexEntry]
    program: str | None = None


def index_path(path: "str | os.PathLike[str]") -> Path:
    """Where the index of the dump at ``path`` lives: ``a.safetensors`` -> ``a.index.json``."""
    p = Path(path)
    return p.with_name(p.name.removesuffix(".safetensors") + ".index.json")


def entry_for(key: str, node: str, tensor: torch.Tensor, op: str = "", location: str = "") -> IndexEntry:
    """The index entry describing ``tensor`` stored under ``key``."""
    return IndexEntry(key, node, op, location, tuple(int(d) for d in tensor.shape), DType.from_torch(tensor.dtype).short)


def write_dump(
    path: "str | os.PathLike[str]", tensors: Mapping[str, torch.Tensor], entries: Sequence[IndexEntry],
    program: str | None = None,
) -> Path:
    """Write ``tensors`` to ``path`` and the index (``entries``, in order) next to it; returns the index path."""
    from tfexec.loading import write_tensors
    from tfexec.loading.atomic import replacing, write_text

    listed = {e.key for e in entries}
    unlisted = [k for k in tensors if k not in listed]
    missing = [e.key for e in entries if e.key not in tensors]
    if unlisted or missing:
        raise DumpError(f"{path}: the index must list exactly the tensors written; unlisted: {unlisted[:3]}, missing: {missing[:3]}")
    index = index_path(path)
    try:
        # Each file whole or not at all (a temporary file renamed over it): an interrupted dump
        # never leaves a half file.
        with replacing(path) as tmp:
            write_tensors(tensors, tmp, metadata={"format": FORMAT, "version": str(VERSION), "index": index.name})
        document = {
            "format": FORMAT, "version": VERSION, "program": program, "tensors": Path(path).name,
            "entries": [e.as_json() for e in entries],
        }
        write_text(index, json.dumps(document, indent=1) + "\n")
    except TfexecError as exc:
        raise DumpError(str(exc)) from exc
    except OSError as exc:
        raise DumpError(f"{index}: cannot write the dump index: {exc}") from exc
    return index


def read_dump(path: "str | os.PathLike[str]") -> Dump:
    """Read a dump: ``a.safetensors`` (with ``a.index.json`` when it exists) or the index itself.

    Without an index the tensors come in the file's (sorted) order, with no op or location."""
    p = Path(path)
    index: Path | None = p if p.name.endswith(".json") else index_path(p)
    document: dict[str, object] | None = None
    if index is not None and index.is_file():
        document = _read_index(index)
        if p == index:
            p = index.with_name(str(document.get("tensors") or index.name.removesuffix(".index.json") + ".safetensors"))
    elif p == index:
        raise DumpError(f"{p}: no such index file")
    tensors = _read_tensors(p)
    entries: dict[str, IndexEntry] = {}
    if document is not None:
        assert index is not None
        for entry in _entries(index, document):
            if entry.key not in tensors:
                raise DumpError(f"{index}: entry {entry.key!r} has no tensor in {p}")
            _check_entry(index, entry, tensors[entry.key])
            entries[entry.key] = entry
    ordered = {k: tensors[k] for k in entries} | {k: t for k, t in tensors.items() if k not in entries}
    program = document.get("program") if document is not None else None
    return Dump(p, ordered, entries, program if isinstance(program, str) else None)


def _read_tensors(path: Path) -> dict[str, torch.Tensor]:
    from safetensors import SafetensorError, safe_open

    from tfexec.loading.sniff import not_safetensors

    if path.is_dir():
        raise DumpError(f"{path}: is a directory; a dump is a .safetensors file (or its .index.json)")
    if not path.is_file() and not path.exists():
        raise DumpError(f"{path}: cannot read dump: no such file")
    wrong = not_safetensors(path)
    if wrong is not None:
        raise DumpError(f"cannot read dump: {wrong}")
    try:
        with safe_open(str(path), framework="pt") as f:
            return {k: f.get_tensor(k) for k in f.keys()}
    except (OSError, SafetensorError, ValueError, TypeError) as exc:
        raise DumpError(f"{path}: cannot read dump: {exc}") from None


def _read_index(index: Path) -> dict[str, object]:
    try:
        document = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DumpError(f"{index}: cannot read the dump index: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise DumpError(f"{index}: not a tfexec dump index (expected \"format\": \"{FORMAT}\")")
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise DumpError(f"{index}: \"version\" must be a positive integer, got {version!r}")
    if version > VERSION:
        raise DumpError(f"{index}: dump format version {version} is newer than this tfexec reads ({VERSION}); upgrade tfexec")
    return document


def _entries(index: Path, document: dict[str, object]) -> list[IndexEntry]:
    raw = document.get("entries")
    if not isinstance(raw, list):
        raise DumpError(f"{index}: \"entries\" must be a list")
    out: list[IndexEntry] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise DumpError(f"{index}: entry {i} must be an object with a string \"key\"")
        shape = item.get("shape")
        if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise DumpError(f"{index}: entry {item['key']!r}: \"shape\" must be a list of non-negative integers")
        dtype = item.get("dtype")
        if not isinstance(dtype, str) or dtype not in {d.short for d in DType}:
            names = ", ".join(d.short for d in DType)
            raise DumpError(f"{index}: entry {item['key']!r}: \"dtype\" must be one of {names}, got {dtype!r}")
        text = {f: item.get(f, "") for f in ("node", "op", "location")}
        if not all(isinstance(v, str) for v in text.values()):
            raise DumpError(f"{index}: entry {item['key']!r}: \"node\", \"op\" and \"location\" must be strings")
        out.append(IndexEntry(
            item["key"], str(text["node"]) or item["key"], str(text["op"]), str(text["location"]), tuple(shape), dtype,
        ))
    return out


def _check_entry(index: Path, entry: IndexEntry, tensor: torch.Tensor) -> None:
    try:
        found = entry_for(entry.key, entry.node, tensor)
    except TypeError as exc:
        raise DumpError(f"{index}: entry {entry.key!r}: {exc}") from None
    if (found.shape, found.dtype) != (entry.shape, entry.dtype):
        raise DumpError(
            f"{index}: entry {entry.key!r} says {entry.dtype}{list(entry.shape)} but the tensor is "
            f"{found.dtype}{list(found.shape)}"
        )
