"""W2 — a Llama-style decoder block (fp32): tfexec against eager torch on real-sized ops.

d_model 512, sequence 128, 8 heads of 64, SwiGLU hidden 1376. RMSNorm (with weight), RoPE
from precomputed ``cos``/``sin`` inputs (rotate-half with ``slice``/``concat``), causal
attention through an additive mask input and ``softmax``, then a SwiGLU MLP, each with its
residual. The HIR is built with the builder API. The baseline, ``eager (straight-line)``, is
already straight-line code: the block written out by hand as torch calls, call for call what
the value rules do (its only extra Python is five calls of the ``heads``/``rope`` helpers,
well under a microsecond against milliseconds of matmuls), so every executor's result is
bitwise the same. Beside it: ``fx GraphModule`` (``torch.fx.symbolic_trace`` of it),
``tfexec evaluate`` and ``run check=off|boundary|full``. The ops are large enough that
interpretation overhead should vanish: this is the "does it cost anything" workload. After
the table, a line gives issue #19's targets: ``run`` ≤ 1.02× and ``evaluate`` ≤ 1.05× eager.

Run: ``.venv/bin/python bench/w2_decoder.py [--quick] [--rounds R]``.
"""

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.fx
import torch.nn.functional as F

import tfexec
from tfexec import Expr, Function, Var, f32, ops

import harness

EPS = 1e-6
BASELINE = "eager (straight-line)"
TARGETS = (harness.Target("run check=off", BASELINE, 1.02), harness.Target("tfexec evaluate", BASELINE, 1.05))


@dataclass(frozen=True, slots=True)
class Dims:
    seq: int
    d_model: int
    heads: int
    hidden: int

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads


FULL = Dims(seq=128, d_model=512, heads=8, hidden=1376)
QUICK = Dims(seq=16, d_model=64, heads=4, hidden=96)

PARAMS = ("x", "attn_norm", "wq", "wk", "wv", "wo", "mlp_norm", "w_gate", "w_up", "w_down", "cos", "sin", "mask")


def shapes(d: Dims) -> dict[str, tuple[int, ...]]:
    return {
        "x": (d.seq, d.d_model), "attn_norm": (d.d_model,), "wq": (d.d_model, d.d_model), "wk": (d.d_model, d.d_model),
        "wv": (d.d_model, d.d_model), "wo": (d.d_model, d.d_model), "mlp_norm": (d.d_model,),
        "w_gate": (d.d_model, d.hidden), "w_up": (d.d_model, d.hidden), "w_down": (d.hidden, d.d_model),
        "cos": (d.seq, d.head_dim), "sin": (d.seq, d.head_dim), "mask": (d.seq, d.seq),
    }


def inputs(d: Dims, seed: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    sh = shapes(d)
    out: dict[str, torch.Tensor] = {}
    for name in PARAMS:
        if name in ("attn_norm", "mlp_norm"):
            out[name] = 1.0 + 0.1 * torch.randn(sh[name], generator=g)
        elif name.startswith("w"):
            out[name] = torch.randn(sh[name], generator=g) / sh[name][0] ** 0.5
        elif name == "x":
            out[name] = torch.randn(sh[name], generator=g)
    pos = torch.arange(d.seq, dtype=torch.float32)[:, None]
    inv = 10000.0 ** (-torch.arange(0, d.head_dim, 2, dtype=torch.float32) / d.head_dim)
    angles = torch.cat([pos * inv, pos * inv], dim=-1)
    out["cos"], out["sin"] = angles.cos(), angles.sin()
    out["mask"] = torch.full((d.seq, d.seq), float("-inf")).triu(1)
    return tuple(out[n] for n in PARAMS)


def eager_fn(d: Dims) -> Callable[..., torch.Tensor]:
    """The block in eager torch, written out as straight-line code: call for call what the HIR's
    value rules do."""
    s, h, hd, half = d.seq, d.heads, d.head_dim, d.head_dim // 2
    scale = 1.0 / hd**0.5

    def heads(t: torch.Tensor) -> torch.Tensor:
        return t.reshape((s, h, hd)).permute([1, 0, 2])

    def rope(t: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x1, x2 = t[0:h:1, 0:s:1, 0:half:1], t[0:h:1, 0:s:1, half:hd:1]
        rotated = torch.cat((torch.neg(x2), x1), dim=2)
        return torch.add(torch.mul(t, cos), torch.mul(rotated, sin))

    def block(
        x: torch.Tensor, attn_norm: torch.Tensor, wq: torch.Tensor, wk: torch.Tensor, wv: torch.Tensor, wo: torch.Tensor,
        mlp_norm: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor, w_down: torch.Tensor, cos: torch.Tensor,
        sin: torch.Tensor, mask: torch.Tensor,
    ) -> torch.Tensor:
        a = F.rms_norm(x, [d.d_model], attn_norm, EPS)
        q = rope(heads(torch.matmul(a, wq)), cos, sin)
        k = rope(heads(torch.matmul(a, wk)), cos, sin)
        v = heads(torch.matmul(a, wv))
        scores = torch.add(torch.mul(torch.matmul(q, k.permute([0, 2, 1])), scale), mask)
        p = torch.softmax(scores, dim=2)
        attn = torch.matmul(p, v).permute([1, 0, 2]).reshape((s, d.d_model))
        x2 = torch.add(x, torch.matmul(attn, wo))
        m = F.rms_norm(x2, [d.d_model], mlp_norm, EPS)
        ff = torch.matmul(torch.mul(F.silu(torch.matmul(m, w_gate)), torch.matmul(m, w_up)), w_down)
        return torch.add(x2, ff)

    return block


def hir(d: Dims) -> Function:
    """The same block as HIR, built with ``tfexec.ops``."""
    s, h, hd, half = d.seq, d.heads, d.head_dim, d.head_dim // 2
    sh = shapes(d)
    p = {name: Var(name, f32[sh[name]]) for name in PARAMS}
    scale = 1.0 / hd**0.5

    def heads(t: Expr) -> Expr:
        return ops.transpose(ops.reshape(t, shape=(s, h, hd)), perm=(1, 0, 2))

    def rope(t: Expr) -> Expr:
        x1 = ops.slice(t, (0, 0, 0), sizes=(h, s, half))
        x2 = ops.slice(t, (0, 0, half), sizes=(h, s, half))
        rotated = ops.concat(ops.neg(x2), x1, axis=2)
        return ops.add(ops.mul(t, p["cos"]), ops.mul(rotated, p["sin"]))

    a = ops.rms_norm(p["x"], p["attn_norm"], axes=(-1,), eps=EPS)
    q = rope(heads(ops.matmul(a, p["wq"])))
    k = rope(heads(ops.matmul(a, p["wk"])))
    v = heads(ops.matmul(a, p["wv"]))
    scores = ops.add(ops.mul(ops.matmul(q, ops.transpose(k, perm=(0, 2, 1))), scale), p["mask"])
    attn = ops.reshape(ops.transpose(ops.matmul(ops.softmax(scores, axis=2), v), perm=(1, 0, 2)), shape=(s, d.d_model))
    x2 = ops.add(p["x"], ops.matmul(attn, p["wo"]))
    m = ops.rms_norm(x2, p["mlp_norm"], axes=(-1,), eps=EPS)
    ff = ops.matmul(ops.mul(ops.silu(ops.matmul(m, p["w_gate"])), ops.matmul(m, p["w_up"])), p["w_down"])
    return Function("decoder_block", tuple(p[n] for n in PARAMS), ops.add(x2, ff))


def executors(d: Dims, seed: int) -> tuple[list[harness.Executor], int]:
    xs = inputs(d, seed)
    eager = eager_fn(d)
    gm = torch.fx.symbolic_trace(eager)
    fn = hir(d)
    graph = tfexec.lower(fn)
    ex = [
        harness.Executor(BASELINE, lambda: eager(*xs)),
        harness.Executor("fx GraphModule", lambda: gm(*xs)),
        harness.Executor("tfexec evaluate", lambda: tfexec.evaluate(fn, *xs)),
        harness.Executor("run check=off", lambda: graph.run(*xs, check="off")),
        harness.Executor("run check=boundary", lambda: graph.run(*xs, check="boundary")),
        harness.Executor("run check=full", lambda: graph.run(*xs, check="full")),
    ]
    harness.same([(e.name, e.call()) for e in ex])
    n_ops = sum(1 for n in graph.nodes if n.what.dispatch)
    return ex, n_ops


def main(argv: Sequence[str] | None = None) -> int:
    p = harness.parser(__doc__.splitlines()[0], rounds=21)
    args = p.parse_args(argv)
    with harness.torch_settings():
        d = QUICK if args.quick else FULL
        ex, n_ops = executors(d, args.seed)
        timings = harness.measure(
            ex, rounds=harness.rounds_of(args), baseline=BASELINE, seed=args.seed, block_s=0.005 if args.quick else 0.1
        )
        print(
            f"W2 decoder block: seq {d.seq}, d_model {d.d_model}, {d.heads} heads, SwiGLU hidden {d.hidden}, fp32; "
            f"{n_ops} op nodes; {harness.rounds_of(args)} shuffled rounds"
        )
        print(harness.machine_line())
        print(harness.ratio_table(timings, nodes=n_ops, unit="op", baseline=BASELINE))
        print(harness.targets_line(timings, TARGETS, quick=args.quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
