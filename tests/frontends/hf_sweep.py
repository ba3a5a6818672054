"""A sweep over ``transformers``' causal-LM architectures, tiny and offline: does each import,
and does what imports match PyTorch? An import that gives a wrong value is the one outcome
that must never happen (``WRONG``); a refusal is allowed and says why. ``TIE``: the value
differs from PyTorch's eager one only by which of several equal elements ``topk`` picks,
which torch leaves open (tfexec takes the lower index; a tiny random router whose scores all
tie, zero-initialised, shows it): PyTorch's run of the same graph with ties broken that way
agrees with tfexec node for node.

Configs are the architecture's own defaults with every size key it has made tiny (layers,
widths, heads, experts, low-rank dims: ``TINY``), random weights from a fixed seed. The
list is transformers' own ``MODEL_FOR_CAUSAL_LM_MAPPING_NAMES`` (every ``stride``-th, plus
``NAMED``), not one chosen to pass. ``python tests/frontends/hf_sweep.py [--stride N]``
prints one row per architecture and the counts; ``test_hf_sweep.py`` runs it under ``-m slow``.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import torch  # noqa: E402

TINY: dict[str, object] = {
    "num_hidden_layers": 2, "n_layer": 2, "num_layers": 2, "n_layers": 2, "hidden_size": 64, "n_embd": 64,
    "d_model": 64, "intermediate_size": 128, "ffn_dim": 128, "n_inner": 128, "num_attention_heads": 4, "n_head": 4,
    "n_heads": 4, "num_heads": 4, "num_key_value_heads": 4, "head_dim": 16, "vocab_size": 128,
    "max_position_embeddings": 256, "n_positions": 256, "num_local_experts": 4, "num_experts": 4,
    "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 64,
    "n_shared_experts": 1, "n_group": 1, "topk_group": 1, "first_k_dense_replace": 1, "q_lora_rank": 32,
    "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 16, "index_topk": 4,
    "index_head_dim": 16, "index_n_heads": 2, "attention_hidden_size": 64, "lru_width": 64, "rescale_every": 0,
    "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "sliding_window": 8, "attention_window_size": 8,
}
"""Size keys and their tiny values, set where the architecture's config has the key."""

DROPPED = ("layer_types", "mlp_layer_types", "indexer_types", "layers_block_type")
"""Per-layer lists sized for the default depth: left for the config to derive."""

NAMED = ("rwkv", "recurrent_gemma", "minicpm3", "deepseek_v32", "glm_moe_dsa", "youtu", "mixtral", "qwen2_moe",
         "olmoe", "deepseek_v3", "jetmoe", "xlnet", "llama4_text", "xlm", "llama", "gpt2")
"""The architectures issue #27 names (each pattern), always in the sweep."""


@dataclass(frozen=True)
class Outcome:
    name: str
    verdict: str  # MATCH, WRONG, REFUSED, TIE (see run_one), SETUP (the config or PyTorch itself failed: not counted)
    detail: str
    seconds: float


def architectures(stride: int) -> list[str]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES as names

    every = list(names)
    return sorted(set(every[::stride]) | {n for n in NAMED if n in names})


def tiny(model_type: str) -> Any:
    from transformers import AutoConfig

    base = AutoConfig.for_model(model_type)
    text = getattr(base, "text_config", None)
    keys = set(base.to_dict())
    args = {k: v for k, v in TINY.items() if k in keys}
    if "qk_rope_head_dim" in keys:  # multi-head latent attention: the rotary part is the head dim
        args["head_dim"] = TINY["qk_rope_head_dim"]
    for key in DROPPED:
        if key in keys:
            args[key] = None
    config = AutoConfig.for_model(model_type, **args)
    if text is not None and not isinstance(text, dict):
        return None
    return config


def run_one(model_type: str) -> Outcome:
    import transformers as tr

    import tfexec
    from tfexec.frontends.torch import TorchImportError, import_module

    start = time.time()

    def done(verdict: str, detail: str) -> Outcome:
        return Outcome(model_type, verdict, detail, time.time() - start)

    try:
        config = tiny(model_type)
        if config is None:
            return done("SETUP", "a multimodal config")
        torch.manual_seed(0)
        model = tr.AutoModelForCausalLM.from_config(config).eval()
        ids = torch.randint(3, 100, (2, 8), generator=torch.Generator().manual_seed(0))
        kwargs: dict[str, object] = {"use_cache": False, "return_dict": False}
        with torch.no_grad():
            try:
                want = model(ids, **kwargs)
            except TypeError:
                kwargs = {"return_dict": False}
                want = model(ids, **kwargs)
    except Exception as exc:  # the architecture's own setup failing is not the import's outcome
        return done("SETUP", f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:120] if str(exc).strip() else ''}")
    try:
        loaded = import_module(model, (ids,), kwargs=kwargs)
    except TorchImportError as exc:
        return done("REFUSED", _reason(str(exc)))
    leaves = [x for x in torch.utils._pytree.tree_flatten(want)[0] if isinstance(x, torch.Tensor)]
    got = tfexec.evaluate(loaded, ids)
    values = list(got) if isinstance(got, tuple) else [got]
    if len(values) != len(leaves):
        return done("WRONG", f"{len(values)} outputs where PyTorch has {len(leaves)}")
    worst = 0.0
    for g, w in zip(values, leaves):
        if not isinstance(g, torch.Tensor) or g.shape != w.shape or g.dtype != w.dtype:
            return done("WRONG", "an output's shape or dtype differs")
        if w.dtype.is_floating_point:
            scale = max(1.0, float(w.abs().max())) if w.numel() else 1.0
            worst = max(worst, float((g.double() - w.double()).abs().max()) / scale if w.numel() else 0.0)
        elif not torch.equal(g, w):
            worst = float("inf")
    if worst <= 1e-4:
        return done("MATCH", f"max |Δ| / max(1, |ref|) = {worst:.2e}")
    # PyTorch's run of the same graph with sort/topk ties broken as tfexec breaks them (lower
    # index first, an order torch's contract allows): agreeing node for node, the difference is
    # torch's choice among equal elements, not the import.
    from tfexec.frontends.torch import check_imported_against_torch

    if check_imported_against_torch(loaded, (ids,)).ok:
        return done("TIE", f"max |Δ| / max(1, |ref|) = {worst:.2e}, every node equal with ties broken lower index first")
    return done("WRONG", f"max |Δ| / max(1, |ref|) = {worst:.2e}")


def _reason(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else text
    if "have no HIR translation (" in first:
        return "no rule: " + first.split("have no HIR translation (", 1)[1].split(")", 1)[0]
    if len(lines) > 1 and "could not be translated" in first:
        return lines[1][:200]
    return first[:200]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stride", type=int, default=6, help="take every N-th architecture of transformers' list")
    parser.add_argument("--timeout", type=int, default=240, help="seconds per architecture")
    parser.add_argument("names", nargs="*", help="model types to run instead of the list")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    counts: dict[str, int] = {}
    for name in args.names or architectures(args.stride):
        signal.alarm(args.timeout)
        try:
            outcome = run_one(name)
        except _Timeout:
            outcome = Outcome(name, "SETUP", f"over {args.timeout}s", float(args.timeout))
        finally:
            signal.alarm(0)
        counts[outcome.verdict] = counts.get(outcome.verdict, 0) + 1
        print(f"{outcome.name:28} {outcome.verdict:8} {outcome.seconds:6.1f}s  {outcome.detail}", flush=True)
    tried = sum(n for v, n in counts.items() if v != "SETUP")
    print(f"tried {tried} (setup failed: {counts.get('SETUP', 0)}): match {counts.get('MATCH', 0)}, "
          f"refused {counts.get('REFUSED', 0)}, differ by topk/sort tie order {counts.get('TIE', 0)}, "
          f"WRONG {counts.get('WRONG', 0)}")
    return 1 if counts.get("WRONG", 0) else 0


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


if __name__ == "__main__":
    signal.signal(signal.SIGALRM, _alarm)
    sys.exit(main(sys.argv[1:]))
