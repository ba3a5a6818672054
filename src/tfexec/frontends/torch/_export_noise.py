"""torch.export's failures said in one line: a branch on a tensor's value is reported at the
model's own source line instead of torch's multi-line ``GuardOnDataDependentSymNode`` text
(the partial FX graph torch prints while it fails is dropped by ``_api._export``)."""

import logging
import os
import traceback
from pathlib import Path

import torch

_STDLIB = os.path.dirname(os.path.dirname(os.path.abspath(logging.__file__)))
_LIBRARIES = (
    os.path.dirname(os.path.abspath(str(torch.__file__))),
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),  # tfexec itself
)


def data_dependent_branch(exc: BaseException) -> str | None:
    """For torch.export's refusal of a branch on a tensor's value, one line naming the model's
    source line (``dd.py:7: `if y.sum() > 0:` branches on ...``); None for any other failure."""
    if not any(cls.__name__ == "GuardOnDataDependentSymNode" for cls in type(exc).__mro__):
        return None
    frame = _user_frame(exc)
    where = "the model" if frame is None else f"{_shown(frame.filename)}:{frame.lineno}: `{(frame.line or '').strip()}`"
    return (
        f"{where} branches on a tensor's value (data-dependent control flow), which torch.export cannot trace: "
        "make the condition depend on shapes only, or write the branch with torch.cond (--debug shows torch's text)"
    )


def _user_frame(exc: BaseException) -> traceback.FrameSummary | None:
    """The innermost frame of the traceback that is the user's code (not torch, Python or tfexec)."""
    found: traceback.FrameSummary | None = None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for frame in traceback.extract_tb(current.__traceback__):
            path = os.path.abspath(frame.filename)
            if frame.filename.startswith("<") or _is_library(path):
                continue
            found = frame
        current = current.__cause__ or current.__context__
    return found


def _is_library(path: str) -> bool:
    """torch, tfexec or the standard library (a model installed in site-packages is the user's)."""
    if any(path.startswith(lib + os.sep) for lib in _LIBRARIES):
        return True
    return path.startswith(_STDLIB + os.sep) and "-packages" + os.sep not in path


def _shown(filename: str) -> str:
    path = Path(filename)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


__all__ = ["data_dependent_branch"]
