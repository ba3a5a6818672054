"""Property tests, construct by construct: on random programs that each contain a laid-out
value, a module weight, a plain-handler call, an input that needs casting or a catalogue-v2 op
(``programs(ensure=...)``), both routes agree node by node (loops collapsed and expanded)
and ``run`` — unchecked and under ``check="full"`` — returns bitwise what ``evaluate``
returns; on random programs that fail at run time (``programs(failing=True)``), every
reading of both routes raises the same ``EvalError``, the planted one.

Two more check lemmas of proofs_notes/lemmas.md on random programs holding every construct:
every node list reads only earlier slots and still computes the visitor's values (Lemma 0),
and both tables have the same keys in the same order (Lemma 1).

``tests/test_property.py`` runs the default mix (every construct at its ordinary rate) and
checks that the strategy draws what it promises.
"""

import pytest
from hypothesis import HealthCheck, given, settings

from tfexec import EvalError, Value, check_equivalence, evaluate, lower
from tfexec.evaluator.visitor import evaluate_value
from tfexec.forward.graph import read
from tfexec.testing import ENSURABLE, Program, programs

from proofs.programs import assert_same, bodies

_FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_SLOW = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _assert_routes_agree(program: Program) -> None:
    for loops in ("collapse", "expand"):
        report = check_equivalence(program.target, *program.inputs, loops=loops)  # type: ignore[arg-type]
        assert report.ok, f"{program!r}\n{report}"
        assert report.compared > 0, f"{program!r}\n{report}"
    expected = evaluate(program.target, *program.inputs)
    assert_same(lower(program.target).run(*program.inputs), expected)
    assert_same(lower(program.target, check="full").run(*program.inputs), expected)


@_FAST
@given(programs(ensure=("layouts",)))
def test_routes_agree_on_laid_out_values(program: Program) -> None:
    """Parameters, carries and callee parameters declared with a ``Layout``/``ShardLayout``,
    ``reshard`` to one, ``local`` of values that are not split, layout-sensitive handlers."""
    _assert_routes_agree(program)


@_FAST
@given(programs(ensure=("weights",)))
def test_routes_agree_on_module_weights(program: Program) -> None:
    """``ConstTensor``s read from a ``LoadedModule`` (in callees and loop bodies too, a name
    read by two nodes), the program run as that module."""
    assert program.module is not None
    _assert_routes_agree(program)


@_FAST
@given(programs(ensure=("handlers",)))
def test_routes_agree_through_plain_handlers(program: Program) -> None:
    """Calls of plain ``register_eval`` handlers (``tfexec.testing.handlers``): returning an
    operand, reading a weak scalar, returning a tuple, reading the layout and dims they are told."""
    _assert_routes_agree(program)


@_FAST
@given(programs(ensure=("cast_inputs",)))
def test_routes_agree_on_inputs_that_need_casting(program: Program) -> None:
    """Inputs of another dtype than their parameter's, Python lists and scalars."""
    _assert_routes_agree(program)


@_FAST
@given(programs(ensure=("v2_ops",), weak_values=True))
def test_routes_agree_on_v2_ops(program: Program) -> None:
    """Catalogue-v2 ops (``linear``, scans, ``clamp``, rounding, ``tril``/``triu``, ``gather``,
    ``any``/``all``, logical, bitwise and integer-division ops) among weak scalars, loops,
    callees and layouts."""
    _assert_routes_agree(program)


@_FAST
@given(programs(ensure=ENSURABLE))
def test_every_node_list_of_a_random_program_reads_only_earlier_slots(program: Program) -> None:
    """Lemma 0 on random programs: in the graph's list and every loop body's, node ``j``
    declares only slots ``< I + j``; and the outputs ``eval``'s context holds are ``evaluate``'s."""
    graph = lower(program.target)
    for body in bodies(graph):
        for index, node in enumerate(body.data.nodes):
            assert all(0 <= r.slot < body.data.n_inputs + index for r in node.reads), f"{program!r}\n{node}"
    context = graph.eval(*program.inputs)
    assert_same(read(graph.body.outputs, context), evaluate(program.target, *program.inputs))


@_FAST
@given(programs(ensure=ENSURABLE))
def test_keys_agree_in_order_on_random_programs(program: Program) -> None:
    """Lemma 1 on random programs: the visitor's table and ``denote_all`` have the same keys
    in the same order, loops collapsed and expanded."""
    graph = lower(program.target)
    for loops in ("collapse", "expand"):
        table: dict[str, Value] = {}
        evaluate_value(program.target, program.inputs, table=table, loops=loops)  # type: ignore[arg-type]
        assert list(graph.denote_all(*program.inputs, loops=loops)) == list(table), f"{program!r}"  # type: ignore[arg-type]


def _assert_same_error_everywhere(program: Program) -> None:
    assert program.error is not None
    with pytest.raises(EvalError) as direct:
        evaluate(program.target, *program.inputs)
    message = str(direct.value)
    assert program.error in message, f"{program!r}\nraised: {message}"
    graph = lower(program.target)
    readings = {
        "run": lambda: graph.run(*program.inputs),
        "run (full)": lambda: graph.run(*program.inputs, check="full"),
        "eval": lambda: graph.eval(*program.inputs),
        "denote_all (expand)": lambda: graph.denote_all(*program.inputs, loops="expand"),
    }
    for name, reading in readings.items():
        with pytest.raises(EvalError) as lowered:
            reading()
        assert type(lowered.value) is type(direct.value), f"{program!r}\n{name}: {lowered.value!r}"
        assert str(lowered.value) == message, f"{program!r}\n{name} raised: {lowered.value}\nevaluate raised: {message}"
    report = check_equivalence(program.target, *program.inputs)
    assert report.ok and report.compared == 0, f"{program!r}\n{report}"
    assert report.error == f"EvalError: {message}", f"{program!r}\n{report.error}"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(failing=True))
def test_failing_programs_raise_the_same_error_on_every_route(program: Program) -> None:
    """A slice past its axis (or from a negative start), a ``take`` index out of range, ``local``
    of a split value, a zero-trip loop without carries, a handler that raises."""
    _assert_same_error_everywhere(program)


@pytest.mark.slow
@_SLOW
@given(programs(max_ops=12, ensure=("layouts", "weights", "handlers", "cast_inputs", "v2_ops"), weak_values=True))
def test_routes_agree_on_every_construct_many(program: Program) -> None:
    _assert_routes_agree(program)


@pytest.mark.slow
@_SLOW
@given(programs(max_ops=12, failing=True, weak_values=True))
def test_failing_programs_raise_the_same_error_many(program: Program) -> None:
    _assert_same_error_everywhere(program)
