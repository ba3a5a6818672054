"""Save the Llama-style decoder block of ``llama_block.tf.py`` as a module with deterministic weights.

``python examples/llama_block.py`` (re)writes ``examples/llama_block/`` — the module text,
its weights in safetensors and a manifest — which ``tfexec check examples/llama_block``
evaluates both ways. ``reference`` is the same block in eager torch, for comparison.
"""

import shutil
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from tfexec import IRModule, parse, save_module

HERE = Path(__file__).parent
SOURCE = HERE / "llama_block.tf.py"
HEAD_DIM, HEADS = 16, 4


def module() -> IRModule:
    """The parsed block (entry ``block``)."""
    return parse(SOURCE.read_text(encoding="utf-8"), filename=str(SOURCE))


def weights(seed: int = 0) -> dict[str, torch.Tensor]:
    """Deterministic weights: unit norms, the standard RoPE frequencies, scaled normals."""
    g = torch.Generator().manual_seed(seed)
    out: dict[str, torch.Tensor] = {}
    for name, t in module().constants.items():
        shape = tuple(int(d) for d in t.shape)  # type: ignore[call-overload]
        if name.endswith("norm.weight"):
            out[name] = torch.ones(shape)
        elif name == "rope.inv_freq":
            out[name] = 1.0 / (10000.0 ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float32) / HEAD_DIM))
        else:
            out[name] = torch.randn(shape, generator=g) / shape[0] ** 0.5
    return out


def reference(x: torch.Tensor, w: dict[str, torch.Tensor]) -> torch.Tensor:
    """The same block written directly in eager torch."""
    s = x.shape[0]
    angles = torch.arange(s, dtype=torch.float32)[:, None] * w["rope.inv_freq"][None, :]
    cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)

    def heads(t: torch.Tensor) -> torch.Tensor:
        return t.reshape(s, HEADS, HEAD_DIM).transpose(0, 1)

    def rope(t: torch.Tensor) -> torch.Tensor:
        rotated = torch.cat([-t[..., HEAD_DIM // 2 :], t[..., : HEAD_DIM // 2]], -1)
        return t * cos + rotated * sin

    xn = F.rms_norm(x, (x.shape[-1],), w["attn_norm.weight"], 1e-6)
    q, k, v = rope(heads(xn @ w["attn.wq"])), rope(heads(xn @ w["attn.wk"])), heads(xn @ w["attn.wv"])
    scores = (q @ k.transpose(1, 2)) * 0.25
    causal = torch.arange(s)[None, :] <= torch.arange(s)[:, None]
    probs = torch.softmax(torch.where(causal, scores, float("-inf")), -1)
    h = x + (probs @ v).transpose(0, 1).reshape(s, -1) @ w["attn.wo"]
    hn = F.rms_norm(h, (h.shape[-1],), w["mlp_norm.weight"], 1e-6)
    return h + (F.silu(hn @ w["mlp.w_gate"]) * (hn @ w["mlp.w_up"])) @ w["mlp.w_down"]


def main(argv: list[str]) -> None:
    target = Path(argv[0]) if argv else HERE / "llama_block"
    if target.exists():
        shutil.rmtree(target)
    save_module(module(), weights(), target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main(sys.argv[1:])
