"""Validation can fail: lowered graphs corrupted the way a buggy lowering would corrupt them
are refused, each with the right node named, without running anything.

Every corrupted graph is built as the lowering builds one — through ``ForwardData.nil`` /
``snoc`` and ``dataclasses.replace`` (``validate/surgery.py``; a free list, which ``Body``
derives from the reads, through ``object.__setattr__``, as a buggy liveness rule would make
it) — and every test first shows the uncorrupted graph validates. Where it helps to see that a corruption is
real, a test also runs the corrupted graph (only there, and after validation).
"""

import dataclasses
from collections.abc import Callable, Sequence

import pytest
import torch

from tfexec import Call, EvalError, Function, GridRegionExpr, Tuple, TupleGetItem, Var, f32, i64, lower, ops, validate
from tfexec.forward.kinds import EnterCall, OpApply
from tfexec.forward.node import ForwardNode, Read
from tfexec.forward.run import Body
from tfexec.ir.dims import DimVar
from tfexec.ir.ops.elementwise import Add
from tfexec.ir.ops.reduction import Reduce
from tfexec.semantics.dispatch import plan_call

from validate.surgery import (
    found, loop_node, named, node_index, reading, rebuilt, refused, replace_node, shifted, span, with_body,
)


# -- programs ---------------------------------------------------------------------------------------

F4 = f32[4]


def _sub_program() -> Function:
    x, y = Var("x", F4), Var("y", F4)
    d = named(ops.sub(x, y), 1, "d")
    return Function("f", (x, y), named(ops.mul(d, 2.0), 2, "out"))


K = DimVar("K")


def _tiled_sum() -> Function:
    """``acc = 0; for k in range(K // 2): acc = acc + a[2k : 2k + 2]; out = acc * 1``."""
    a = Var("a", f32[K])
    k, acc = Var("k", i64[()]), Var("acc", f32[2])
    start = named(ops.dim_mul(k, 2), 3, "t")
    tile = named(ops.slice(a, (start,), sizes=(2,)), 4, "tile")
    step = named(ops.add(acc, tile), 5, "step")
    zero = named(ops.full(shape=(2,), value=0.0, dtype=f32), 1, "zero")
    loop = GridRegionExpr(K // 2, k, (zero,), (acc,), step, (step,), span=span(2, "acc"))
    return Function("f", (a,), named(ops.mul(loop, 1.0), 6, "out"))


# -- (1) two reads of a node swapped ------------------------------------------------------------------


def _swap(node: ForwardNode) -> ForwardNode:
    first, second = node.reads
    return dataclasses.replace(node, reads=(second, first))


def test_swapped_reads_are_refused_at_the_node() -> None:
    graph = lower(_sub_program())
    assert validate(graph).ok
    report = validate(replace_node(graph, "f/d", _swap))
    first = refused(report, "values", "f/d")
    assert first.description == "corrupt.tf.py:1:1 d = sub(x, y)"
    assert first.reason == "the program computes sub(x, y), the graph computes sub(y, x)"
    assert [key for rule, key in found(report) if rule == "values"] == ["f/d", "f/out", "the output of f"]
    assert report.checked == 2


def test_swapping_a_commutative_op_is_refused_though_no_value_changes() -> None:
    """Validation compares what is computed, not the values it gives on some inputs: ``add(y, x)``
    for ``add(x, y)`` is refused (bitwise the same here, but validation does not assume it)."""
    x, y = Var("x", F4), Var("y", F4)
    graph = lower(Function("f", (x, y), named(ops.add(x, y), 1, "s")))
    assert validate(graph).ok
    refused(validate(replace_node(graph, "f/s", _swap)), "values", "f/s")


# -- (2) a node's op or attribute changed ------------------------------------------------------------


def _planned_as(op: object) -> Callable[[ForwardNode], ForwardNode]:
    """The node with its call planned as ``op`` instead (as a lowering dispatching wrongly would)."""

    def change(node: ForwardNode) -> ForwardNode:
        assert isinstance(node.what, OpApply) and isinstance(node.source, Call)
        plan = plan_call(node.source, op, [None] * len(node.source.args))  # type: ignore[arg-type]
        return dataclasses.replace(node, what=OpApply(plan, node.what.fills))

    return change


def test_a_changed_op_is_refused_at_the_node() -> None:
    graph = lower(_sub_program())
    first = refused(validate(replace_node(graph, "f/d", _planned_as(Add()))), "values", "f/d")
    assert first.reason == "the program computes sub(x, y), the graph computes add(x, y)"


def test_a_changed_attribute_is_refused_at_the_node() -> None:
    x = Var("x", f32[3, 4])
    r = ops.reduce(x, kind="sum", axes=(0,), span=span(1, "r"))
    graph = lower(Function("f", (x,), named(ops.neg(r), 2, "n")))
    assert validate(graph).ok
    first = refused(validate(replace_node(graph, "f/r", _planned_as(Reduce(kind="max", axes=(0,))))), "values", "f/r")
    assert first.reason == "the program computes reduce(x, kind='sum', axes=(0,)), the graph computes reduce(x, kind='max', axes=(0,))"


def test_a_changed_float_attribute_is_refused_even_when_equal_as_a_number() -> None:
    """``full(value=-0.0)`` is not ``full(value=0.0)``: attributes compare by their bits."""
    graph = lower(Function("f", (), named(ops.full(shape=(2,), value=0.0, dtype=f32), 1, "z")))
    corrupt = replace_node(graph, "f/z", _planned_as(dataclasses.replace(graph.nodes[0].what.plan.op, value=-0.0)))  # type: ignore[union-attr]
    refused(validate(corrupt), "values", "f/z")


# -- (3) a loop-body node dropped ---------------------------------------------------------------------


def test_a_dropped_loop_body_node_is_refused_at_its_key() -> None:
    """``t = dim_mul(k, 2)`` dropped from the body, ``tile`` reading the index in its place."""
    graph = lower(_tiled_sum())
    assert validate(graph).ok
    i, node, loop = loop_node(graph, "f/acc")
    body = loop.body
    t = node_index(body, "/t")
    t_slot, index_slot = body.data.n_inputs + t, loop.n_front

    def move(s: int) -> int:
        return index_slot if s == t_slot else (s - 1 if s > t_slot else s)

    nodes = [reading(n, move) for j, n in enumerate(body.nodes) if j != t]
    keyed = tuple((k, shifted(r, move)) for k, r in body.keyed if k != "/t")
    dropped = rebuilt(body, nodes, outputs=shifted(body.outputs, move), keyed=keyed)
    outer = list(graph.body.nodes)
    outer[i] = dataclasses.replace(node, what=dataclasses.replace(loop, body=dropped))
    report = validate(with_body(graph, rebuilt(graph.body, outer)))
    first = refused(report, "keys", "f/acc[*]/t")
    assert first.description == "corrupt.tf.py:3:1 t = dim_mul(k, 2)"
    assert ("values", "f/acc[*]/tile") in found(report)
    tile = next(p for p in report.problems if p.key == "f/acc[*]/tile")
    assert "the program computes slice(a, (dim_mul(index@1, 2),)" in tile.reason and "graph computes slice(a, (index@1,)" in tile.reason
    assert any(rule == "steps" and key.startswith("f/acc step") for rule, key in found(report))


# -- (4) a variant node hoisted out of its loop --------------------------------------------------------


def _doublingloop_node() -> Function:
    """``for k in range(3): acc = acc * 2.0 + x`` (``s = mul(acc, 2.0)`` reads the carry)."""
    x = Var("x", F4)
    k, acc = Var("k", i64[()]), Var("acc", F4)
    s = named(ops.mul(acc, 2.0), 2, "s")
    step = named(ops.add(s, x), 3, "step")
    return Function("f", (x,), GridRegionExpr(3, k, (x,), (acc,), step, (step,), span=span(1, "acc")))


def test_a_hoisted_variant_node_is_refused() -> None:
    """``s`` computed once, before the loop, from the initial carry: the classic bug of taking a
    carry for an invariant. The body's ``/s`` still names the (hoisted) value."""
    graph = lower(_doublingloop_node())
    assert validate(graph).ok
    i, node, loop = loop_node(graph, "f/acc")
    body = loop.body
    assert i == 0 and loop.n_front == 1 and body.data.n_inputs == 3  # [x, index, acc]
    s = node_index(body, "/s")
    s_node = body.nodes[s]
    hoisted = dataclasses.replace(s_node, reads=(Read(0),), key=None, scope=node.scope)  # reads the init x
    s_slot = body.data.n_inputs + s

    def move(slot: int) -> int:  # the body gets one more input, s, after the frontier
        if slot == s_slot:
            return 1
        if slot >= 1:
            return slot + 1 if slot < s_slot else slot
        return slot

    nodes = [reading(n, move) for j, n in enumerate(body.nodes) if j != s]
    keyed = tuple((k, shifted(r, move)) for k, r in body.keyed)
    new_body = rebuilt(body, nodes, n_inputs=4, outputs=shifted(body.outputs, move), keyed=keyed)
    front, inits = node.reads[:1], node.reads[1:]
    new_loop = dataclasses.replace(node, what=dataclasses.replace(loop, body=new_body, n_front=2), reads=(*front, Read(1), *inits))
    outer = rebuilt(
        graph.body, [hoisted, new_loop], outputs=shifted(graph.body.outputs, lambda slot: slot + 1),
        keyed=tuple((k, shifted(r, lambda slot: slot + 1)) for k, r in graph.body.keyed),
    )
    report = validate(with_body(graph, outer))
    first = refused(report, "values", "f/acc[*]/s")
    assert first.reason == "the program computes mul(carry@1.0, 2.0), the graph computes mul(x, 2.0)"
    hoisting = [p for p in report.problems if p.rule == "hoisting"]
    assert len(hoisting) == 1 and hoisting[0].key == "f/acc"
    assert "the graph computes mul(x, 2.0) (slot 1 (mul in f): corrupt.tf.py:2:1 s = mul(acc, 2.0)) once, before the loop" in hoisting[0].reason


# -- (5) a slot freed early -----------------------------------------------------------------------------


def _shared_program() -> Function:
    x = Var("x", F4)
    a = named(ops.exp(x), 1, "a")
    b = named(ops.neg(a), 2, "b")
    return Function("f", (x,), named(ops.mul(a, b), 3, "c"))


def _freeing(body: Body, frees: Sequence[tuple[int, ...]], run_frees: Sequence[tuple[int, ...]] | None = None) -> Body:
    """A copy of ``body`` whose free lists (``Body.frees``, and the ones its run steps follow) are given."""
    bad = dataclasses.replace(body)
    run = frees if run_frees is None else run_frees
    object.__setattr__(bad, "frees", tuple(frees))
    object.__setattr__(bad, "steps", tuple(step[:6] + (tuple(f) or None,) for step, f in zip(bad.steps, run)))
    return bad


def test_a_slot_freed_before_its_last_reader_is_refused() -> None:
    graph = lower(_shared_program())
    assert validate(graph).ok
    body = graph.body
    assert [list(f) for f in body.frees] == [[0], [], [1, 2]]  # a (slot 1) is read last by c
    early = with_body(graph, _freeing(body, [(0,), (1,), (2,)]))
    first = refused(validate(early), "frees", "f/a")
    assert first.description == "corrupt.tf.py:1:1 a = exp(x)"
    assert first.reason == "run frees it after f/b, but f/c reads it later"
    with pytest.raises(EvalError, match=r"corrupt\.tf\.py:3:1 c = mul\(a, b\)"):  # the corruption is real: run breaks
        early.run(torch.ones(4))


def test_freeing_an_output_or_freeing_other_slots_than_body_frees_says_is_refused() -> None:
    graph = lower(_shared_program())
    body = graph.body
    out = with_body(graph, _freeing(body, [(0,), (), (1, 2, 3)]))
    assert refused(validate(out), "frees", "f/c").reason == "run frees it after f/c, but it is an output of the node list"
    hidden = with_body(graph, _freeing(body, list(body.frees), [(0,), (1,), (2,)]))
    report = validate(hidden)
    assert ("frees", "f/b") in found(report) and ("frees", "f/a") in found(report)
    assert "run frees slots [1] after this node, but Body.frees says []" in str(report)


# -- (6) carries reordered -------------------------------------------------------------------------------


def _two_carries() -> Function:
    x, y = Var("x", F4), Var("y", F4)
    k = Var("k", i64[()])
    c0, c1 = Var("c0", F4), Var("c1", F4)
    y0, y1 = ops.add(c0, 1.0), ops.mul(c1, 2.0)
    loop = GridRegionExpr(3, k, (x, y), (c0, c1), Tuple((y0, y1)), (y0, y1), span=span(1, "loop"))
    return Function("f", (x, y), named(ops.sub(TupleGetItem(loop, 0), TupleGetItem(loop, 1)), 2, "out"))


def test_reordered_carries_are_refused_at_the_loop() -> None:
    graph = lower(_two_carries())
    assert validate(graph).ok
    _, node, loop = loop_node(graph, "f/loop")
    front, inits = node.reads[: loop.n_front], node.reads[loop.n_front :]
    swapped = replace_node(graph, "f/loop", lambda n: dataclasses.replace(n, reads=(*front, *reversed(inits))))
    first = refused(validate(swapped), "values", "f/loop")
    assert "the program computes (grid(3, init=(x, y), carry=(add(carry@1.0, 1.0), mul(carry@1.1, 2.0)))[0]" in first.reason
    assert "the graph computes (grid(3, init=(y, x), carry=" in first.reason


def test_reordered_yields_are_refused_at_the_loop() -> None:
    graph = lower(_two_carries())
    _, node, loop = loop_node(graph, "f/loop")
    body = loop.body
    assert isinstance(body.outputs, tuple)
    reordered = dataclasses.replace(loop, body=rebuilt(body, body.nodes, outputs=tuple(reversed(body.outputs))))
    first = refused(validate(replace_node(graph, "f/loop", lambda n: dataclasses.replace(n, what=reordered))), "values", "f/loop")
    assert "graph computes (grid(3, init=(x, y), carry=(mul(carry@1.1, 2.0), add(carry@1.0, 1.0)))[0]" in first.reason


# -- (7) a callee's parameter pointed at the wrong argument; a callee pointed at the wrong dim scope -----


def _calling() -> Function:
    a, b = Var("a", F4), Var("b", F4)
    g = Function("g", (a, b), named(ops.sub(a, b), 5, "d"))
    x, y = Var("x", F4), Var("y", F4)
    return Function("f", (x, y), Call(g, (x, y), span=span(1, "r")))


def test_a_parameter_pointed_at_the_wrong_argument_is_refused_at_the_callee_node() -> None:
    graph = lower(_calling())
    assert validate(graph).ok
    enter = next(i for i, n in enumerate(graph.nodes) if isinstance(n.what, EnterCall))

    def wrong(node: ForwardNode) -> ForwardNode:  # parameter a reads the boundary's field 1, b's argument
        assert node.reads == (Read(enter + 2, (0,)), Read(enter + 2, (1,)))
        return dataclasses.replace(node, reads=(Read(enter + 2, (1,)), Read(enter + 2, (1,))))

    first = refused(validate(replace_node(graph, "f/g/d", wrong)), "values", "f/g/d")
    assert first.description == "corrupt.tf.py:5:1 d = sub(a, b)"
    assert first.reason == "the program computes sub(x, y), the graph computes sub(y, y)"


N, B = DimVar("N"), DimVar("B")


def _scoped_callee() -> Function:
    a = Var("a", f32[N])
    ones = named(ops.full(shape=(N,), value=1.0, dtype=f32), 6, "ones")
    g = Function("g", (a,), named(ops.add(a, ones), 7, "s"))
    x = Var("x", f32[B])
    return Function("f", (x,), Call(g, (x,), span=span(1, "r")))


def test_a_callee_node_pointed_at_the_wrong_dim_scope_is_refused() -> None:
    """``full(shape=(N,))`` in ``g`` must see ``g``'s ``N``; pointed at the entry's scope it
    would not (there is no ``N`` there)."""
    graph = lower(_scoped_callee())
    assert validate(graph).ok
    assert graph.nodes[node_index(graph.body, "f/g/ones")].scope == 1
    entry_scoped = replace_node(graph, "f/g/ones", lambda n: dataclasses.replace(n, scope=0))
    first = refused(validate(entry_scoped), "values", "f/g/ones")
    assert first.reason == (
        "the program computes full(shape=(N,), value=1.0, dtype=f32, dims=g(x)), "
        "the graph computes full(shape=(N,), value=1.0, dtype=f32)"
    )
    with pytest.raises(EvalError, match="N"):  # the corruption is real: N is unbound in the entry's scope
        entry_scoped.run(torch.ones(3))


def test_a_boundary_opening_the_wrong_scope_is_refused() -> None:
    graph = lower(_scoped_callee())
    enter = next(i for i, n in enumerate(graph.nodes) if isinstance(n.what, EnterCall))
    nodes = list(graph.nodes)
    nodes[enter] = dataclasses.replace(nodes[enter], what=dataclasses.replace(nodes[enter].what, callee_scope=0))
    report = validate(with_body(graph, rebuilt(graph.body, nodes)))
    assert ("scopes", "f/g/ones") in found(report)
    assert "computes in dim scope 1, which no call boundary before it opens" in str(report)


def test_a_boundary_opening_a_scope_past_the_scope_table_is_refused() -> None:
    """The boundary and its callee's nodes moved to scope ``scope_count``: the run would index
    its scope table out of range; validation refuses the boundary (issue #28)."""
    graph = lower(_scoped_callee())
    past = graph.scope_count
    nodes = []
    for n in graph.nodes:
        if isinstance(n.what, EnterCall):
            n = dataclasses.replace(n, what=dataclasses.replace(n.what, callee_scope=past))
        elif n.scope == 1:
            n = dataclasses.replace(n, scope=past)
        nodes.append(n)
    corrupted = with_body(graph, rebuilt(graph.body, nodes))
    report = validate(corrupted)
    assert not report.ok
    assert f"opens dim scope {past}; a call boundary opens one of 1..{past - 1}" in str(report)
    with pytest.raises(EvalError):  # the corruption is real: the run cannot open that scope
        corrupted.run(torch.ones(3))
