"""Programs and helpers shared by the proof tests (tests/proofs/) and the notes' checker.

``ProofCount(tag)`` is the identity on its operand, registered with plain ``register_eval``,
and counts its invocations per tag: the lowering calls such a handler through the same
``dispatch`` the visitor uses, so the counts compare how often each route ran a node.
"""

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

import torch

import tfexec
from tfexec import EvaluateContext, Function, GridRegionExpr, Span, Value, Var, f32, i64, ops, register_eval
from tfexec.evaluator.visitor import evaluate_value
from tfexec.forward.graph import ForwardGraph
from tfexec.forward.kinds import RunLoop
from tfexec.forward.run import Body
from tfexec.ir.describe import describe_expr
from tfexec.ir.dims import DimVar

from shared_helpers import SameTypeOp

COUNTS: Counter[str] = Counter()


@dataclass(frozen=True, slots=True)
class ProofCount(SameTypeOp):
    """Identity on one operand; each handler call adds one to ``COUNTS[tag]``."""

    name: ClassVar[str] = "proof_count"
    tag: str = ""


@register_eval(ProofCount)
def _count(ctx: EvaluateContext) -> Value:
    op = ctx.op
    assert isinstance(op, ProofCount)
    COUNTS[op.tag] += 1
    return ctx.args[0]


def counted(tag: str, x: ops.Operand, binding: str | None = None) -> tfexec.Call:
    """``x`` through a counting identity tagged ``tag`` (bound to ``binding`` when given)."""
    span = Span("proof.tf.py", 1, 1, binding, f"proof_count({tag})") if binding else None
    return ops.apply(ProofCount(tag), x, span=span)


K = DimVar("K")


def _span(line: int, binding: str, text: str) -> Span:
    return Span("tiled.tf.py", line, 5, binding, text)


def tiled_matmul(tile: int = 32) -> Function:
    """The worked example: ``a @ b`` as a loop over ``K // tile`` tiles of the inner axis."""
    a, b = Var("a", f32[64, K]), Var("b", f32[K, 64])
    k, acc = Var("k", i64[()]), Var("acc", f32[64, 64])
    t = ops.dim_mul(k, tile, span=_span(4, "t", f"dim_mul(k, {tile})"))
    a_t = ops.slice(a, (0, t), sizes=(64, tile), span=_span(5, "a_t", f"slice(a, (0, t), sizes=(64, {tile}))"))
    b_t = ops.slice(b, (t, 0), sizes=(tile, 64), span=_span(6, "b_t", f"slice(b, (t, 0), sizes=({tile}, 64))"))
    p = ops.matmul(a_t, b_t, span=_span(7, "p", "matmul(a_t, b_t)"))
    step = ops.add(acc, p, span=_span(8, "step", "add(acc, p)"))
    zero = ops.full(shape=(64, 64), value=0.0, dtype=f32, span=_span(2, "zero", "full(shape=(64, 64), value=0.0, dtype=f32)"))
    loop = GridRegionExpr(
        K // tile, k, (zero,), (acc,), step, (step,), span=_span(3, "out", f"grid(K // {tile}, k, carries=(acc = zero))")
    )
    return Function("tiled", (a, b), loop)


def bodies(graph: ForwardGraph) -> list[Body]:
    """The graph's node list and every loop body nested in it (the bodies of its loop nodes)."""
    out: list[Body] = []
    work = [graph.body]
    while work:
        body = work.pop()
        out.append(body)
        work.extend(node.what.body for node in body.nodes if isinstance(node.what, RunLoop))
    return out


def loop_body(graph: ForwardGraph, index: int) -> Body:
    """The loop body run by node ``index`` of the graph's top-level list."""
    what = graph.nodes[index].what
    assert isinstance(what, RunLoop)
    return what.body


def listing(graph: ForwardGraph) -> str:
    """The lowered graph as the worked example shows it: ``str(graph)``, and each list's frees."""
    lines = [str(graph)]
    for i, body in enumerate(bodies(graph)):
        where = "graph" if i == 0 else f"loop body {i}"
        lines.append(f"frees of the {where}: {[list(f) for f in body.frees]}")
    return "\n".join(line.rstrip() for line in "\n".join(lines).splitlines())


def assert_routes_agree(fn: Function, *inputs: object, loops: str = "collapse") -> dict[str, Value]:
    """Both routes on ``inputs``: the same keys in the same order, bitwise-equal values, the same
    outputs from ``evaluate`` and ``run``. Returns the visitor's table."""
    table: dict[str, Value] = {}
    evaluate_value(fn, inputs, table=table, loops=loops)  # type: ignore[arg-type]
    lowered = tfexec.lower(fn)
    assert list(lowered.denote_all(*inputs, loops=loops)) == list(table)  # type: ignore[arg-type]
    report = tfexec.check_equivalence(fn, *inputs, loops=loops)  # type: ignore[arg-type]
    assert report.ok and report.compared == len(table), str(report)
    direct = tfexec.evaluate(fn, *inputs)
    via_run = lowered.run(*inputs)
    assert_same(direct, via_run)
    return table


def _bits(t: torch.Tensor) -> torch.Tensor:
    views = {2: torch.int16, 4: torch.int32, 8: torch.int64}
    if t.is_floating_point():
        return t.contiguous().view(views[t.element_size()])
    return t


def assert_same(a: object, b: object) -> None:
    """Bitwise equality of two results (tensors or nested tuples), dtype included."""
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape
        assert a.device == b.device and torch.equal(_bits(a), _bits(b))
        return
    assert isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
    for x, y in zip(a, b):
        assert_same(x, y)


def schedule_listing(fn: Function) -> str:
    """The direct route's view of ``fn``: its schedule (post-order, each step with the keys
    of the values it reads last) and, for each loop, its frontier, variant schedule and roots."""
    from tfexec.evaluator.schedule import function_schedule, loop_schedule
    from tfexec.ir.graph import loop_plan
    from tfexec.semantics.keys import function_keys, loop_keys

    sched = function_schedule(fn)
    keys = function_keys(fn)
    name = {i: keys.local[i] for i in keys.local}
    lines = [f"schedule of {fn.name} (step: node, then the values whose last reader it is)"]
    for node, _, frees, _ in sched.steps:
        freed = ", ".join(name[f] for f in frees) or "-"
        lines.append(f"  {keys.local[id(node)]:<6} {describe_expr(node):<60} frees {freed}")
    for node in sched.order:
        if not isinstance(node, GridRegionExpr):
            continue
        plan = loop_plan(node)
        lk = loop_keys(node)
        inner = {i: lk.local[i] for i in lk.local}
        lines.append(f"loop {keys.local[id(node)]}: frontier (computed once, before the loop): "
                     + ", ".join(name[id(f)] for f in plan.frontier))
        lines.append("  per-iteration schedule (keys local to the body; outer values named outer:key)")
        for step, _, frees, _ in loop_schedule(node).steps:
            freed = ", ".join(inner[f] if f in inner else f"outer:{name[f]}" for f in frees) or "-"
            lines.append(f"  {lk.local[id(step)]:<6} {describe_expr(step):<60} frees {freed}")
        lines.append("  roots: " + ", ".join(lk.local[id(r)] for r in plan.roots))
    return "\n".join(line.rstrip() for line in lines)
