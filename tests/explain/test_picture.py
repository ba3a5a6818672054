"""``tfexec graph`` pictures (tfexec.explain.picture) a student can read: constants folded,
weights by name, calls as clusters, loop bodies with their real inputs, the caller's dims —
and, where Graphviz is installed, rendered to PNG."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import tfexec
from tfexec.cli import main
from tfexec.explain.picture import render

from explain_programs import CALLS, FLASH, LLAMA, entry, flash

_MERMAID_NODE = re.compile(r"^\s+(\w+)[\[\(\{>]", re.M)
_MERMAID_EDGE = re.compile(r"^\s+(\w+) -\.?->(?:\|\"([^\"]*)\"\|)? (\w+)$", re.M)
_DOT_NODE = re.compile(r"^\s+(\w+) \[label=\"([^\"]*)\"", re.M)
_DOT_EDGE = re.compile(r"^\s+(\w+) -> (\w+)(?: \[(.*)\])?;$", re.M)


def _labels(dot: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in _DOT_NODE.finditer(dot)}


def _edges(dot: str) -> list[tuple[str, str, str]]:
    return [(m.group(1), m.group(2), m.group(3) or "") for m in _DOT_EDGE.finditer(dot)]


def test_the_llama_block_has_named_weights_call_clusters_and_no_orphan_boxes() -> None:
    graph = tfexec.lower(tfexec.load_module(LLAMA))
    mermaid, dot = render(graph, "mermaid"), render(graph, "dot")
    for text in (mermaid, dot):
        assert "Constant" not in text and "ConstTensor" not in text and '"slot' not in text
    labels = _labels(dot)
    weights = sorted(v.split("\\n")[0] for v in labels.values() if v.startswith("weight "))
    assert weights == sorted(f"weight {w}" for w in ("attn_norm.weight", "attn.wq", "attn.wk", "attn.wv", "attn.wo",
                                                     "mlp_norm.weight", "mlp.w_gate", "mlp.w_up", "mlp.w_down",
                                                     "rope.inv_freq"))
    assert len(re.findall(r'label="call heads', dot)) == 3 and len(re.findall(r'label="call rope', dot)) == 2
    assert mermaid.count("subgraph ") == mermaid.count("\n  end") + mermaid.count("\n    end") == 5
    assert "masked = where(·, scores, -inf)" in dot and "scores = mul(·, 0.25)" in dot  # scalars folded
    assert "split = reshape(t, shape=(S, 4, 16))" in dot  # a callee node names its parameter
    ends = {n for e in _edges(dot) for n in e[:2]}
    assert ends <= set(labels) and set(labels) <= ends | {"n0"}  # every box is connected; every edge ends at a box
    passed = [e for e in _edges(dot) if 'label="t"' in e[2]]
    assert len(passed) == 3 * 1 + 2 * 3  # t goes straight to the callee nodes reading it: heads has 1, rope 3
    declared = set(_MERMAID_NODE.findall(mermaid))
    assert {e[0] for e in _MERMAID_EDGE.findall(mermaid)} | {e[2] for e in _MERMAID_EDGE.findall(mermaid)} <= declared


def test_a_loop_body_shows_its_frontier_index_and_carries_connected_to_their_sources() -> None:
    dot = render(tfexec.lower(flash()), "dot")
    labels = _labels(dot)
    by_text = {v.split("\\n")[0]: k for k, v in labels.items()}
    for name in ("q", "k", "v"):
        assert (by_text[name], by_text[f"{name} (from outside the loop)"], 'label="every iteration", style=dashed') in _edges(dot)
    assert "j: the loop index" in by_text
    for carry, init, new in (("m", "m0", "m_new"), ("l", "l0", "l_new"), ("acc", "acc0", "acc_new")):
        target = by_text[f"{carry}: carry"]
        sources = {e[0]: e[2] for e in _edges(dot) if e[1] == target}
        init_box = next(k for k, v in labels.items() if v.startswith(f"{init} = full("))
        new_box = next(k for k, v in labels.items() if v.startswith(f"{new} = "))
        assert "initial" in sources[init_box] and "next iteration" in sources[new_box]
        assert "constraint=false" in sources[new_box]
    loop = by_text["grid(T // 16) → (m, l, acc)"]
    div = by_text["div(acc, l)"]
    assert [e[2] for e in _edges(dot) if e[:2] == (loop, div)] == ['label="acc"', 'label="l"']
    assert "subgraph cluster_c" in dot and "loop body: j = 0 … T // 16 - 1" in dot


def test_constants_fold_or_are_drawn_once_named_and_callees_use_the_callers_dims() -> None:
    dot = render(tfexec.lower(entry(CALLS)), "dot")
    labels = list(_labels(dot).values())
    assert "z = add(y, 2.0)\\nf32[B, 4]" in labels  # the one-element constant, folded
    assert "c = constant\\nf32[5]" in labels  # five elements: one box, named
    inner = [v for v in labels if v.startswith("add(t, t)")]
    assert inner == ["add(t, t)\\nf32[B, 4]", "add(t, t)\\nf32[B, 4]"]  # the callee's N is the caller's B
    assert "N" not in dot.replace("NaN", "")


def test_the_graph_command_prints_both_formats(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", str(FLASH), "--format", "dot"]) == 0
    assert capsys.readouterr().out.startswith("digraph forward {")
    assert main(["graph", str(LLAMA)]) == 0
    assert capsys.readouterr().out.startswith("flowchart TD")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed (apt-get install -y graphviz)")
@pytest.mark.parametrize("name", ["llama_block", "flash_attention"])
def test_graphviz_renders_the_examples(name: str, tmp_path: Path) -> None:
    target = tfexec.load_module(LLAMA) if name == "llama_block" else flash()
    source = tmp_path / f"{name}.dot"
    source.write_text(render(tfexec.lower(target), "dot"), encoding="utf-8")
    png = tmp_path / f"{name}.png"
    done = subprocess.run(["dot", "-Tpng", str(source), "-o", str(png)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 50_000
    keep = os.environ.get("TFEXEC_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(keep) / f"graph-{name}.png")
