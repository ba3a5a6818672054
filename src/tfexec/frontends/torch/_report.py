"""What an import that fails reports: ``TorchImportError`` and the list of every problem.

Problems are collected, not raised one by one (``Problem``: where, which op, why); ``report``
renders them for the error, unsupported ops first, each with the user's source line.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from tfexec.errors import TfexecError


class TorchImportError(TfexecError):
    """A PyTorch program could not be imported: ``torch.export`` refused it, or some of its
    ops have no HIR translation (all of them are listed, each with its source line)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One node that could not be translated."""

    where: str
    op: str
    reason: str | None  # None: the op has no translation rule
    text: str = ""  # the user's source line

    def line(self) -> str:
        out = f"{self.where} {self.op}" + (f": {self.reason}" if self.reason else "")
        return out + (f"    # {self.text}" if self.text else "")


def report(problems: Sequence[Problem], before: Sequence[Problem] = ()) -> str:
    """The message of a ``TorchImportError`` listing every problem, unsupported ops first.

    ``before``: the problems of the graph as exported, when ``problems`` are those left after
    decomposing it (decomposition can lose source lines; the exported ops have them).
    """
    text = "cannot import the program: " + listing(problems)
    if before and sorted(p.line() for p in before) != sorted(p.line() for p in problems):
        text += "\n(after decomposing to core ATen; as exported, before decomposing: " + listing(before) + ")"
    return text


def listing(problems: Sequence[Problem]) -> str:
    missing = [p for p in problems if p.reason is None]
    failed = [p for p in problems if p.reason is not None]
    parts = []
    if missing:
        ops = sorted({p.op for p in missing})
        parts.append(
            f"{len(ops)} ATen op(s) have no HIR translation ({', '.join(ops)}), used at:\n"
            + "\n".join(f"  {p.line()}" for p in missing)
        )
    if failed:
        parts.append(f"{len(failed)} node(s) could not be translated:\n" + "\n".join(f"  {p.line()}" for p in failed))
    return "\nand ".join(parts)
