"""The explorer page tells the truth (issue #29 F), checked on its data, without a browser: the
Program pane is the file itself (a location file:L:C is line L of the pane), slot names are
unambiguous inside loop bodies, a failed run keeps what the lowered route computed before the
failure, the frees column wraps, and a parameter passed through two calls reads "t → t"."""

import re
from pathlib import Path

import torch

import tfexec
from tfexec.explain.model import page_model
from tfexec.explain.page import _asset
from tfexec.explain.picture import render
from tfexec.explain.sources import printed_source

from explain_programs import FAILING_LOOP, TILED, entry

_WHERE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+) ")


def _tiled() -> tfexec.Function:
    return entry(TILED.read_text(encoding="utf-8"), str(TILED))


def _model(fn: tfexec.Function, *inputs: torch.Tensor) -> dict[str, object]:
    data: dict[str, object] = page_model(fn, tuple(inputs), "t", "a").data
    return data


def test_the_program_pane_is_the_file_and_each_location_is_its_line() -> None:
    data = _model(_tiled(), torch.randn(128, 64), torch.randn(64, 128))
    source = data["source"]
    assert isinstance(source, dict) and source["text"] == TILED.read_text(encoding="utf-8")
    spans = {(s[0], s[1]): s[3] for s in source["spans"]}
    rows = data["rows"]
    assert isinstance(rows, list)
    located = 0
    for row in rows:
        m = _WHERE.match(row["where"] or "")
        if m is None or row["kind"] in ("input", "frontier", "carry", "index"):
            continue
        line, col = int(m["line"]), int(m["col"]) - 1
        assert row["i"] in spans.get((line, col), []), (row["where"], row["label"])
        located += 1
    assert located >= 7  # acc0, the loop, t, pa, pb, matmul, add
    full = next(r for r in rows if r["name"] == "acc0")
    assert full["where"].startswith(f"{TILED}:6:12")
    assert (6, 11) in spans and source["text"].split("\n")[5][11:].startswith("full(")


def test_a_program_without_its_file_shows_the_printed_text(tmp_path: Path) -> None:
    path = tmp_path / "p.tf.py"
    path.write_text("# my program\n@entry\ndef f(x: f32[4]) -> f32[4]:\n    return exp(x)\n", encoding="utf-8")
    fn = entry(path.read_text(encoding="utf-8"), str(path))
    assert printed_source(fn).text.startswith("# my program")
    path.write_text("# edited since\n\n\n\n@entry\ndef f(x: f32[4]) -> f32[4]:\n    return exp(x)\n", encoding="utf-8")
    shown = printed_source(fn)  # the file moved under the program: its spans would point at the wrong text
    assert not shown.text.startswith("# ") and "def f(x: f32[4]) -> f32[4]:" in shown.text
    assert printed_source(entry(FAILING_LOOP, "not-a-file.tf.py")).text.startswith("def f(a: f32[4, 100])")


def test_slot_names_are_unambiguous_inside_loop_bodies() -> None:
    data = _model(_tiled(), torch.randn(128, 64), torch.randn(64, 128))
    rows = data["rows"]
    assert isinstance(rows, list)
    names = [r["sn"] for r in rows]
    assert len(set(names)) == len(names)  # %2 outside and slot 2 of the body are two names
    loop = next(r for r in rows if r["kind"] == "loop")
    body = [r for r in rows if r["body"] == loop["i"]]
    assert body and all(r["sn"] == f"{loop['sn']}.{r['slot']}" for r in body)
    add = next(r for r in body if r["op"].startswith("add("))
    assert re.fullmatch(rf"add\({re.escape(loop['sn'])}\.\d+, {re.escape(loop['sn'])}\.\d+\)", add["op"]), add["op"]
    assert all(read[1].startswith(loop["sn"] + ".") for read in add["reads"])
    freed = [f for r in body for f in r["frees"]]
    assert freed and all(f.startswith(loop["sn"] + ".") for f in freed)


def test_a_failed_run_keeps_what_the_lowered_route_computed_before_the_failure() -> None:
    data = _model(entry(FAILING_LOOP, "loop.tf.py"), torch.randn(4, 100))
    values = data["values"]
    assert isinstance(values, dict)
    for key in ("f/acc0", "f/acc[0]/t", "f/acc[0]/pa", "f/acc[1]/pa", "f/acc[1]/%5"):
        assert values[key].get("eq"), key  # computed by both routes, and equal
    assert "f/acc[2]/pa" not in values  # the failing node of the failing iteration: no value
    assert values["f/acc[2]/t"] == {"d": values["f/acc[2]/t"]["d"]}  # inside the failing iteration, the direct route only
    verdict = data["verdict"]
    assert isinstance(verdict, dict)
    (loop,) = [int(L) for L in data["loops"]]  # type: ignore[union-attr]
    assert verdict["iterations"] == {loop: 2}
    assert data["counts"] == {"f/acc": 3}


def test_the_frees_column_wraps_instead_of_being_cut() -> None:
    css = _asset("page.css")
    rules = [body for selector, body in re.findall(r"([^{}]+)\{([^}]*)\}", css) if "c-frees" in selector]
    assert rules and not any("nowrap" in r or "ellipsis" in r or "overflow: hidden" in r for r in rules)
    assert any("white-space: normal" in r for r in rules)


TWO_CALLS = """\
def inner(t: f32[4]) -> f32[4]:
    return exp(t)

def outer(t: f32[4]) -> f32[4]:
    return inner(t)

@entry
def f(x: f32[4]) -> f32[4]:
    return outer(x)
"""


def test_a_parameter_passed_through_two_calls_is_labelled_with_an_arrow() -> None:
    graph = tfexec.lower(entry(TWO_CALLS, "calls.tf.py"))
    for form in ("dot", "mermaid"):
        text = render(graph, form)
        assert "t \u2192 t" in text and "t/t" not in text
