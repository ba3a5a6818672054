"""Translation validation: ``validate(graph)`` proves a lowering equal to its program for
every input, without running anything.

Two symbolic denotations are computed independently — the program's from the HIR alone
(``program``: the direct route's semantics) and the lowered graph's from its public
structure alone (``lowered``: what each node's kind computes from its declared reads) —
as hash-consed terms in one store (``terms``, ``heads``), so comparing them is linear in
the graph. ``compare`` checks them key by key (same keys, same order, same values), the
outputs, the failure-capable steps of each node list and each loop's hoisted frontier;
``static`` checks what ``run`` frees and every declared type. What validation trusts, and
what it cannot see, is stated in ``proofs_notes/validation.md``.
"""

import gc

from tfexec.api_checks import public
from tfexec.forward.graph import ForwardGraph
from tfexec.infer import infer_types
from tfexec.validate.compare import Comparison
from tfexec.validate.lowered import denote_graph
from tfexec.validate.program import denote_program
from tfexec.validate.report import RULES, Problem, ValidationReport
from tfexec.validate.static import check_frees, check_types
from tfexec.validate.terms import Terms

LISTED = 20
"""How many problems of each rule a report lists (the rest are counted)."""
_RANK = {"keys": 0, "values": 0, **{rule: i + 1 for i, rule in enumerate(RULES) if rule not in ("keys", "values")}}
"""The order problems are listed in: the table's (keys and values, in table order), then by rule."""


@public
def validate(graph: ForwardGraph) -> ValidationReport:
    """Check, for all inputs at once, that ``graph`` computes what its function does: per
    node key, per output, per failure-capable step, per loop frontier, per free and per
    declared type (see ``ValidationReport``). Nothing is executed."""
    collecting = gc.isenabled()
    gc.disable()  # millions of small terms, none cyclic: the collector would only rescan them
    try:
        return _validate(graph)
    finally:
        if collecting:
            gc.enable()


def _validate(graph: ForwardGraph) -> ValidationReport:
    fn = graph.function
    infer_types(fn)
    found: list[Problem] = []
    per_rule: dict[str, int] = {rule: 0 for rule in RULES}
    unlisted = [0]

    def report(problem: Problem) -> None:
        per_rule[problem.rule] += 1
        if per_rule[problem.rule] <= LISTED:
            found.append(problem)
        else:
            unlisted[0] += 1

    terms = Terms()
    program, nodes = denote_program(terms, fn)
    lowered, structural, walked = denote_graph(terms, graph)
    for problem in structural:
        report(problem)
    compare = Comparison(terms, program, lowered, nodes, [p.name for p in fn.params], report)
    checked = compare.tables()
    compare.outputs(fn.name)
    counts = {
        "keys": len(program.table),
        "values": checked + 1,
        "steps": compare.steps(),
        "hoisting": compare.frontiers(),
        "frees": check_frees(graph, report),
        "types": check_types(graph, report),
        "reads": walked,
        "scopes": walked,
        "registry": walked,
    }
    problems = tuple(sorted(found, key=lambda p: _RANK.get(p.rule, len(RULES))))  # stable: table order within a rank
    return ValidationReport(
        fn.name, not problems, checked, problems, tuple((rule, counts[rule]) for rule in RULES), walked, unlisted[0],
    )


__all__ = ["Problem", "ValidationReport", "validate"]
