"""The listing of a ``ForwardGraph`` (``str(graph)``): the snoc list, one line per slot.

Each line says what fills the slot — an input, or a node with its key (``(op)`` for a node
without one), its op, the slots it reads (``%3``; ``%3[1]`` for a field of a tuple-valued
slot), its declared type and the HIR node it came from. A loop's body is listed under its
node, indented, with its own slots: the frontier values and carries it is passed, the
index, then its nodes. Every read points to an earlier line.
"""

from tfexec.forward.kinds import RunLoop
from tfexec.forward.run import Body, leaves
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Function


def listing(fn: Function, body: Body, n_nodes: int) -> str:
    """The slot listing of a graph lowered from ``fn`` (its ``body``, ``n_nodes`` nodes in all;
    see the module docstring). ``ForwardGraph.__str__`` is its one caller: the graph sits above."""
    rows: list[tuple[str, ...]] = []
    for i, p in enumerate(fn.params):
        rows.append((str(i), f"input {p.name}", "", "", str(p.type), ""))
    _body_rows(body, rows, "")
    outputs = " ".join(str(r) for r in leaves(body.outputs))
    head = f"lowered {fn.name}: {len(fn.params)} input(s), {n_nodes} node(s); outputs {outputs}"
    return head + "\n" + _table(rows)


def _body_rows(body: Body, rows: list[tuple[str, ...]], indent: str) -> None:
    n = body.data.n_inputs
    for j, node in enumerate(body.nodes):
        reads = " ".join(str(r) for r in node.reads) or "-"
        label = node.key or f"({node.what.describe()})"
        where = describe_expr(node.source)
        rows.append((indent + str(n + j), label, node.what.describe(), reads, str(node.type or "-"), where))
        what = node.what
        if isinstance(what, RunLoop):
            inner = indent + "    "
            rows.append((inner + f"loop body of slot {n + j}, run once per iteration:", "", "", "", "", ""))
            for k in range(what.body.data.n_inputs):
                if k < what.n_front:
                    role = f"frontier value, outer {node.reads[k]}"
                elif k == what.n_front:
                    role = "index"
                else:
                    role = f"carry, starts as outer {node.reads[k - 1]}"
                rows.append((inner + str(k), role, "", "", "", ""))
            _body_rows(what.body, rows, inner)
            outs = " ".join(str(r) for r in leaves(what.body.outputs))
            rows.append((inner + f"body outputs: {outs}", "", "", "", "", ""))


def _table(rows: list[tuple[str, ...]]) -> str:
    headers = ("slot", "key", "op", "reads", "type", "source")
    cells = [headers, *rows]
    widths = [max(len(r[i]) for r in cells if r[1] or r[2]) for i in range(len(headers))]
    lines = []
    for r in cells:
        if not (r[1] or r[2]):  # a note line (loop body header, outputs)
            lines.append("  " + r[0])
            continue
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return "\n".join(lines)
