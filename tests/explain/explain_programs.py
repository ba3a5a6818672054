"""Programs the explorer and picture tests share: the examples, a loop that fails in its
last iteration, a call with its own dim names, and an op whose two routes see different values."""

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import torch

import tfexec
from tfexec import EvaluateContext, Function, TensorValue, Value, Var, f32, ops, register_eval

from shared_helpers import SameTypeOp

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LLAMA = EXAMPLES / "llama_block"
FLASH = EXAMPLES / "flash_attention.tf.py"
TILED = EXAMPLES / "tiled_matmul.tf.py"
MLP = EXAMPLES / "mlp.tf.py"

FAILING_LOOP = """\
@entry
def f(a: f32[4, 100]) -> f32[4, 40]:
    acc0 = full(shape=(4, 40), value=0.0, dtype=f32)
    for k, acc in grid(3, acc0):
        t = dim_mul(k, 40)
        pa = slice(a, (0, t), sizes=(4, 40))
        carry(add(acc, pa))
    return acc
"""
"""Iterations 0 and 1 read columns 0..79; iteration 2's window [80, 120) runs past the axis."""

CALLS = """\
def double(t: f32[N, 4]) -> f32[N, 4]:
    return add(t, t)

@entry
def f(x: f32[B, 4]) -> f32[B, 4]:
    c = constant([1.0, 2.0, 3.0, 4.0, 5.0], dtype=f32)
    y = mul(x, slice(c, (0,), sizes=(4,)))
    z = add(y, constant(2.0, dtype=f32))
    w = double(z)
    v = double(w)
    return where(gt(v, 0.0), v, 0.5)
"""
"""Two calls of a callee written in its own dims (N), a large and a small constant, weak scalars."""

NESTED = """\
def inner(t: f32[R, 8], w: f32[R, 8]) -> f32[R, 8]:
    for j, acc2 in grid(3, t):
        carry(add(acc2, mul(w, 0.5)))
    return acc2

@entry
def f(a: f32[4, 8]) -> f32[4, 8]:
    acc0 = full(shape=(4, 8), value=0.0, dtype=f32)
    for i, acc in grid(2, acc0):
        carry(inner(acc, a))
    return acc
"""
"""A loop inside a callee called in a loop: two sliders, keys with two iterations."""


def entry(text: str, filename: str = "program.tf.py") -> Function:
    module = tfexec.parse(text, filename=filename)
    assert module.entry is not None
    return module.functions[module.entry]


def flash() -> Function:
    return entry(FLASH.read_text(encoding="utf-8"), str(FLASH))


def flash_inputs(seed: int = 0) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(s, 32, generator=gen) for s in (8, 32, 32))


@dataclass(frozen=True, slots=True)
class DriftTestOp(SameTypeOp):
    """Adds how many times its handler has run: the second route to run it sees a larger value."""

    name: ClassVar[str] = "drift_test_op"


_RUNS = [0]


@register_eval(DriftTestOp)
def _drift(ctx: EvaluateContext) -> Value:
    (x,) = ctx.args
    assert isinstance(x, TensorValue)
    _RUNS[0] += 1
    return TensorValue(x.data + _RUNS[0], x.type)


def drifting() -> Function:
    """``exp(drift(tanh(x)))``: ``tanh`` agrees on both routes, ``drift`` and ``exp`` do not."""
    x = Var("x", f32[3, 4])
    return Function("f", (x,), ops.exp(ops.apply(DriftTestOp(), ops.tanh(x))))
