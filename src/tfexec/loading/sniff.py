"""What a file given as a safetensors file really is: its header read without loading a tensor.

Commands that take a safetensors file (``--inputs``, dumps) ask ``not_safetensors`` first, so a
text file or a device gets "x.txt is not a safetensors file (its first 8 bytes ...)" instead of
the safetensors library's own wording ("header too large", "No such device (os error 19)").
``safetensors_metadata`` lets the output checks (``tfexec.cli.outputs``) recognise a file a
tfexec command wrote by the ``__metadata__`` it carries.
"""

import json
import os
import stat
import struct
from pathlib import Path

OUTPUT_KEY = "tfexec.output"
"""The ``__metadata__`` key that marks a safetensors file a tfexec command wrote (its value
names the kind: ``outputs`` for run and mesh, ``reduce`` for reduce's inputs)."""

_MAX_HEADER_BYTES = 100_000_000
"""The largest header the safetensors library accepts."""


def _header(path: Path) -> tuple[dict[str, object] | None, str]:
    """The parsed header of ``path``, or ``None`` and why it is not a safetensors file."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None, "no such file"
    except OSError as exc:
        return None, f"cannot read it: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return None, "it is a directory"
    if not stat.S_ISREG(info.st_mode):
        return None, "it is not a regular file (a device or a pipe)"
    size = info.st_size
    if size == 0:
        return None, "it is empty"
    if size < 8:
        return None, f"it has only {size} byte(s); a safetensors file starts with an 8-byte header length"
    try:
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            if n > _MAX_HEADER_BYTES or 8 + n > size:
                return None, f"its first 8 bytes give a header of {n} bytes, but the file has {size} bytes"
            raw = f.read(n)
    except OSError as exc:
        return None, f"cannot read it: {exc.strerror or exc}"
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, "its header is not JSON"
    if not isinstance(header, dict):
        return None, f"its header is a JSON {type(header).__name__}, not an object"
    return header, ""


def not_safetensors(path: "str | os.PathLike[str]") -> str | None:
    """``None`` when ``path`` starts like a safetensors file; otherwise one line saying what
    it is not and why (``"x.txt is not a safetensors file (it is empty)"``)."""
    header, why = _header(Path(path))
    if header is not None:
        return None
    if why == "no such file":
        return f"{path}: no such file"
    return f"{path} is not a safetensors file ({why})"


def safetensors_metadata(path: "str | os.PathLike[str]") -> dict[str, str] | None:
    """The ``__metadata__`` of a safetensors file (empty when it has none), or ``None`` when
    ``path`` is not a safetensors file."""
    header, _ = _header(Path(path))
    if header is None:
        return None
    meta = header.get("__metadata__")
    if not isinstance(meta, dict):
        return {}
    return {str(k): str(v) for k, v in meta.items()}


__all__ = ["OUTPUT_KEY", "not_safetensors", "safetensors_metadata"]
