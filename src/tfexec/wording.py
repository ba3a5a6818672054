"""The indefinite article of a word a message generates (``a tuple``, ``an int``, ``an 8-tuple``,
``an f32 tensor``, ``a u8 tensor``): one rule, so no message says "a int"."""

import difflib
import re
import unicodedata

_SPELLED = re.compile(r"[a-z]{1,2}\d")
"""A dtype's short name (f32, i64, bf16, u8): read letter by letter."""
_LETTERS_WITH_A_VOWEL_SOUND = set("aefhilmnorsx")
_YOU = ("uint", "uni", "use", "usu", "ut")
"""Words spelled with a u but said with a "you": "a uint8", "a union"."""


def article(word: object) -> str:
    """``"an"`` or ``"a"``, as ``word`` (its ``str``) is said."""
    text = str(word).strip()
    lower = text.lower()
    if not lower:
        return "a"
    if _SPELLED.match(lower):
        return "an" if lower[0] in _LETTERS_WITH_A_VOWEL_SOUND else "a"
    if lower[0].isdigit():
        digits = re.match(r"\d+", lower)
        number = digits.group(0) if digits else ""
        eighty = number.startswith("8")
        eleven = number in ("11", "18") or (len(number) in (5, 6) and number[:2] in ("11", "18"))
        return "an" if eighty or eleven else "a"
    if lower.startswith(_YOU):
        return "a"
    return "an" if lower[0] in "aeiou" else "a"


def a(word: object) -> str:
    """``word`` with its article: ``a(int.__name__) == "an int"``."""
    return f"{article(word)} {word}"


def did_you_mean(name: str, candidates: "list[str] | set[str]", *, n: int = 3, cutoff: float = 0.6, sep: str = " or ") -> str:
    """``"; did you mean softmax?"`` for the close matches of ``name`` among ``candidates`` (empty
    when none), naming any character of ``name`` that is not ASCII, since a look-alike letter
    (Cyrillic ``а`` for Latin ``a``) makes a name that reads right but matches nothing."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=n, cutoff=cutoff)
    hint = f"; did you mean {sep.join(close)}?" if close else ""
    foreign = non_ascii(name)
    return f"{hint} ({foreign})" if foreign else hint


def non_ascii(name: str) -> str:
    """``"'а' (U+0430 CYRILLIC SMALL LETTER A) is not ASCII"`` for each non-ASCII character of
    ``name`` (empty when it is all ASCII)."""
    seen: list[str] = []
    for ch in name:
        if ord(ch) > 127 and ch not in seen:
            seen.append(ch)
    said = [f"{ch!r} (U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed character')})" for ch in seen]
    if not said:
        return ""
    verb = "is" if len(said) == 1 else "are"
    return f"{', '.join(said)} in {name!r} {verb} not ASCII"


__all__ = ["a", "article", "did_you_mean", "non_ascii"]
