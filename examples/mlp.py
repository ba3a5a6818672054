"""A two-layer MLP built with the builder API, evaluated both ways and compared node by node.

Run: python examples/mlp.py
"""

import torch

import tfexec
from tfexec import DimVar, Function, Var, f32, ops


def build_mlp() -> Function:
    """``mlp(x: f32[B, 64], w1: f32[64, 256], w2: f32[256, 64]) -> f32[B, 64]``."""
    B = DimVar("B")
    x, w1, w2 = Var("x", f32[B, 64]), Var("w1", f32[64, 256]), Var("w2", f32[256, 64])
    h = ops.matmul(x, w1)
    a = ops.silu(h)
    return Function("mlp", (x, w1, w2), ops.matmul(a, w2), f32[B, 64])


def main() -> None:
    torch.manual_seed(0)
    fn = build_mlp()
    x, w1, w2 = torch.randn(4, 64), torch.randn(64, 256) / 8, torch.randn(256, 64) / 16
    out = tfexec.evaluate(fn, x, w1, w2)
    assert isinstance(out, torch.Tensor)
    print(f"evaluate(mlp) -> {tuple(out.shape)} {out.dtype}; first row: {out[0, :4].tolist()}")
    report = tfexec.check_equivalence(fn, x, w1, w2)
    print(report)
    raise SystemExit(0 if report.ok else 1)


if __name__ == "__main__":
    main()
