"""W6 — an imported Hugging Face model: tiny Llama (fp32) through ``import_module``, against eager.

``transformers``' ``LlamaModel`` with 2 layers, hidden 64, 4 query heads over 2 key/value
heads, vocab 128 (random weights from a fixed seed, built offline), imported once with the
sequence axis dynamic and run at sequence 128, batch 1. Eager is the module itself under
``torch.no_grad()`` (``use_cache=False``), Python overhead of ``transformers`` included;
tfexec runs what ``torch.export`` recorded (the mask construction, rotary embeddings,
attention as ``matmul``/``softmax``); each projection (``aten.linear``) is one ``linear``
node, torch's own fused call. The routes agree with each other bitwise, and are checked
against eager within fp32 rounding (on this machine they agree with it bitwise too).

A second limit runs in the same rounds: ``torch.export module``, the exported program's own
``GraphModule`` (``ExportedProgram.module()``: torch's generated straight-line code for
the very graph tfexec imports, with its input checks and pytree plumbing), so the table
shows what the recorded program costs apart from interpreting it.

Run: ``.venv/bin/python bench/w6_llama_import.py [--quick] [--rounds R]``.
"""

import os
import sys
from collections.abc import Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from torch.export import Dim  # noqa: E402

import tfexec  # noqa: E402
from tfexec.frontends.torch import ImportedModule, import_module  # noqa: E402

import harness  # noqa: E402

VOCAB, HIDDEN, LAYERS = 128, 64, 2
TARGETS = (harness.Target("run check=off", "eager", 1.02), harness.Target("tfexec evaluate", "eager", 1.05))


def model() -> torch.nn.Module:
    """The tiny Llama, in eval mode, from a fixed seed."""
    import transformers as tr

    tr.logging.set_verbosity_error()
    config = tr.LlamaConfig(
        num_hidden_layers=LAYERS, hidden_size=HIDDEN, intermediate_size=2 * HIDDEN, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=256, bos_token_id=1, eos_token_id=2,
        pad_token_id=0,
    )
    torch.manual_seed(0)
    m: torch.nn.Module = tr.LlamaModel(config).eval()
    return m


def imported(m: torch.nn.Module) -> ImportedModule:
    """One import, the sequence axis dynamic (traced at 16, run at any length up to 256)."""
    ids = torch.randint(3, VOCAB, (1, 16), generator=torch.Generator().manual_seed(1))
    return import_module(m, (ids,), {"input_ids": {1: Dim("S", max=256)}}, kwargs={"use_cache": False})


def executors(seq: int) -> tuple[list[harness.Executor], int]:
    m = model()
    loaded = imported(m)
    graph = tfexec.lower(loaded)
    ids = torch.randint(3, VOCAB, (1, seq), generator=torch.Generator().manual_seed(2))

    def eager() -> torch.Tensor:
        with torch.no_grad():
            out: torch.Tensor = m(ids, use_cache=False).last_hidden_state
        return out

    assert loaded.exported is not None
    exported = loaded.exported.module()

    def exported_module() -> torch.Tensor:
        with torch.no_grad():
            out = exported(ids)
        tensor: torch.Tensor = out if isinstance(out, torch.Tensor) else out[0]
        return tensor

    ex = [
        harness.Executor("eager", eager),
        harness.Executor("torch.export module", exported_module),
        harness.Executor("tfexec evaluate", lambda: tfexec.evaluate(loaded, ids)),
        harness.Executor("run check=off", lambda: graph.run(ids, check="off")),
        harness.Executor("run check=boundary", lambda: graph.run(ids, check="boundary")),
    ]
    outputs = [(e.name, e.call()) for e in ex]
    harness.same(outputs[1:])  # the two tfexec routes: bitwise
    harness.same(outputs, exact=False)  # and eager, within fp32 rounding
    return ex, sum(1 for n in graph.nodes if n.what.dispatch)


def main(argv: Sequence[str] | None = None) -> int:
    p = harness.parser(__doc__.splitlines()[0], rounds=21)
    args = p.parse_args(argv)
    with harness.torch_settings():
        seq = 16 if args.quick else 128
        ex, n_ops = executors(seq)
        timings = harness.measure(ex, rounds=harness.rounds_of(args), seed=args.seed, block_s=0.005 if args.quick else 0.1)
        print(
            f"W6 imported tiny Llama: {LAYERS} layers, hidden {HIDDEN}, GQA 4/2 heads, vocab {VOCAB}, batch 1, seq {seq}, "
            f"fp32; {n_ops} op nodes; {harness.rounds_of(args)} shuffled rounds"
        )
        print(harness.machine_line())
        print(harness.ratio_table(timings, nodes=n_ops, unit="op"))
        print(harness.targets_line(timings, TARGETS, quick=args.quick))
        limit = "torch.export module"
        print(
            f"against {limit} (median of per-round ratios): "
            + "; ".join(f"{name} {harness.pair_ratio(timings, name, limit):.3f}" for name in ("run check=off", "tfexec evaluate"))
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
