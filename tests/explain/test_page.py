"""The explorer page (tfexec.explain): its verdict names the failing node first, it records
both routes' values, and it is one self-contained file — nothing it could fetch."""

import json
import re

import torch

import tfexec
from tfexec.explain.model import page_model

from explain_programs import FAILING_LOOP, LLAMA, TILED, drifting, entry, flash, flash_inputs


def _data(page: str) -> dict[str, object]:
    match = re.search(r'<script type="application/json" id="tfexec-data">(.*?)</script>', page, re.S)
    assert match is not None
    data: dict[str, object] = json.loads(match.group(1))
    return data


def test_a_program_that_runs_is_ok_with_every_value_bitwise_equal() -> None:
    model = page_model(flash(), flash_inputs(), "t", "a")
    assert model.status == "ok" and "bitwise equal on both routes" in model.headline
    values = model.data["values"]
    assert isinstance(values, dict)
    assert values["flash/%10[0]/s"]["eq"] and values["flash/%10[1]/s"]["eq"]  # loop bodies per iteration
    assert model.data["counts"] == {"flash/%10": 2}
    assert values["slot:0"]["slot"]  # an input, from the lowered context


def test_a_failure_opens_on_the_failing_node_at_its_iteration() -> None:
    fn = entry(FAILING_LOOP, "loop.tf.py")
    model = page_model(fn, (torch.randn(4, 100),), "t", "a")
    assert model.status == "failed"
    verdict = model.data["verdict"]
    assert isinstance(verdict, dict)
    rows = model.data["rows"]
    assert isinstance(rows, list)
    failing = rows[verdict["row"]]
    assert failing["name"] == "pa" and failing["vkey"] == "f/acc[*]/pa"
    assert verdict["iterations"] == {failing["loops"][0]: 2}
    assert [e["route"] for e in verdict["errors"]] == ["both routes"]
    assert "loop.tf.py:6:14 pa = slice(a, (0, t), sizes=(4, 40))" in verdict["errors"][0]["text"]
    assert "both routes raise the same error" in model.headline


def test_routes_that_differ_open_on_the_first_differing_node() -> None:
    model = page_model(drifting(), (torch.randn(3, 4),), "t", "a")
    assert model.status == "differ"
    verdict = model.data["verdict"]
    assert isinstance(verdict, dict) and isinstance(model.data["rows"], list)
    assert model.data["rows"][verdict["row"]]["op"] == "drift_test_op(%1)"  # not tanh (%1), which agrees
    record = model.data["values"]["f/%2"]  # type: ignore[index]
    assert "12 of 12 element(s) differ" in record["diff"]["reason"] and "d" in record and "l" in record


def test_a_program_that_does_not_type_check_is_a_page_with_the_type_error() -> None:
    bad = entry("@entry\ndef g(x: f32[4]) -> f32[4]:\n    return matmul(x, x)\n", "bad.tf.py")
    model = page_model(bad, (torch.randn(4),), "t", "a")
    assert model.status == "failed" and model.data["rows"] == []
    assert "does not type-check" in model.headline and "TypeInferenceError" in model.headline


def test_the_page_is_self_contained_and_small() -> None:
    page = tfexec.explain(tfexec.load_module(LLAMA), torch.randn(8, 64))
    assert page.startswith("<!DOCTYPE html>") and len(page.encode()) < 300_000
    assert "default-src 'none'" in page  # the browser itself refuses any request the page might make
    for fetching in (r"\bsrc\s*=", r"<link\b", r"\burl\((?!#)", r"@import", r"https?://(?!www\.w3\.org/2000/svg)", r"fetch\(",
                     r"XMLHttpRequest", r"\bimport\("):
        assert not re.search(fetching, page), fetching
    data = _data(page)
    assert data["title"] == "tfexec explain: block" and isinstance(data["rows"], list) and len(data["rows"]) == 73


def test_text_in_the_data_cannot_end_the_script_element() -> None:
    page = tfexec.explain(flash(), *flash_inputs(), title="</script><b>x</b>", about="<!-- & -->")
    assert "</script><b>" not in page and "<!--" not in page.split("<body>")[1]
    data = _data(page)
    assert data["title"] == "</script><b>x</b>" and data["about"] == "<!-- & -->"
    assert "<title>&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;</title>" in page


def test_explain_checks_its_arguments() -> None:
    try:
        tfexec.explain("examples/mlp.tf.py")  # type: ignore[arg-type]
    except tfexec.ArgumentTypeError as exc:
        assert "explain(): argument target must be" in str(exc)
    else:
        raise AssertionError("a path is not a target")


def test_a_long_loop_records_its_first_iterations_within_a_size_budget() -> None:
    from tfexec.explain.model import MAX_ITERATIONS, MAX_SAMPLE_CELLS

    text = TILED.read_text(encoding="utf-8").replace("f32[128, K]", "f32[32, K]").replace("(128, 128)", "(32, 128)")
    text = text.replace("f32[128, 128]", "f32[32, 128]").replace("sizes=(128, 32)", "sizes=(32, 32)")
    fn = entry(text, "long.tf.py")
    k = 32 * (MAX_ITERATIONS + 16)
    model = page_model(fn, (torch.randn(32, k), torch.randn(k, 128)), "t", "a")
    assert model.status == "ok" and model.data["counts"] == {"tiled_matmul/acc": MAX_ITERATIONS + 16}
    values = model.data["values"]
    assert isinstance(values, dict)
    assert f"tiled_matmul/acc[{MAX_ITERATIONS - 1}]/pa" in values and f"tiled_matmul/acc[{MAX_ITERATIONS}]/pa" not in values
    cells = sum(len(str(v.get("v", {}).get("data", ""))) * 3 // 16 for v in values.values())
    assert cells <= MAX_SAMPLE_CELLS + 32 * 32  # the budget, and at most one value past it
    page = tfexec.explain(fn, torch.randn(32, k), torch.randn(k, 128))
    assert len(page.encode()) < 1_000_000
