"""The printer and parser are iterative: a 10⁵-node chain prints and parses back without
RecursionError (``ast.parse`` itself recurses on nested expressions, so the printer keeps
each line shallow)."""

import torch

from tfexec import Call, Function, GridRegionExpr, Var, evaluate, f32, i64, ops
from tfexec.text import parse, print_ir, structural_difference
from tfexec.text.printer import INLINE_DEPTH


def test_a_hundred_thousand_node_chain_round_trips() -> None:
    x = Var("x", f32[4])
    y: Call | Var = x
    for i in range(100_000):
        y = ops.neg(y) if i % 3 else ops.add(y, 1.0)
    fn = Function("chain", (x,), y)
    printed = print_ir(fn)
    assert max(line.count("(") for line in printed.splitlines()) <= 2 * (INLINE_DEPTH + 1)
    back = parse(printed).functions["chain"]
    assert structural_difference(fn, back) is None


def test_a_long_chain_inside_a_loop_round_trips() -> None:
    x = Var("x", f32[4])
    k, acc = Var("k", i64[()]), Var("acc", f32[4])
    y: Call | Var = acc
    for _ in range(5_000):
        y = ops.neg(y)
    region = GridRegionExpr(3, k, (x,), (acc,), y, (y,))
    fn = Function("looped", (x,), region)
    printed = print_ir(fn)
    back = parse(printed).functions["looped"]
    assert structural_difference(fn, back) is None
    assert print_ir(back) == printed
    assert torch.equal(evaluate(back, torch.ones(4)), evaluate(fn, torch.ones(4)))  # type: ignore[arg-type]
