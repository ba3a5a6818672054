"""Mutation fuzzing of the parser: valid texts with characters deleted, lines swapped or
duplicated, tokens swapped or replaced, random tokens inserted. Every mutant either parses
— and then round-trips through the printer — or raises ParseError: never another
exception, never a hang. A few hundred cases by default, thousands under ``-m slow``."""

import random
import re

import pytest

import text_programs as programs
from tfexec import ParseError
from tfexec.ir.ops.catalogue import OPS_BY_NAME
from tfexec.text import parse, print_ir, structural_difference

SEEDS = list(programs.ALL.values()) + [
    "def f(x: f32[B, 4]) -> f32[B, 4]:\n    y = add(x, 1)\n    z = (y, x)\n    return z[0]\n",
    "w: f32[4] = const()\n\n@entry\ndef f(x: f32[4]) -> f32[4]:\n    return mul(x, w)\n",
]
VOCAB = sorted(OPS_BY_NAME)[::5] + [
    "x", "acc", "k", "grid", "carry", "value", "constant", "const", "(", ")", ",", ":", "=", "[", "]", "0", "-1",
    "1.5", "True", "None", "import os", "while x:", "lambda: 0", "for", "in", "return", "@entry", "const()",
    "f32[4]", "i64[()]", "\n", "    ", "'s'", 'float("nan")', "(a := b)", "*", "**", "+", "...", "yield", "class",
    "def", ".", "\\", "#", '"""', "exec('1')", "__import__('os')", "@", "Layout((2,))", "types=(f32[4],)", "é",
    "\t", "\x00", "9" * 30, "()", "[[]]",
]
_TOKEN = re.compile(r"\w+|\S")


def mutate(text: str, rng: random.Random) -> str:
    kind = rng.randrange(7)
    lines = text.split("\n")
    if kind == 0 and text:
        start = rng.randrange(len(text))
        return text[:start] + text[start + rng.randint(1, 10) :]
    if kind == 1 and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
        return "\n".join(lines)
    if kind == 2:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return "\n".join(lines)
    if kind == 3 and len(lines) > 1:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines)
    if kind == 4:
        pos = rng.randrange(len(text) + 1)
        return text[:pos] + rng.choice(VOCAB) + text[pos:]
    tokens = list(_TOKEN.finditer(text))
    if not tokens:
        return text
    if kind == 5 and len(tokens) > 1:
        i = rng.randrange(len(tokens) - 1)
        a, b = tokens[i], tokens[i + 1]
        return text[: a.start()] + b.group() + text[a.end() : b.start()] + a.group() + text[b.end() :]
    t = rng.choice(tokens)
    return text[: t.start()] + rng.choice(VOCAB) + text[t.end() :]


def check(text: str) -> bool:
    """Parse a mutant; if it parses, it must round-trip. Returns whether it parsed."""
    try:
        module = parse(text, "fuzz.tf.py")
    except ParseError:
        return False
    printed = print_ir(module)
    again = parse(printed, "printed.tf.py")
    why = structural_difference(module, again)
    assert why is None, f"{why}\n--- mutant ---\n{text}\n--- printed ---\n{printed}"
    assert print_ir(again) == printed, f"not a fixed point\n--- mutant ---\n{text}"
    return True


def run(cases: int, seed: int) -> int:
    rng = random.Random(seed)
    parsed = 0
    for _ in range(cases):
        text = rng.choice(SEEDS)
        for _ in range(rng.randint(1, 3)):
            text = mutate(text, rng)
        try:
            parsed += check(text)
        except AssertionError:
            raise
        except Exception as exc:  # the point of the test: nothing but ParseError escapes
            raise AssertionError(f"{type(exc).__name__}: {exc}\n--- mutant ---\n{text}") from exc
    return parsed


def test_mutants_parse_or_raise_parse_error() -> None:
    parsed = run(300, seed=1234)
    assert 0 < parsed < 300  # the mutations exercise both outcomes


@pytest.mark.slow
def test_many_mutants_parse_or_raise_parse_error() -> None:
    for seed in range(10):
        run(1000, seed=seed)
