"""Printed text compared as a reader compares it: the words equal, the numbers within a tolerance.

A page or a report that shows float values shows the digits one machine's kernels chose;
another CPU (AVX2 rather than AVX-512, another BLAS blocking) may print other last digits.
``text_mismatch`` is the one rule the docs check and the tests use for such text: every
character outside the numbers must be equal (runs of spaces next to a number, which torch
pads for alignment, may differ in length), integers must be equal, and two float numbers
agree when ``|got - shown| <= atol + rtol * |shown|`` plus half a unit of each one's last
printed digit (a printed number stands for every value that rounds to it). NaN agrees
with NaN, an infinity only with the same infinity.
"""

import math
import re
from dataclasses import dataclass

from tfexec.compare._tolerance import DEFAULT_TOLERANCES, Tolerance
from tfexec.ir.dtypes import DType

PRINTED = DEFAULT_TOLERANCES[DType.float32]
"""The default tolerance of printed values: float32's (values are printed from f32 tensors)."""

_CORE = r"[-+]?(?:(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|inf|nan)"
NUMBER = re.compile(rf"(?<![\w.]){_CORE}(?!\w|\.\d)")
"""A number in text: not part of a word (``f32``, ``sha256``), a sentence's full stop not included."""


@dataclass(frozen=True, slots=True)
class _Line:
    """One line of the text shown: the numbers it shows, and its words (the text between the
    numbers, padding dropped) or, for a line with a wildcard, a regex with the numbers free."""

    numbers: tuple[str, ...]
    words: tuple[str, ...] = ()
    regex: "re.Pattern[str] | None" = None

    def found(self, line: str) -> tuple[str, ...] | None:
        """The numbers ``line`` has where this line shows numbers, or None when its words differ."""
        if self.regex is not None:
            match = self.regex.fullmatch(line)
            return None if match is None else match.groups()
        words, numbers = _split(line)
        return numbers if words == self.words else None


def text_mismatch(
    shown: str, got: str, tolerance: Tolerance = PRINTED, *, wildcard: str | None = None, within: bool = False
) -> str | None:
    """Why ``got`` is not ``shown`` up to its numbers (None when it is): the first line whose
    words differ, or the first number beyond ``tolerance``. ``wildcard`` (e.g. ``"..."``) in
    ``shown`` stands for any text within a line; ``within`` looks for ``shown`` as whole lines
    inside ``got``."""
    patterns = [_pattern(line, wildcard) for line in shown.split("\n")]
    got_lines = got.split("\n")
    if not within:
        if len(got_lines) != len(patterns):
            return _word_difference(shown, got, within)
        words_equal, reason = _lines_reason(patterns, got_lines, 0, tolerance)
        return reason if words_equal else _word_difference(shown, got, within)
    numbers_reason = None
    for start in range(len(got_lines) - len(patterns) + 1):
        words_equal, reason = _lines_reason(patterns, got_lines[start : start + len(patterns)], start, tolerance)
        if words_equal and reason is None:
            return None
        if words_equal and numbers_reason is None:
            numbers_reason = reason
    return numbers_reason or _word_difference(shown, got, within)


def _lines_reason(
    patterns: "list[_Line]", lines: list[str], first: int, tolerance: Tolerance
) -> tuple[bool, str | None]:
    """Whether ``lines`` have the words of ``patterns``, and the first number beyond ``tolerance``."""
    found = []
    for pattern, line in zip(patterns, lines):
        numbers = pattern.found(line)
        if numbers is None:
            return False, None
        found.append(numbers)
    for n, (pattern, numbers) in enumerate(zip(patterns, found), start=first + 1):
        for want, have in zip(pattern.numbers, numbers):
            reason = number_mismatch(want, have, tolerance)
            if reason is not None:
                return True, f"line {n}: {reason}"
    return True, None


def number_mismatch(shown: str, got: str, tolerance: Tolerance = PRINTED) -> str | None:
    """Why the printed number ``got`` is not ``shown`` (None when it agrees): integers exactly,
    floats within ``tolerance`` plus half a unit of each one's last printed digit."""
    if _is_integer(shown) and _is_integer(got):
        return None if int(shown) == int(got) else f"expected {shown}, got {got}"
    want, have = float(shown), float(got)
    if math.isnan(want) or math.isnan(have) or math.isinf(want) or math.isinf(have):
        same = (math.isnan(want) and math.isnan(have)) or want == have
        return None if same else f"expected {shown}, got {got}"
    allowed = tolerance.atol + tolerance.rtol * abs(want) + (_unit(shown) + _unit(got)) / 2
    if abs(have - want) <= allowed:
        return None
    return f"expected {shown}, got {got} (|Δ| {abs(have - want):.3g} beyond {tolerance} and the printed digits)"


def _pattern(shown: str, wildcard: str | None) -> _Line:
    """The line ``shown`` split into words and numbers, or with a wildcard, a regex matching it
    with each number and wildcard free."""
    if not wildcard or wildcard not in shown:
        words, shown_numbers = _split(shown)
        return _Line(shown_numbers, words)
    pieces = [(m.start(), m.end(), "number") for m in NUMBER.finditer(shown)]
    pieces += [(m.start(), m.end(), "any") for m in re.finditer(re.escape(wildcard), shown)]
    parts: list[str] = []
    numbers: list[str] = []
    at, after_free = 0, False
    for start, end, kind in sorted(pieces):
        if start < at:
            continue  # a number inside a wildcard's dots
        parts.append(_literal(shown[at:start], after_free, True))
        if kind == "number":
            parts.append(f"({_CORE})")
            numbers.append(shown[start:end])
        else:
            parts.append(r"[^\n]*?")
        at, after_free = end, True
    parts.append(_literal(shown[at:], after_free, False))
    return _Line(tuple(numbers), regex=re.compile("".join(parts)))


def _split(line: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words of ``line`` (the text before, between and after its numbers, spaces next to a
    number dropped as alignment padding, other runs of spaces made one) and its numbers."""
    words, numbers, at = [], [], 0
    for match in NUMBER.finditer(line):
        words.append(line[at : match.start()])
        numbers.append(match.group())
        at = match.end()
    words.append(line[at:])
    last = len(words) - 1
    for i, text in enumerate(words):
        if 0 < i < last and not text.strip(" \t"):
            words[i] = " "  # only spaces between two numbers: they stay two numbers
            continue
        if i > 0:
            text = text.lstrip(" \t")  # after a number
        if i < last:
            text = text.rstrip(" \t")  # before a number
        words[i] = re.sub(r"[ \t]+", " ", text)
    return tuple(words), tuple(numbers)


def _literal(text: str, after_free: bool, before_free: bool) -> str:
    """``text`` as a regex. Next to a number, spaces are alignment padding: absent or of any
    length; elsewhere a run of spaces matches a run of any length (at least one)."""
    runs = [run for run in re.split(r"([ \t]+)", text) if run]
    out = [r"[ \t]+" if run.isspace() else re.escape(run) for run in runs]
    if runs and all(run.isspace() for run in runs) and after_free and before_free:
        return r"[ \t]+"  # between two numbers: they stay two numbers
    if after_free:
        if runs and runs[0].isspace():
            out[0] = r"[ \t]*"
        else:
            out.insert(0, r"[ \t]*")
    if before_free:
        if runs and runs[-1].isspace():
            out[-1] = r"[ \t]*"
        else:
            out.append(r"[ \t]*")
    return "".join(out)


def _word_difference(shown: str, got: str, within: bool) -> str:
    """The first line of ``shown`` whose words (numbers aside) are not in ``got``."""
    def words(line: str) -> str:
        return " ".join(NUMBER.sub("#", line).split())

    got_lines = got.splitlines()
    got_words = [words(line) for line in got_lines]
    for n, line in enumerate(shown.splitlines(), start=1):
        if within:
            if words(line) not in got_words:
                return f"line {n} of the text shown is not in the text got: {line!r}"
        elif n > len(got_lines) or words(line) != got_words[n - 1]:
            found = got_lines[n - 1] if n <= len(got_lines) else "(no such line)"
            return f"line {n}: expected {line!r}, got {found!r}"
    if not within and len(got_lines) > len(shown.splitlines()):
        return f"line {len(shown.splitlines()) + 1}: expected the end of the text, got {got_lines[len(shown.splitlines())]!r}"
    return "the text differs in its spacing or line breaks"


def _is_integer(token: str) -> bool:
    return re.fullmatch(r"[-+]?\d+", token) is not None


def _unit(token: str) -> float:
    """One unit of the last printed digit of a float token (0 for an integer: it is exact)."""
    if _is_integer(token) or token.lstrip("+-") in ("inf", "nan"):
        return 0.0
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)
