"""proofs_notes/ names, for every lemma, the validator rule that checks it for a given program,
and validation.md describes every rule the validator has."""

import re
from pathlib import Path

from tfexec.validate.report import RULES

NOTES = Path(__file__).resolve().parents[2] / "proofs_notes"
_LEMMA = re.compile(r"^### (Lemma \d+)", re.MULTILINE)


def _lemmas() -> dict[str, str]:
    text = (NOTES / "lemmas.md").read_text(encoding="utf-8")
    heads = list(_LEMMA.finditer(text))
    return {m.group(1): text[m.end(): heads[i + 1].start() if i + 1 < len(heads) else len(text)] for i, m in enumerate(heads)}


def test_every_lemma_names_the_rule_that_validates_it() -> None:
    lemmas = _lemmas()
    assert len(lemmas) == 16
    for name, body in lemmas.items():
        lines = [line for line in body.split("\n\n") if line.startswith("Validated by:")]
        assert len(lines) == 1, f"{name} has {len(lines)} 'Validated by:' paragraphs"
        named = re.findall(r"`([a-z]+)`", lines[0].split("—")[0])
        assert named and all(rule in RULES for rule in named) or "every rule" in lines[0], f"{name}: {lines[0]}"


def test_validation_md_lists_every_rule() -> None:
    text = (NOTES / "validation.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert f"| `{rule}` |" in text, rule
