"""Source text of the HIR text form: physical positions, authored segments, ``ParseError``s.

``ast`` reports columns as 0-based UTF-8 byte offsets; everything here converts them to
the 1-based character columns compilers print, shifted by where the text came from (a
``@script`` function sits at some line and indentation of its file). Segments are cut from
lines split once, so a 10⁵-line program costs linear time (``ast.get_source_segment``
re-splits the whole text on every call).
"""

import ast
import re

from tfexec.errors import ParseError
from tfexec.ir.span import Span

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """``text`` split at the line breaks Python's tokenizer counts (not form feeds etc.)."""
    return _LINE_BREAK.split(text)


class Source:
    """One parsed text: its lines, its file name and its offset in that file.

    ``line_offset`` and ``col_offset`` shift reported positions (a ``@script`` function
    that was dedented by ``col_offset`` characters and starts at line ``line_offset + 1``);
    ``display`` holds the lines as they are in the file, for the caret line of errors.
    """

    def __init__(
        self, text: str, filename: str, *, line_offset: int = 0, col_offset: int = 0, display: list[str] | None = None
    ) -> None:
        self.text = text
        self.filename = filename
        self.lines = split_lines(text)
        self.line_offset = line_offset
        self.col_offset = col_offset
        self.display = display if display is not None else self.lines

    # -- positions --------------------------------------------------------------------

    def char_col(self, lineno: int, byte_col: int) -> int:
        """The 0-based character column of a 0-based UTF-8 byte offset on line ``lineno``."""
        if not 1 <= lineno <= len(self.lines):
            return byte_col
        line = self.lines[lineno - 1]
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def position(self, node: ast.AST) -> tuple[int, int]:
        """The reported ``(line, column)`` of ``node``, both 1-based."""
        lineno: int = getattr(node, "lineno", 1)
        col: int = getattr(node, "col_offset", 0)
        return lineno + self.line_offset, self.char_col(lineno, col) + 1 + self.col_offset

    def segment(self, node: ast.AST) -> str:
        """The authored text of ``node`` (whitespace collapsed when it spans several lines)."""
        lineno: int | None = getattr(node, "lineno", None)
        end_lineno: int | None = getattr(node, "end_lineno", None)
        col: int | None = getattr(node, "col_offset", None)
        end_col: int | None = getattr(node, "end_col_offset", None)
        if lineno is None or end_lineno is None or col is None or end_col is None:
            return ""
        if not (1 <= lineno <= end_lineno <= len(self.lines)):
            return ""
        if lineno == end_lineno:
            line = self.lines[lineno - 1]
            if line.isascii():
                return line[col:end_col]
            return line.encode("utf-8")[col:end_col].decode("utf-8", "replace")
        parts = [self.lines[lineno - 1].encode("utf-8")[col:].decode("utf-8", "replace")]
        parts.extend(self.lines[lineno : end_lineno - 1])
        parts.append(self.lines[end_lineno - 1].encode("utf-8")[:end_col].decode("utf-8", "replace"))
        return " ".join(" ".join(parts).split())

    def span(self, node: ast.AST, binding: str | None = None, op: str | None = None) -> Span:
        """The ``Span`` of a node made from ``node``: its position, ``binding`` and op text."""
        line, col = self.position(node)
        return Span(self.filename, line, col, binding, self.segment(node) if op is None else op)

    # -- errors -------------------------------------------------------------------------

    def error(self, node: ast.AST | None, message: str) -> ParseError:
        """A ``ParseError``: ``file:line:col: message``, then the source line and a caret."""
        if node is None or not hasattr(node, "lineno"):
            return self.error_at(1 + self.line_offset, 1 + self.col_offset, message)
        line, col = self.position(node)
        width = 1
        lineno, end_lineno = getattr(node, "lineno", 0), getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        if end_lineno == lineno and end_col is not None:
            width = max(1, self.char_col(lineno, end_col) + 1 + self.col_offset - col)
        return self.error_at(line, col, message, width)

    def error_at(self, line: int, col: int, message: str, width: int = 1) -> ParseError:
        """A ``ParseError`` at a reported (1-based) position."""
        text = f"{self.filename}:{line}:{col}: {message}"
        index = line - 1 - self.line_offset
        if 0 <= index < len(self.display):
            shown = self.display[index].rstrip()
            if shown:
                pad = "".join(c if c == "\t" else " " for c in shown[: max(0, col - 1)])
                caret = "^" + "~" * max(0, min(width, max(1, len(shown) - col + 1)) - 1)
                text += f"\n    {shown}\n    {pad}{caret}"
        return ParseError(text)


def parse_python(source: Source) -> ast.Module:
    """``ast.parse`` of the text (never executed); a syntax error becomes a ``ParseError``."""
    try:
        return ast.parse(source.text, filename=source.filename, mode="exec", type_comments=False)
    except SyntaxError as exc:
        lineno = exc.lineno or 1
        # SyntaxError.offset is a 1-based character offset on the line.
        col = (exc.offset or 1) + source.col_offset
        msg = exc.msg or "invalid syntax"
        return _raise(source.error_at(lineno + source.line_offset, col, f"invalid syntax: {msg}"))
    except (ValueError, RecursionError, MemoryError) as exc:
        reason = "the text is nested too deeply" if not isinstance(exc, ValueError) else str(exc)
        return _raise(source.error_at(1 + source.line_offset, 1 + source.col_offset, f"cannot parse the text: {reason}"))


def _raise(err: ParseError) -> ast.Module:
    raise err


__all__ = ["Source", "parse_python", "split_lines"]
