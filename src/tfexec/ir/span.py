"""Provenance: where a node was authored."""

import os
import sys
from dataclasses import dataclass

from tfexec.errors import IRConstructionError


@dataclass(frozen=True, slots=True)
class Span:
    """The authored physical location of a node (1-based line and column), its binding and op text.

    ``binding`` is the name the node was assigned to (None for an unnamed sub-expression);
    ``op`` is the authored expression text, e.g. ``matmul(x, w1)``.
    """

    file: str
    line: int
    column: int
    binding: str | None = None
    op: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.file, str):
            raise IRConstructionError(f"Span.file must be a str, got {type(self.file).__name__} {self.file!r}")
        for name in ("line", "column"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise IRConstructionError(f"Span.{name} must be a non-negative int (1-based), got {value!r}")
        if self.binding is not None and not isinstance(self.binding, str):
            raise IRConstructionError(f"Span.binding must be a str or None, got {self.binding!r}")
        if not isinstance(self.op, str):
            raise IRConstructionError(f"Span.op must be a str, got {self.op!r}")

    def location(self) -> str:
        """``file:line:col`` as compilers print it."""
        return f"{self.file}:{self.line}:{self.column}"


def display_location(location: str) -> str:
    """``file:line:col`` with the file shortened for a table column: relative to the deepest
    of the working directory and the ``sys.path`` entries that holds it
    (``transformers/models/llama/modeling_llama.py:64:9`` for a model in site-packages);
    a relative path or a name such as ``<string>`` as it is."""
    parts = location.rsplit(":", 2)
    if len(parts) != 3 or not (parts[1].isdigit() and parts[2].isdigit()) or not os.path.isabs(parts[0]):
        return location
    path = parts[0]
    roots = {r.rstrip(os.sep) for r in (os.getcwd(), *sys.path) if r and os.path.isabs(r)}
    for root in sorted((r for r in roots if r), key=len, reverse=True):  # "/" itself is no root
        if path.startswith(root + os.sep):
            return f"{path[len(root) + 1:]}:{parts[1]}:{parts[2]}"
    return location
