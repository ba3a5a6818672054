"""Files written whole or not at all: ``replacing(path)`` gives a temporary name in the same
directory and renames it over ``path`` (``os.replace``) only once the write has finished, so an
interrupted or failed write never leaves a half file where the output (or what it replaces) was."""

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def replacing(path: "str | os.PathLike[str]") -> Iterator[Path]:
    """Yield a fresh temporary path next to ``path``; on a normal exit it becomes ``path``
    (atomically, on one file system), on an exception it is removed and ``path`` is untouched."""
    final = Path(path)
    fd, name = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tfexec-partial", dir=final.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        # mkstemp (and some writers) make the file private; an output gets the usual mode
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: "str | os.PathLike[str]", text: str) -> None:
    """``Path(path).write_text(text)`` (UTF-8), atomically."""
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


__all__ = ["replacing", "write_text"]
