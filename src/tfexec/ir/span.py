"""Provenance: where a node was authored."""

from dataclasses import dataclass


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

    def location(self) -> str:
        """``file:line:col`` as compilers print it."""
        return f"{self.file}:{self.line}:{self.column}"
