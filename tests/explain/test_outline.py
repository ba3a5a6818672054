"""The outline of a lowered graph (tfexec.explain.outline): the rows both the explorer and
the pictures draw — every slot once, reads only backwards, loop bodies with their inputs,
keys as templates, types in the caller's dims, small constants with a literal."""

import tfexec
from tfexec.explain.outline import TOP, outline
from tfexec.forward.kinds import RunLoop

from explain_programs import CALLS, LLAMA, entry, flash


def test_every_slot_is_one_row_and_reads_point_only_backwards() -> None:
    graph = tfexec.lower(flash())
    lines = outline(graph)
    body = next(n.what.body for n in graph.nodes if isinstance(n.what, RunLoop))
    assert len(lines.rows) == graph.n_inputs + len(graph.nodes) + body.data.n_inputs + len(body.nodes)
    assert [r.index for r in lines.rows] == list(range(len(lines.rows)))
    for row in lines.rows:
        assert all(target < row.index for target in row.read_rows), row
        assert all(lines.rows[t].body == row.body for t in row.read_rows), row
        assert all(lines.rows[t].slot == rd.slot for t, rd in zip(row.read_rows, row.reads)), row


def test_a_loop_body_lists_its_frontier_index_and_carries_then_its_nodes() -> None:
    lines = outline(tfexec.lower(flash()))
    (loop_row,) = [r for r in lines.rows if r.kind == "loop"]
    loop = lines.loops[loop_row.index]
    inputs = [lines.rows[i] for i in loop.rows[:7]]
    assert [(r.kind, r.name) for r in inputs] == [
        ("frontier", "k"), ("frontier", "q"), ("frontier", "v"), ("index", "j"),
        ("carry", "m"), ("carry", "l"), ("carry", "acc"),
    ]
    m = inputs[4]
    assert lines.rows[m.origin or 0].name == "m0"  # its initial value
    assert m.feedback is not None and lines.rows[m.feedback].name == "m_new"  # the body output feeding it
    assert [lines.rows[o].name for o in loop.outputs] == ["m_new", "l_new", "acc_new"]
    s = next(r for r in lines.rows if r.name == "s")
    assert s.key == "flash/%10[*]/s" and s.loops == (loop_row.index,) and s.body == loop_row.index
    assert s.call_form(lambda p: str(s.reads[p])) == "mul(%10, 0.176777)"  # the weak scalar has no slot


def test_frees_are_the_bodys_and_the_output_is_never_freed() -> None:
    graph = tfexec.lower(flash())
    lines = outline(graph)
    top = [r for r in lines.rows if r.body == TOP and r.node is not None]
    assert [r.frees for r in top] == list(graph.body.frees)
    assert all(lines.rows[o].slot not in sum((r.frees for r in top), ()) for o in lines.outputs)


def test_calls_show_the_callers_dims_and_the_calls_value_key() -> None:
    lines = outline(tfexec.lower(entry(CALLS)))
    calls = [r for r in lines.rows if r.kind == "call"]
    assert [(c.op, c.name, c.value_key) for c in calls] == [("call double", "w", "f/w"), ("call double", "v", "f/v")]
    inner = [r for r in lines.rows if r.key and r.key.startswith("f/double")]
    assert [r.key for r in inner] == ["f/double/%1", "f/double#1/%1"]
    for row, call in zip(inner, calls):
        assert row.type == "f32[B, 4]" and row.declared == "f32[N, 4]"
        assert row.clusters == (call.index,)
        assert row.result_of == call.index
        assert lines.producer(row, 0)[2] == "t"  # read through the boundary: the parameter it was passed as


def test_small_constants_have_a_literal_and_large_ones_do_not() -> None:
    lines = outline(tfexec.lower(entry(CALLS)))
    constants = [r for r in lines.rows if r.kind == "constant"]
    assert [(r.name, r.literal) for r in constants] == [("c", None), ("", "2.0")]


def test_weights_are_named_rows() -> None:
    lines = outline(tfexec.lower(tfexec.load_module(LLAMA)))
    weights = [r.name for r in lines.rows if r.kind == "weight"]
    assert "attn.wq" in weights and "mlp.w_down" in weights
    assert all(r.label for r in lines.rows)
