"""Graph surgery for the validation tests: a lowered graph corrupted the way a buggy lowering
would build it — through ``ForwardData.nil``/``snoc`` and ``dataclasses.replace`` — and the
checks every corruption test makes of the report."""

import dataclasses
from collections.abc import Callable, Sequence

from tfexec import Call, Span
from tfexec.forward.data import ForwardData
from tfexec.forward.graph import ForwardGraph
from tfexec.forward.kinds import RunLoop
from tfexec.forward.node import ForwardNode, Read
from tfexec.forward.run import Body, Ref
from tfexec.validate import Problem, ValidationReport


def span(line: int, binding: str) -> Span:
    return Span("corrupt.tf.py", line, 1, binding=binding)


def named(call: Call, line: int, binding: str) -> Call:
    """``call`` with a binding name, so its node key reads ``f/<binding>``."""
    return Call(call.target, call.args, span=span(line, binding))


def shifted(ref: Ref, move: Callable[[int], int]) -> Ref:
    """``ref`` with each read's slot moved by ``move``."""
    if isinstance(ref, Read):
        return Read(move(ref.slot), ref.path)
    return tuple(shifted(r, move) for r in ref)


def reading(node: ForwardNode, move: Callable[[int], int]) -> ForwardNode:
    """``node`` with each of its reads' slots moved by ``move``."""
    return dataclasses.replace(node, reads=tuple(Read(move(r.slot), r.path) for r in node.reads))


def rebuilt(body: Body, nodes: Sequence[ForwardNode], *, n_inputs: int | None = None, outputs: Ref | None = None,
            keyed: tuple[tuple[str, Ref], ...] | None = None) -> Body:
    """``body`` with these nodes (snoc'd onto ``nil``), and these inputs, outputs and keyed references if given."""
    data = ForwardData.nil(body.data.n_inputs if n_inputs is None else n_inputs)
    for node in nodes:
        data = data.snoc(node)
    return dataclasses.replace(
        body, data=data, outputs=body.outputs if outputs is None else outputs, keyed=body.keyed if keyed is None else keyed,
    )


def moved(body: Body, nodes: Sequence[ForwardNode], move: Callable[[int], int], **kwargs: int) -> Body:
    """``rebuilt`` with the outputs and keyed references moved by ``move`` too (the nodes are as given)."""
    keyed = tuple((k, shifted(r, move)) for k, r in body.keyed)
    return rebuilt(body, nodes, outputs=shifted(body.outputs, move), keyed=keyed, **kwargs)  # type: ignore[arg-type]


def with_body(graph: ForwardGraph, body: Body) -> ForwardGraph:
    return dataclasses.replace(graph, body=body)


def node_index(body: Body, key: str) -> int:
    found = [i for i, n in enumerate(body.nodes) if n.key == key]
    assert found, f"no node keyed {key} in {[n.key for n in body.nodes]}"
    return found[0]


def replace_node(graph: ForwardGraph, key: str, change: Callable[[ForwardNode], ForwardNode]) -> ForwardGraph:
    """``graph`` with its top-level node keyed ``key`` replaced by ``change(node)``."""
    i = node_index(graph.body, key)
    nodes = list(graph.body.nodes)
    nodes[i] = change(nodes[i])
    return with_body(graph, rebuilt(graph.body, nodes))


def loop_node(graph: ForwardGraph, key: str) -> tuple[int, ForwardNode, RunLoop]:
    """The top-level loop keyed ``key``: its position, node and kind."""
    i = node_index(graph.body, key)
    node = graph.body.nodes[i]
    assert isinstance(node.what, RunLoop)
    return i, node, node.what


def refused(report: ValidationReport, rule: str, key: str) -> Problem:
    """The report's first problem, which must be ``rule``'s at ``key``."""
    assert not report.ok, str(report)
    first = report.first_problem
    assert first is not None and (first.rule, first.key) == (rule, key), str(report)
    assert "NOT VALIDATED" in str(report) and f"first [{rule}] {key}" in report.verdict
    return first


def found(report: ValidationReport) -> list[tuple[str, str]]:
    """Each problem's rule and key, in the report's order."""
    return [(p.rule, p.key) for p in report.problems]
