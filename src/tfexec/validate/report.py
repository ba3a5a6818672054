"""``ValidationReport``: what validation checked, rule by rule, and each problem it found.

A problem names where it is (a node key, or the slot or body it is about), the HIR node
(``describe_expr``), the rule that found it and why — for a value, what the program and the
graph compute there, in the text form, a few operands deep.
"""

from dataclasses import dataclass

RULES: dict[str, str] = {
    "keys": "the same keys in both tables, in the same order",
    "values": "at every key and the output, the program's value",
    "steps": "the same failure-capable steps, in order, naming the same nodes",
    "hoisting": "each loop hoists exactly the program's invariant frontier",
    "frees": "run frees a slot only after its last reader, never an output",
    "types": "each declared type is what inference gave the node's source",
    "reads": "reads name earlier slots and fields; run steps, getters and index conversions follow their nodes",
    "scopes": "each node computes in a scope a boundary before it opened",
    "registry": "each plan uses the registry's current rule for its op",
}
"""The validator's rules, by name, and what each checks (the report's table, proofs_notes/validation.md)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing validation found wrong: the ``rule`` that found it, ``key`` (a node key, or
    the slot or node list it is about), ``description`` (``describe_expr`` of the HIR node)
    and ``reason``."""

    rule: str
    key: str
    description: str
    reason: str

    def __str__(self) -> str:
        where = self.key if self.description == self.key else f"{self.key} ({self.description})"
        return f"[{self.rule}] {where}: {self.reason}"


@dataclass(frozen=True)
class ValidationReport:
    """The outcome of ``validate``: ``ok`` when no rule found a problem; ``checked``, how many
    keys had their values compared (the per-node table's size); ``problems`` in rule order
    (the first ``listed`` of each rule, ``unlisted`` more not kept); ``counts`` how many
    items each rule checked."""

    function: str
    ok: bool
    checked: int
    problems: tuple[Problem, ...]
    counts: tuple[tuple[str, int], ...]
    nodes: int
    unlisted: int = 0

    @property
    def first_problem(self) -> Problem | None:
        return self.problems[0] if self.problems else None

    @property
    def verdict(self) -> str:
        """One line: validated for all inputs, or the first problem."""
        if self.ok:
            return (
                f"VALIDATED: the lowering of {self.function} denotes the program at all {self.checked} key(s) "
                f"and its output, for all inputs ({self.nodes} lowered node(s) checked)"
            )
        total = len(self.problems) + self.unlisted
        first = self.problems[0]
        return f"NOT VALIDATED: {total} problem(s); first {first}"

    def __str__(self) -> str:
        found: dict[str, int] = {}
        for p in self.problems:
            found[p.rule] = found.get(p.rule, 0) + 1
        headers = ("rule", "checks", "checked", "problems")
        cells = [(rule, RULES[rule], str(n), str(found.get(rule, 0))) for rule, n in self.counts]
        widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(), "  ".join("-" * w for w in widths)]
        lines.extend("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)
        lines.extend(f"  {p}" for p in self.problems)
        if self.unlisted:
            lines.append(f"  … and {self.unlisted} more problem(s)")
        lines.append(self.verdict)
        return "\n".join(lines)


__all__ = ["RULES", "Problem", "ValidationReport"]
