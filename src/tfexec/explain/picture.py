"""Pictures of a lowered ``ForwardGraph`` a student can read: Mermaid or Graphviz dot text.

Drawn from the same outline as the explorer page (``tfexec.explain.outline``), so nodes
carry the same names:

* a node is labelled ``name = op(operands, attributes)`` and its type in the **caller's
  dims**; an operand is written as what it is called — the callee parameter it was passed
  as, or its producer's binding — else ``·``;
* small **constants are folded** into their consumers' labels (``mul(·, 0.25)``); a larger
  one is drawn once, named; **weights** are drawn once each, by name;
* an **inlined call** is a cluster holding its callee's nodes; its boundary is not a box —
  each argument's edge goes straight to the callee node that reads it, labelled with the
  parameter's name;
* a **loop body** is a cluster with its real inputs: each frontier value (a dashed edge
  from where it comes from, "every iteration"), the index, and each carry (a dashed edge
  from its initial value and a dotted "next iteration" edge from the body output feeding
  it); the loop's own node, after the cluster, takes the body outputs "after the last
  iteration". A read of one field of a tuple-valued node is an edge labelled with it.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from tfexec.explain.outline import Outline, Row, outline
from tfexec.forward.graph import ForwardGraph

PictureFormat = Literal["mermaid", "dot"]
LABEL_WIDTH = 56
"""A label line longer than this is cut with an ellipsis (the whole text is in the dot tooltip)."""


@dataclass(frozen=True, slots=True)
class Box:
    """One drawn node: its id, label lines, shape kind, tooltip and enclosing cluster ("" at top)."""

    id: str
    lines: tuple[str, ...]
    kind: str
    tooltip: str
    cluster: str


@dataclass(frozen=True, slots=True)
class Edge:
    """One drawn edge; ``style`` is ``solid``, ``dashed`` (into a loop body) or ``dotted``
    (loop plumbing); ``constraint`` False for an edge that must not rank its ends (feedback)."""

    src: str
    dst: str
    label: str = ""
    style: str = "solid"
    constraint: bool = True


@dataclass
class Picture:
    """What a picture draws, independent of its format."""

    boxes: list[Box] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    clusters: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    """Cluster id -> (title, parent cluster id or "", kind ``call`` or ``loop``), in drawing order."""


def render(graph: ForwardGraph, fmt: PictureFormat = "mermaid") -> str:
    """The graph as Mermaid (``flowchart TD``) or Graphviz dot text (see the module docstring)."""
    picture = draw(outline(graph))
    return _mermaid(picture) if fmt == "mermaid" else _dot(picture)


def draw(lines: Outline) -> Picture:
    """The boxes, edges and clusters of an outline."""
    pic = Picture()
    ids: dict[int, str] = {}
    weights: dict[str, str] = {}
    for row in lines.rows:
        if row.kind in ("call", "loop"):
            parent = _cluster_id(row.clusters[-1]) if row.clusters else ""
            if row.kind == "call":
                title = f"call {row.op.removeprefix('call ')}" + (f" \u2192 {row.name}" if row.name else "")
                pic.clusters[_cluster_id(row.index)] = (title + f"  [{row.value_key}]", parent, "call")
            else:
                body = lines.loops[row.index]
                index = lines.rows[body.index].name
                pic.clusters[_cluster_id(row.index)] = (
                    f"loop body: {index} = 0 \u2026 {body.extent} - 1, run once per iteration", parent, "loop")
    for row in lines.rows:
        cluster = _cluster_id(row.clusters[-1]) if row.clusters else ""
        if row.kind == "call" or (row.kind == "constant" and row.literal is not None):
            continue
        if row.kind == "weight":
            if row.name not in weights:
                weights[row.name] = f"w{len(weights)}"
                pic.boxes.append(Box(weights[row.name], (f"weight {row.name}", row.type), "weight", row.where, ""))
            ids[row.index] = weights[row.name]
            continue
        ids[row.index] = f"n{row.index}"
        pic.boxes.append(Box(ids[row.index], _label(lines, row), row.kind, row.where, cluster))
    for row in lines.rows:
        if row.index not in ids:
            continue
        dst = ids[row.index]
        if row.kind == "frontier" and row.origin is not None:
            pic.edges.extend(_edge_from(lines, ids, row, None, dst, "every iteration", "dashed"))
        elif row.kind == "carry" and row.origin is not None:
            pic.edges.extend(_edge_from(lines, ids, row, None, dst, "initial", "dashed"))
            if row.feedback is not None and row.feedback in ids:
                pic.edges.append(Edge(ids[row.feedback], dst, "next iteration", "dotted", constraint=False))
        elif row.kind == "loop":
            body = lines.loops[row.index]  # its reads are drawn into the body's frontier and carry inputs
            for out in body.outputs:
                if out in ids:
                    pic.edges.append(Edge(ids[out], dst, "after the last iteration", "dotted"))
        else:
            for k in range(len(row.reads)):
                pic.edges.extend(_edge_from(lines, ids, row, k, dst, "", "solid"))
    return pic


def _cluster_id(row: int) -> str:
    return f"c{row}"


def _edge_from(lines: Outline, ids: dict[int, str], row: Row, position: int | None, dst: str, label: str,
               style: str) -> Iterator[Edge]:
    """The edge bringing read ``position`` of ``row`` (``None``: a body input's origin) from its producer."""
    if position is None:  # a body input: frontier value k is the loop's read k, carry c its read n_front + c
        loop_row = lines.rows[row.body]
        producer, path, passed = lines.producer(loop_row, row.slot if row.kind == "frontier" else row.slot - 1)
    else:
        producer, path, passed = lines.producer(row, position)
    if producer.kind == "constant" and producer.literal is not None:
        return
    src = ids.get(producer.index)
    if src is None:
        return
    text = " ".join(t for t in (passed, _field_name(lines, producer, path), label) if t)
    yield Edge(src, dst, text, style)


def _field_name(lines: Outline, producer: Row, path: tuple[int, ...]) -> str:
    if not path:
        return ""
    if producer.kind == "loop" and len(path) == 1:
        carries = lines.loops[producer.index].carries
        if path[0] < len(carries):
            return lines.rows[carries[path[0]]].name
    return "".join(f"[{i}]" for i in path)


def _label(lines: Outline, row: Row) -> tuple[str, ...]:
    if row.kind == "input":
        return (row.name, row.type)
    if row.kind == "frontier":  # an unnamed value is known by its slot, which a picture does not show
        return ("from outside the loop" if row.name.startswith("%") else f"{row.name} (from outside the loop)", row.type)
    if row.kind == "index":
        return (f"{row.name}: the loop index", row.type)
    if row.kind == "carry":
        return (f"{row.name}: carry", row.type)
    if row.kind == "constant":
        return ((f"{row.name} = " if row.name else "") + "constant", row.type)
    if row.kind == "error":
        return ("error", row.where)
    if row.kind == "loop":
        body = lines.loops[row.index]
        names = ", ".join(lines.rows[c].name for c in body.carries)
        head = (f"{row.name} = " if row.name else "") + f"grid({body.extent})" + (f" \u2192 ({names})" if names else "")
        return (head, row.type)

    def operand(position: int) -> str:
        producer, path, passed = lines.producer(row, position)
        if producer.kind == "constant" and producer.literal is not None:
            return producer.literal
        called = lines.rows[producer.result_of].name if producer.result_of is not None else ""
        own = producer.name or called
        name = passed or (own if not path else _field_name(lines, producer, path) or own)
        return name or "\u00b7"

    return (row.call_form(operand) if not row.name else f"{row.name} = {row.call_form(operand)}", row.type)


def _cut(text: str) -> str:
    return text if len(text) <= LABEL_WIDTH else text[: LABEL_WIDTH - 1] + "\u2026"


# -- formats ------------------------------------------------------------------------------


def _tree(pic: Picture) -> dict[str, list[str]]:
    children: dict[str, list[str]] = {}
    for cid, (_, parent, _) in pic.clusters.items():
        children.setdefault(parent, []).append(cid)
    return children


def _mermaid_text(text: str) -> str:
    return text.replace("#", "#35;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


_MERMAID_SHAPES = {"input": ('(["', '"])'), "weight": ('[("', '")]'), "loop": ('[["', '"]]'),
                   "index": ('{{"', '"}}'), "carry": ('(["', '"])'), "frontier": ('>"', '"]'), "error": ('[/"', '"/]')}


def _mermaid(pic: Picture) -> str:
    out = ["flowchart TD"]
    children = _tree(pic)

    def emit(cluster: str, indent: str) -> None:
        for box in pic.boxes:
            if box.cluster == cluster:
                left, right = _MERMAID_SHAPES.get(box.kind, ('["', '"]'))
                out.append(f"{indent}{box.id}{left}{'<br>'.join(_mermaid_text(_cut(t)) for t in box.lines)}{right}")
        for child in children.get(cluster, []):
            title = pic.clusters[child][0]
            out.append(f'{indent}subgraph {child}["{_mermaid_text(title)}"]')
            emit(child, indent + "  ")
            out.append(f"{indent}end")

    emit("", "  ")
    arrows = {"solid": "-->", "dashed": "-.->", "dotted": "-.->"}
    for e in pic.edges:
        label = f'|"{_mermaid_text(e.label)}"|' if e.label else ""
        out.append(f"  {e.src} {arrows[e.style]}{label} {e.dst}")
    return "\n".join(out) + "\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


_DOT_SHAPES = {"input": "shape=ellipse", "weight": "shape=cylinder", "loop": "shape=box3d",
               "index": "shape=hexagon", "carry": "shape=ellipse, style=bold", "frontier": "shape=ellipse, style=dashed",
               "constant": "shape=note", "error": "shape=octagon, color=red3, fontcolor=red3"}


def _dot(pic: Picture) -> str:
    out = ["digraph forward {", '  graph [fontname="monospace", fontsize=10, newrank=true];',
           '  node [shape=box, style=rounded, fontname="monospace", fontsize=10];', '  edge [fontname="monospace", fontsize=9];']
    children = _tree(pic)

    def emit(cluster: str, indent: str) -> None:
        for box in pic.boxes:
            if box.cluster == cluster:
                label = "\\n".join(_dot_text(_cut(t)) for t in box.lines)
                shape = _DOT_SHAPES.get(box.kind, "")
                attrs = f'label="{label}", tooltip="{_dot_text(box.tooltip)}"' + (f", {shape}" if shape else "")
                out.append(f"{indent}{box.id} [{attrs}];")
        for child in children.get(cluster, []):
            title, _, kind = pic.clusters[child]
            style = 'style="rounded,dashed"; color=gray40' if kind == "call" else 'style="rounded,filled"; fillcolor="#eef3fa"; color="#6b8bb8"'
            out.append(f"{indent}subgraph cluster_{child} {{")
            out.append(f'{indent}  label="{_dot_text(title)}"; labeljust=l; {style};')
            emit(child, indent + "  ")
            inputs = [b.id for b in pic.boxes if b.cluster == child and b.kind in ("frontier", "index", "carry")]
            if inputs:  # a loop body's inputs side by side at its top
                out.append(f"{indent}  {{ rank=same; {'; '.join(inputs)}; }}")
            out.append(f"{indent}}}")

    emit("", "  ")
    for e in pic.edges:
        attrs = []
        if e.label:
            attrs.append(f'label="{_dot_text(e.label)}"')
        if e.style != "solid":
            attrs.append(f"style={e.style}")
        if e.style == "dotted":
            attrs.append("color=gray35")
        if not e.constraint:
            attrs.append("constraint=false")
        out.append(f"  {e.src} -> {e.dst}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    out.append("}")
    return "\n".join(out) + "\n"


__all__ = ["Box", "Edge", "Picture", "PictureFormat", "draw", "render"]
