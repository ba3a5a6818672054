"""Property tests: every program ``tfexec.testing.programs()`` draws validates, and validation
agrees with ``check_equivalence`` on it; and on randomly corrupted lowerings a graph that
validates never disagrees at run time (validation is sound: it may refuse a lowering that
happens to compute the same values, never accept one that does not)."""

import dataclasses
from unittest import mock

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import tfexec.equivalence
from tfexec import check_equivalence, lower, validate
from tfexec.forward.data import ForwardData
from tfexec.forward.graph import ForwardGraph
from tfexec.forward.node import Read
from tfexec.ir.types import Type
from tfexec.testing import Program, programs

_FAST = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_SLOW = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _validates_and_agrees(program: Program) -> None:
    graph = lower(program.target)
    report = validate(graph)
    assert report.ok, f"{program!r}\n{report}"
    equivalence = check_equivalence(program.target, *program.inputs, loops="expand")
    assert equivalence.ok and equivalence.compared > 0, f"{program!r}\n{equivalence}"
    assert equivalence.validation is not None and equivalence.validation.ok


@_FAST
@given(programs(weak_values=True))
def test_every_generated_program_validates_and_agrees_with_the_comparison(program: Program) -> None:
    _validates_and_agrees(program)


@pytest.mark.slow
@_SLOW
@given(programs(weak_values=True, max_ops=12))
def test_every_generated_program_validates_and_agrees_with_the_comparison_exhaustive(program: Program) -> None:
    _validates_and_agrees(program)


def _slot_type(graph: ForwardGraph, slot: int) -> Type | None:
    n = graph.n_inputs
    return graph.function.params[slot].type if slot < n else graph.nodes[slot - n].type


@st.composite
def _corrupted(draw: st.DrawFn) -> tuple[Program, ForwardGraph, str]:
    """A program and its lowering with one node's reads corrupted: two different reads
    swapped, or one pointed at another earlier slot of the same declared type. The
    corruption is drawn from those the lowering admits, so few programs are thrown away
    (one whose slots all have types of their own would otherwise be, again and again)."""
    program = draw(programs(weak_values=True))
    graph = lower(program.target)
    nodes = list(graph.nodes)
    options: list[tuple[int, int, str, int]] = []  # (node, read, "swap" | "point", the other read | slot)
    for i, node in enumerate(nodes):
        for p, r in enumerate(node.reads):
            options.extend((i, p, "swap", q) for q in range(p + 1, len(node.reads)) if node.reads[q] != r)
            want = _slot_type(graph, r.slot) if not r.path else None
            if want is not None:
                options.extend(
                    (i, p, "point", s) for s in range(graph.n_inputs + i) if s != r.slot and _slot_type(graph, s) == want
                )
    assume(options)
    i, p, kind, other = draw(st.sampled_from(options))
    node = nodes[i]
    reads = list(node.reads)
    if kind == "swap":
        reads[p], reads[other] = reads[other], reads[p]
        what = f"node {i} ({node.label}): reads {p} and {other} swapped"
    else:
        what = f"node {i} ({node.label}): read {p} {reads[p]} pointed at %{other}"
        reads[p] = Read(other)
    nodes[i] = dataclasses.replace(node, reads=tuple(reads))
    data = ForwardData.nil(graph.n_inputs)
    for n in nodes:
        data = data.snoc(n)
    return program, dataclasses.replace(graph, body=dataclasses.replace(graph.body, data=data)), what


def _sound(program: Program, corrupted: ForwardGraph, what: str) -> None:
    note(f"{program!r}\n{what}")
    if not validate(corrupted).ok:
        return  # refused: nothing more to show
    with mock.patch.object(tfexec.equivalence, "lower", lambda target, *a, **k: corrupted):
        report = check_equivalence(program.target, *program.inputs, loops="expand")
    assert report.compared_ok, f"{program!r}\n{what}\nvalidated, but at run time:\n{report}"


@_FAST
@given(_corrupted())
def test_a_corrupted_lowering_that_validates_agrees_at_run_time(case: tuple[Program, ForwardGraph, str]) -> None:
    _sound(*case)


@pytest.mark.slow
@_SLOW
@given(_corrupted())
def test_a_corrupted_lowering_that_validates_agrees_at_run_time_exhaustive(case: tuple[Program, ForwardGraph, str]) -> None:
    _sound(*case)
