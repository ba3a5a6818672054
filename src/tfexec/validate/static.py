"""The static checks on the lowered graph alone: what ``run`` frees, and declared types.

``Body.frees`` (and the step list the run loop actually follows) must free each slot only
after its last declared reader and never an output (Lemma 11), and each run step must call
its node's kind in its node's dim scope (the step's getter is ``getter(node.reads)``, trusted);
each node's declared type must be what type inference gave the HIR node it comes from (what
the runtime checks compare values against).
"""

from collections.abc import Callable, Iterator

from tfexec.forward.graph import ForwardGraph
from tfexec.forward.kinds import EnterCall, Fail, RunLoop
from tfexec.forward.node import ForwardNode
from tfexec.forward.run import COMPUTE, DIRECT, ONE, TWO, Body, Step, leaves
from tfexec.ir.describe import describe_expr
from tfexec.ir.types import TupleType, Type
from tfexec.semantics.keys import iteration_prefix, template
from tfexec.validate.report import Problem

Report = Callable[[Problem], None]


def bodies(graph: ForwardGraph) -> Iterator[tuple[Body, str]]:
    """Every node list of ``graph`` (its own, then each loop body, outer before inner) with
    the key prefix of its nodes."""
    work: list[tuple[Body, str]] = [(graph.body, "")]
    while work:
        body, prefix = work.pop()
        yield body, prefix
        for node in reversed(body.nodes):
            if isinstance(node.what, RunLoop):
                work.append((node.what.body, template(iteration_prefix(prefix + node.what.key, 0))))


def _label(body: Body, slot: int, prefix: str, entry: str) -> tuple[str, str]:
    """Where slot ``slot`` of ``body`` is, and what it holds, for a report."""
    n = body.data.n_inputs
    if slot < n:
        where = f"input slot {slot} of {prefix or entry}"
        return where, where
    node = body.nodes[slot - n]
    where = prefix + node.key if node.key else f"slot {slot} ({node.what.describe()} in {prefix or entry})"
    return where, describe_expr(node.source)


def _reader(body: Body, i: int, prefix: str, entry: str) -> str:
    node = body.nodes[i]
    return prefix + node.key if node.key else f"node {i} ({node.what.describe()})"


def check_frees(graph: ForwardGraph, report: Report) -> int:
    """Every free of every node list, and that each run step follows its node; returns how
    many frees were checked."""
    count = 0
    entry = graph.function.name
    for body, prefix in bodies(graph):
        nodes = body.nodes
        last: dict[int, int] = {}
        for i, node in enumerate(nodes):
            for r in node.reads:
                last[r.slot] = i
        kept = {r.slot for r in leaves(body.outputs)}
        frees = body.frees
        if len(frees) != len(nodes) or len(body.steps) != len(nodes):
            report(Problem("frees", prefix or entry, prefix or entry,
                           f"{len(nodes)} node(s) but {len(frees)} free list(s) and {len(body.steps)} run step(s)"))
            continue
        for i, (listed, step, node) in enumerate(zip(frees, body.steps, nodes)):
            if not _step_follows(step, node):
                report(Problem("reads", _reader(body, i, prefix, entry), describe_expr(node.source),
                               "the run loop's step for this node is not its kind's function in its dim scope"))
            run = step[6] or ()
            if tuple(run) != tuple(listed):
                report(Problem("frees", _reader(body, i, prefix, entry), describe_expr(nodes[i].source),
                               f"run frees slots {list(run)} after this node, but Body.frees says {list(listed)}"))
            for s in run:
                count += 1
                if s in kept:
                    where, what = _label(body, s, prefix, entry)
                    report(Problem("frees", where, what,
                                   f"run frees it after {_reader(body, i, prefix, entry)}, but it is an output of the node list"))
                elif last.get(s, -1) > i:
                    where, what = _label(body, s, prefix, entry)
                    report(Problem("frees", where, what,
                                   f"run frees it after {_reader(body, i, prefix, entry)}, but "
                                   f"{_reader(body, last[s], prefix, entry)} reads it later"))
    return count


def _step_follows(step: Step, node: ForwardNode) -> bool:
    """Whether the run loop's step calls the node's kind, in its dim scope, on its reads."""
    f, kind, a, b, _, scope, _ = step
    if scope != node.scope:
        return False
    direct, reads = node.what.direct, node.reads
    if kind == ONE:
        return f is direct and len(reads) == 1 and not reads[0].path and a == reads[0].slot
    if kind == TWO:
        return f is direct and len(reads) == 2 and not any(r.path for r in reads) and (a, b) == (reads[0].slot, reads[1].slot)
    if kind == DIRECT:
        return f is direct and direct is not None
    return kind == COMPUTE and direct is None and f == node.what.compute


def _expected(node: ForwardNode) -> Type | None:
    what = node.what
    if isinstance(what, EnterCall):
        types = tuple(a.checked_type for a in what.call.args)
        return TupleType(tuple(t for t in types if t is not None)) if all(t is not None for t in types) else None
    return node.source.checked_type


def check_types(graph: ForwardGraph, report: Report) -> int:
    """Each node's declared type against inference; returns how many nodes were checked."""
    count = 0
    entry = graph.function.name
    for body, prefix in bodies(graph):
        for i, node in enumerate(body.nodes):
            if isinstance(node.what, Fail):
                continue
            count += 1
            expected = _expected(node)
            if node.type != expected:
                where = prefix + node.key if node.key else f"node {i} ({node.what.describe()} in {prefix or entry})"
                report(Problem("types", where, describe_expr(node.source),
                               f"declared type {node.type}, but inference gave its source {expected}"))
    return count


__all__ = ["bodies", "check_frees", "check_types"]
