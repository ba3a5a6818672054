"""Comparing the two denotations: the tables key by key, the outputs, the steps of each
node list, and each loop's frontier.

Terms are hash-consed in one store, so two denotations are equal exactly when their ids
are: each comparison is one integer test, and a mismatch is rendered (in the text form, a
few operands deep, deeper until the two texts differ) only when it is reported.
"""

from collections.abc import Callable, Sequence

from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, GridRegionExpr, Tuple, TupleGetItem, Var
from tfexec.validate.heads import render
from tfexec.validate.report import Problem
from tfexec.validate.terms import Den, Denotation, Terms

Report = Callable[[Problem], None]
_NODES = (Var, Constant, Call, Tuple, TupleGetItem, ConstTensor, GridRegionExpr)


def _expr(obj: object) -> Expr | None:
    """``obj`` when it is an HIR node (what a step's errors name), else None."""
    return obj if isinstance(obj, _NODES) else None


def texts(terms: Terms, a: Den, b: Den, names: Sequence[str]) -> tuple[str, str]:
    """``a`` and ``b`` in the text form, deep enough to tell them apart (up to 10 operands)."""
    depth = 3
    while True:
        x, y = render(terms, a, names, depth), render(terms, b, names, depth)
        if x != y or depth >= 10:
            return x, y
        depth += 2


class Comparison:
    """Compares ``program`` (from the HIR) with ``lowered`` (from the graph), reporting problems."""

    def __init__(
        self, terms: Terms, program: Denotation, lowered: Denotation, nodes: dict[str, Expr], names: Sequence[str],
        report: Report,
    ) -> None:
        self.terms, self.program, self.lowered, self.nodes, self.names = terms, program, lowered, nodes, names
        self.report = report

    def describe(self, key: str) -> str:
        node = self.nodes.get(key)
        return describe_expr(node) if node is not None else key

    def values(self, key: str, ours: Den, theirs: Den) -> None:
        if ours != theirs:
            a, b = texts(self.terms, ours, theirs, self.names)
            self.report(Problem("values", key, self.describe(key), f"the program computes {a}, the graph computes {b}"))

    def tables(self) -> int:
        """Keys and values; returns how many keys had their values compared."""
        ours, theirs = self.program.table, self.lowered.table
        where: dict[str, int] = {}
        for i, (key, _) in enumerate(theirs):
            if key in where:
                self.report(Problem("keys", key, self.describe(key), "the graph's table has this key twice"))
            where.setdefault(key, i)
        known = {key for key, _ in ours}
        checked = 0
        for key, den in ours:
            at = where.get(key)
            if at is None:
                self.report(Problem("keys", key, self.describe(key), "the graph's table has no value for this key"))
                continue
            checked += 1
            self.values(key, den, theirs[at][1])
        for key, _ in theirs:
            if key not in known:
                self.report(Problem("keys", key, key, "the graph's table has this key, the program's does not"))
        common = [key for key, _ in ours if key in where]
        order = [key for key, _ in theirs if key in known]
        for i, (a, b) in enumerate(zip(common, order)):
            if a != b:
                self.report(Problem(
                    "keys", a, self.describe(a), f"out of order: the program's table has it at position {i}, the graph's {b}",
                ))
                break
        return checked

    def outputs(self, function: str) -> None:
        self.values(f"the output of {function}", self.program.outputs, self.lowered.outputs)

    def steps(self) -> int:
        """The failure-capable steps of every node list; returns how many were compared."""
        count = 0
        for label, ours in self.program.steps.items():
            theirs = self.lowered.steps.get(label)
            if theirs is None:
                continue  # a loop the graph does not have: the keys say so
            count += len(ours)
            if ours == theirs:
                continue
            i = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
            self.report(self.step_problem(label, i, ours, theirs))
        return count

    def step_problem(self, label: str, i: int, ours: list[tuple[int, object]], theirs: list[tuple[int, object]]) -> Problem:
        def step(s: tuple[int, object] | None, other: tuple[int, object] | None) -> str:
            if s is None:
                return "nothing"
            text = texts(self.terms, s[0], other[0], self.names)[0] if other is not None else render(self.terms, s[0], self.names)
            named = _expr(s[1])
            return text + (f" (its errors naming {describe_expr(named)})" if named is not None else "")

        a = ours[i] if i < len(ours) else None
        b = theirs[i] if i < len(theirs) else None
        node = _expr(a[1] if a is not None else (b[1] if b is not None else None))
        where = describe_expr(node) if node is not None else label
        return Problem(
            "steps", f"{label} step {i}", where,
            f"the program runs {step(a, b)}, the graph runs {step(b, a)} "
            f"({len(ours)} step(s) in the program's list, {len(theirs)} in the graph's)",
        )

    def frontiers(self) -> int:
        """Each loop's values computed once before it; returns how many loops were compared."""
        count = 0
        for key, ours in self.program.frontiers.items():
            theirs = self.lowered.frontiers.get(key)
            if theirs is None:
                continue
            count += 1
            if [t for t, _ in ours] == [t for t, _ in theirs]:
                continue
            invariant = {t for t, _ in ours}
            extra = next(((t, label) for t, label in theirs if t not in invariant), None)
            if extra is not None:
                reason = (
                    f"the graph computes {render(self.terms, extra[0], self.names)} ({extra[1]}) once, before the loop, "
                    "but it is none of the loop's invariant values in the program (the program computes it per iteration)"
                )
            else:
                missing = next((label for t, label in ours if t not in {x for x, _ in theirs}), None)
                reason = (
                    f"the program's invariant {missing} is not among the values the graph passes the loop"
                    if missing is not None else
                    f"the loop's frontier differs: the program's is {len(ours)} value(s), the graph passes {len(theirs)}, "
                    "in another order"
                )
            self.report(Problem("hoisting", key, self.describe(key), reason))
        return count


__all__ = ["Comparison", "texts"]
