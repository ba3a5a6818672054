"""Op docstrings as structured reference entries (the convention ``tfexec.docs`` describes).

``op_doc(cls)`` reads an op class's docstring and its bases' into an ``OpDoc``: the
summary and description come from the class itself; the sections (type rule, value rule,
constraints, examples, refusals) come from the nearest class along the MRO that states
them, a ``[kind, …]``-qualified section winning over a plain one in the same class.
Constraints and refusals merge by label, the subclass's entry replacing its base's.
"""

import inspect
import re
import textwrap
from dataclasses import dataclass

from tfexec.ir.ops.base import Op

OP_PLACEHOLDER = "{op}"
"""Replaced by the op's text name in every section (so a base class can speak for its ops)."""

_HEADER = re.compile(
    r"^(?P<key>Type rule|Value rule|Constraints|Example|Refused \((?P<label>C\d+)\))"
    r"(?: \[(?P<kinds>[a-z_]+(?:, *[a-z_]+)*)\])?:(?P<rest>.*)$"
)
_ITEM = re.compile(r"^\((?P<label>C\d+)\)\s+(?P<text>.*)$")
_LABEL_NUMBER = re.compile(r"^C(\d+)$")


class DocstringError(Exception):
    """An op docstring does not follow the convention (the message names the class and the problem)."""


@dataclass(frozen=True, slots=True)
class Constraint:
    """One labelled constraint: ``label`` is ``C1``, ``C2``, …; ``text`` is its prose."""

    label: str
    text: str


@dataclass(frozen=True, slots=True)
class Refusal:
    """A program that violates constraint ``label``; generating the docs runs it and shows the error."""

    label: str
    program: str


@dataclass(frozen=True, slots=True)
class OpDoc:
    """The reference entry of one op, as its docstrings state it (``{op}`` already replaced)."""

    summary: str
    description: tuple[str, ...]
    type_rule: str
    value_rule: str
    constraints: tuple[Constraint, ...]
    examples: tuple[str, ...]
    refusals: tuple[Refusal, ...]


@dataclass(frozen=True, slots=True)
class _Section:
    key: str
    label: str | None
    kinds: frozenset[str] | None
    text: str


@dataclass(frozen=True, slots=True)
class _ClassDoc:
    prose: tuple[str, ...]
    sections: tuple[_Section, ...]


def own_docstring(cls: type) -> str | None:
    """The docstring written on ``cls`` itself (not inherited, not the one ``@dataclass`` makes up)."""
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str) or doc.startswith(f"{cls.__name__}("):
        return None
    return inspect.cleandoc(doc)


def _paragraphs(lines: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    current: list[str] = []
    for line in lines + [""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            out.append(" ".join(current))
            current = []
    return tuple(out)


def parse_docstring(cls: type) -> _ClassDoc:
    """The prose and sections of ``cls``'s own docstring (empty when it has none)."""
    doc = own_docstring(cls)
    if doc is None:
        return _ClassDoc((), ())
    lines = doc.splitlines()
    starts = [i for i, line in enumerate(lines) if _HEADER.match(line)]
    prose = _paragraphs(lines[: starts[0] if starts else len(lines)])
    sections: list[_Section] = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        match = _HEADER.match(lines[start])
        assert match is not None
        body = textwrap.dedent("\n".join(lines[start + 1 : end]))
        text = (match["rest"].strip() + "\n" + body).strip()
        kinds = frozenset(k.strip() for k in match["kinds"].split(",")) if match["kinds"] else None
        key = "Refused" if match["label"] else match["key"]
        sections.append(_Section(key, match["label"], kinds, text))
    return _ClassDoc(prose, tuple(sections))


def _parse_constraints(where: str, text: str) -> tuple[Constraint, ...]:
    """The items of a ``Constraints:`` section: ``none…`` or ``(C1) …`` lines with continuations."""
    if text.lower().startswith("none"):
        return ()
    items: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        stripped = line.strip()
        match = _ITEM.match(stripped)
        if match:
            items.append((match["label"], [match["text"]]))
        elif not stripped:
            continue
        elif items:
            items[-1][1].append(stripped)
        else:
            raise DocstringError(f"{where}: 'Constraints:' is neither 'none' nor a list of '(C1) …' items: {stripped!r}")
    return tuple(Constraint(label, " ".join(words)) for label, words in items)


def _applies(section: _Section, kind: object) -> bool:
    return section.kinds is None or kind in section.kinds


def _chain(cls: type[Op]) -> list[type]:
    """``cls`` and its bases that are ops, nearest first (``Op`` itself excluded)."""
    return [c for c in cls.__mro__ if isinstance(c, type) and issubclass(c, Op) and c is not Op]


def op_doc(cls: type[Op]) -> OpDoc:
    """The reference entry of op class ``cls``, or a ``DocstringError`` naming what is missing."""
    where = f"{cls.__module__}.{cls.__qualname__}"
    kind = getattr(cls, "kind", None)
    chain = _chain(cls)
    docs = {c: parse_docstring(c) for c in chain}
    own = docs[cls]
    if not own.prose:
        raise DocstringError(f"{where}: the docstring has no summary (its first paragraph)")

    def sections(c: type, key: str) -> list[_Section]:
        found = [s for s in docs[c].sections if s.key == key and _applies(s, kind)]
        # A kind-qualified section wins over a plain one of the same class.
        return sorted(found, key=lambda s: s.kinds is None)

    def single(key: str) -> str:
        for c in chain:
            found = sections(c, key)
            if found:
                return found[0].text
        raise DocstringError(f"{where}: no '{key}:' section, on the class or a base class")

    constraints: dict[str, Constraint] = {}
    stated = False
    for c in reversed(chain):
        for s in sorted(sections(c, "Constraints"), key=lambda s: s.kinds is not None):
            stated = True
            for item in _parse_constraints(where, s.text):
                constraints[item.label] = item
    if not stated:
        raise DocstringError(f"{where}: no 'Constraints:' section (write 'Constraints: none.' if there are none)")

    examples: tuple[str, ...] = ()
    for c in chain:
        found = [s.text for s in docs[c].sections if s.key == "Example" and _applies(s, kind)]
        if found:
            examples = tuple(found)
            break
    if not examples:
        raise DocstringError(f"{where}: no 'Example:' section, on the class or a base class")

    refusals: dict[str, list[Refusal]] = {}
    for c in reversed(chain):
        mine: dict[str, list[Refusal]] = {}
        for s in sections(c, "Refused"):
            assert s.label is not None
            mine.setdefault(s.label, []).append(Refusal(s.label, s.text))
        refusals.update(mine)

    labels = sorted(constraints, key=_label_number)
    if labels != [f"C{i}" for i in range(1, len(labels) + 1)]:
        raise DocstringError(f"{where}: constraint labels must run C1, C2, … without gaps, found {', '.join(labels)}")
    for label in refusals:
        if label not in constraints:
            raise DocstringError(f"{where}: 'Refused ({label}):' names no constraint of the op")

    name = cls.name

    def fill(text: str) -> str:
        return text.replace(OP_PLACEHOLDER, name)

    return OpDoc(
        summary=fill(own.prose[0]),
        description=tuple(fill(p) for p in own.prose[1:]),
        type_rule=fill(" ".join(single("Type rule").split())),
        value_rule=fill(" ".join(single("Value rule").split())),
        constraints=tuple(Constraint(c.label, fill(c.text)) for c in (constraints[label] for label in labels)),
        examples=tuple(fill(e) for e in examples),
        refusals=tuple(
            Refusal(r.label, fill(r.program)) for label in sorted(refusals, key=_label_number) for r in refusals[label]
        ),
    )


def _label_number(label: str) -> int:
    match = _LABEL_NUMBER.match(label)
    return int(match.group(1)) if match else 0
