"""Pictures of a lowered ``ForwardGraph``: Mermaid or Graphviz dot text.

Nodes are labelled with their key (binding), op and declared type; plumbing nodes (function
boundaries, tuple projections) are drawn small; loop bodies are subgraphs.
"""

from collections.abc import Sequence
from typing import Literal

from tfexec.forward.graph import ForwardGraph
from tfexec.forward.kinds import RunLoop
from tfexec.forward.run import Body
from tfexec.forward.node import ForwardNode
from tfexec.ir.describe import op_label

PictureFormat = Literal["mermaid", "dot"]


def _label(node: ForwardNode) -> str:
    op = op_label(node.source)
    name = (node.key or "").rsplit("/", 1)[-1]
    kind = f"{name} = {op}" if name and not name.startswith("%") else op
    return f"{kind}: {node.type}" if node.type is not None else kind


def _escape(text: str, fmt: PictureFormat) -> str:
    if fmt == "mermaid":
        return text.replace('"', "#quot;")
    return text.replace("\\", "\\\\").replace('"', '\\"')


def render(graph: ForwardGraph, fmt: PictureFormat = "mermaid") -> str:
    """The graph as Mermaid (``flowchart TD``) or Graphviz dot text."""
    lines = ["flowchart TD"] if fmt == "mermaid" else ["digraph forward {", "  node [shape=box, fontname=monospace];"]
    params = [p.name for p in graph.function.params]
    names = [f"in{i}" for i in range(graph.n_inputs)]
    for i, name in enumerate(names):
        text = _escape(f"input {params[i] if i < len(params) and len(params) == graph.n_inputs else i}", fmt)
        lines.append(f'  {name}(["{text}"])' if fmt == "mermaid" else f'  {name} [label="{text}", shape=ellipse];')
    _body(graph.body.data.nodes, graph.body.data.n_inputs, names, "", lines, fmt, [0])
    if fmt == "dot":
        lines.append("}")
    return "\n".join(lines) + "\n"


def _body(
    nodes: Sequence[ForwardNode], n_inputs: int, slot_names: list[str], prefix: str, lines: list[str],
    fmt: PictureFormat, counter: list[int],
) -> None:
    names = list(slot_names)
    for node in nodes:
        counter[0] += 1
        name = f"{prefix}n{counter[0]}"
        text = _escape(_label(node), fmt)
        if fmt == "mermaid":
            lines.append(f'  {name}["{text}"]')
        else:
            style = ", style=dashed" if node.type is None else ""
            lines.append(f'  {name} [label="{text}"{style}];')
        for read in node.reads:
            if read.slot < len(names):
                lines.append(f"  {names[read.slot]} --> {name}" if fmt == "mermaid" else f"  {names[read.slot]} -> {name};")
        if isinstance(node.what, RunLoop):
            _loop(node, node.what.body, name, lines, fmt, counter)
        names.append(name)


def _loop(node: ForwardNode, body: Body, owner: str, lines: list[str], fmt: PictureFormat, counter: list[int]) -> None:
    counter[0] += 1
    cluster = f"loop{counter[0]}"
    title = _escape(f"body of {node.key or 'loop'} (per iteration)", fmt)
    inputs = [f"{cluster}_in{i}" for i in range(body.data.n_inputs)]
    if fmt == "mermaid":
        lines.append(f'  subgraph {cluster}["{title}"]')
        for name in inputs:
            lines.append(f'  {name}(["slot"])')
    else:
        lines.append(f"  subgraph cluster_{cluster} {{")
        lines.append(f'  label="{title}";')
        for name in inputs:
            lines.append(f'  {name} [label="slot", shape=ellipse];')
    _body(body.data.nodes, body.data.n_inputs, inputs, f"{cluster}_", lines, fmt, counter)
    lines.append("  end" if fmt == "mermaid" else "  }")
    lines.append(f"  {cluster} -.-> {owner}" if fmt == "mermaid" else f"  {inputs[0] if inputs else owner} -> {owner} [style=dotted];")
