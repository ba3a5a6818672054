"""Where each node is written in the printed text (tfexec.explain.sources): the program is
printed with print_ir, parsed back and paired node by node, so a span's text is the node's."""

import tfexec
from tfexec.explain.outline import outline
from tfexec.explain.sources import printed_source

from explain_programs import CALLS, LLAMA, drifting, entry, flash


def _span_texts(target: "tfexec.Function | tfexec.LoadedModule") -> dict[str, str]:
    source = printed_source(target)
    lines = source.text.split("\n")
    out = {}
    for row in outline(tfexec.lower(target)).rows:
        span = source.spans.get(id(row.source)) if row.source is not None else None
        if span is not None:
            out[f"{row.index} {row.label}"] = lines[span.line - 1][span.column : span.column + span.length]
    return out


def test_every_op_of_flash_attention_is_its_own_text() -> None:
    fn = flash()
    texts = _span_texts(fn)
    lines = outline(tfexec.lower(fn))
    ops = [r for r in lines.rows if r.kind == "op"]
    assert len(ops) == 22 and all(f"{r.index} {r.label}" in texts for r in ops)
    assert texts[next(f"{r.index} {r.label}" for r in ops if r.name == "kt")] == "slice(k, (start, 0), sizes=(16, 32))"
    loop = next(r for r in lines.rows if r.kind == "loop")
    assert texts[f"{loop.index} {loop.label}"] == "grid(T // 16, m0, l0, acc0)"
    carries = {t for k, t in texts.items() if k.split(" ", 1)[1] in ("m", "l", "acc", "j")}
    assert carries == {"m", "l", "acc", "j"}  # a loop's index and carries are their names in the for line


def test_inputs_weights_and_callee_nodes_of_the_llama_block() -> None:
    texts = _span_texts(tfexec.load_module(LLAMA))
    values = set(texts.values())
    assert "x: f32[S, 64]" in values  # the parameter
    assert "attn_wq" in values  # a weight: its declaration's name
    assert "reshape(t, shape=(S, 4, 16))" in values  # a callee's node (inlined three times, one span)
    assert "rope(heads(matmul(xn, attn_wq)), cos_t, sin_t)" in values  # a call


def test_a_callee_inlined_twice_maps_both_instances_to_one_span() -> None:
    fn = entry(CALLS)
    source = printed_source(fn)
    inner = [r for r in outline(tfexec.lower(fn)).rows if r.key and r.key.startswith("f/double")]
    assert len(inner) == 2 and inner[0].source is inner[1].source and id(inner[0].source) in source.spans


def test_a_program_the_printer_cannot_round_trip_has_no_spans_and_says_why() -> None:
    source = printed_source(drifting())  # a user op outside the text form's catalogue
    assert source.spans == {} and source.note is not None and "does not parse back" in source.note
    assert "drift_test_op(tanh(x))" in source.text
