"""Write ``llama_tp``: a Llama-style feed-forward block, tensor-parallel over a 2-participant
mesh, as a saved module with deterministic weights — the module docs/mesh.md runs.

``python examples/llama_tp.py [MODULE_DIR [INPUTS]]`` (re)writes ``MODULE_DIR`` (default
``llama_tp``) and an example input file ``INPUTS`` (default ``in.safetensors``, one tensor
``x`` of f32[8, 64]). The block is the Megatron split: ``w_gate`` and ``w_up`` split by
columns, ``w_down`` by rows (a partial sum the mesh adds up), the norm replicated::

    out = x + (silu(rms_norm(x) @ w_gate) * (rms_norm(x) @ w_up)) @ w_down

``reference`` is the same block in eager torch, for comparison.
"""

import shutil
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from tfexec import ConstTensor, DimVar, Function, IRModule, Mesh, ShardLayout, Split, Var, f32, ops, save_module
from tfexec.loading import write_tensors

MESH = Mesh((2,), ("tp",))
HIDDEN, FF, TOKENS = 64, 128, 8


def module() -> IRModule:
    """The block (entry ``ffn``); ``S`` tokens of width 64."""
    columns, rows = ShardLayout(MESH, (Split(1),)), ShardLayout(MESH, (Split(0),))
    norm = ConstTensor("norm.weight", f32[HIDDEN])
    w_gate = ConstTensor("w_gate", f32[HIDDEN, FF] @ columns)
    w_up = ConstTensor("w_up", f32[HIDDEN, FF] @ columns)
    w_down = ConstTensor("w_down", f32[FF, HIDDEN] @ rows)
    x = Var("x", f32[DimVar("S"), HIDDEN])
    xn = ops.rms_norm(x, norm, eps=1e-6)
    hidden = ops.mul(ops.silu(ops.matmul(xn, w_gate)), ops.matmul(xn, w_up))
    body = ops.add(x, ops.matmul(hidden, w_down))
    types = {c.name: c.type for c in (norm, w_gate, w_up, w_down)}
    return IRModule({"ffn": Function("ffn", (x,), body)}, types, entry="ffn")


def weights(seed: int = 0) -> dict[str, torch.Tensor]:
    """Deterministic weights: a unit norm, scaled normals."""
    g = torch.Generator().manual_seed(seed)
    return {
        "norm.weight": torch.ones(HIDDEN),
        "w_gate": torch.randn(HIDDEN, FF, generator=g) / HIDDEN**0.5,
        "w_up": torch.randn(HIDDEN, FF, generator=g) / HIDDEN**0.5,
        "w_down": torch.randn(FF, HIDDEN, generator=g) / FF**0.5,
    }


def example_input(seed: int = 1) -> torch.Tensor:
    return torch.randn(TOKENS, HIDDEN, generator=torch.Generator().manual_seed(seed))


def reference(x: torch.Tensor, w: dict[str, torch.Tensor]) -> torch.Tensor:
    """The same block written directly in eager torch."""
    xn = F.rms_norm(x, (HIDDEN,), w["norm.weight"], 1e-6)
    return x + (F.silu(xn @ w["w_gate"]) * (xn @ w["w_up"])) @ w["w_down"]


def main(argv: list[str]) -> None:
    target = Path(argv[0]) if argv else Path("llama_tp")
    inputs = Path(argv[1]) if len(argv) > 1 else Path("in.safetensors")
    if target.exists():
        shutil.rmtree(target)
    save_module(module(), weights(), target)
    write_tensors({"x": example_input()}, inputs)
    print(f"wrote {target} and {inputs}")


if __name__ == "__main__":
    main(sys.argv[1:])
