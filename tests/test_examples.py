"""Every example runs, and passes `tfexec check` (both routes agree node by node)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import tfexec
from tfexec.cli import main as cli
from tfexec.compare import DEFAULT_TOLERANCES, compare_tensors

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
sys.path.insert(0, str(EXAMPLES))

import llama_block  # noqa: E402

pytestmark = pytest.mark.values  # the examples compute, print and store values


def parse(name: str) -> tfexec.IRModule:
    path = EXAMPLES / name
    return tfexec.parse(path.read_text(encoding="utf-8"), filename=str(path))


@pytest.mark.parametrize(
    "args",
    [
        ["examples/mlp.tf.py", "--dim", "B=3"],
        ["examples/tiled_matmul.tf.py", "--dim", "K=96"],
        ["examples/flash_attention.tf.py", "--dim", "S=8", "--dim", "T=64"],
        ["examples/llama_block", "--dim", "S=8"],
    ],
    ids=["mlp", "tiled_matmul", "flash_attention", "llama_block"],
)
def test_example_passes_check(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(EXAMPLES.parent)
    assert cli(["check", *args]) == 0
    assert "0 mismatch(es)" in capsys.readouterr().out


def test_builder_mlp_example_runs() -> None:
    done = subprocess.run([sys.executable, "-W", "ignore", str(EXAMPLES / "mlp.py")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "OK: 3 node(s) compared" in done.stdout


def test_tiled_matmul_equals_matmul() -> None:
    fn = parse("tiled_matmul.tf.py").functions["tiled_matmul"]
    a, b = torch.randn(128, 96), torch.randn(96, 128)
    assert torch.allclose(tfexec.evaluate(fn, a, b), a @ b, rtol=1e-5, atol=1e-4)  # type: ignore[arg-type]


def test_flash_attention_equals_plain_attention_within_tolerance() -> None:
    module = parse("flash_attention.tf.py")
    g = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(8, 32, generator=g), torch.randn(64, 32, generator=g), torch.randn(64, 32, generator=g)
    flash = tfexec.evaluate(module.functions["flash"], q, k, v)
    plain = tfexec.evaluate(module.functions["plain"], q, k, v)
    # Stated tolerance: online softmax reassociates the sums; fp32 agrees to ~1e-6 here.
    assert torch.allclose(flash, plain, rtol=1e-5, atol=1e-5)  # type: ignore[arg-type]
    assert tfexec.check_equivalence(module.functions["flash"], q, k, v, loops="expand").ok


def test_llama_block_matches_eager_torch() -> None:
    loaded = tfexec.load_module(EXAMPLES / "llama_block")
    x = torch.randn(8, 64, generator=torch.Generator().manual_seed(1))
    out = tfexec.evaluate(loaded, x)
    assert torch.allclose(out, llama_block.reference(x, llama_block.weights()), rtol=1e-5, atol=1e-5)  # type: ignore[arg-type]


def test_saved_llama_block_is_what_the_script_writes(tmp_path: Path) -> None:
    # The text form and the manifest's layout are the script's, byte for byte; the weights are
    # torch.randn's, whose last bits are the CPU kernel's choice (AVX-512, AVX2 and torch's
    # portable kernels draw other last bits), so they compare within f32's tolerance and the
    # manifest's SHA-256 of each tensor is left out of the byte comparison.
    llama_block.main([str(tmp_path / "block")])
    fresh, committed = tmp_path / "block", EXAMPLES / "llama_block"
    assert (fresh / "module.tf.py").read_bytes() == (committed / "module.tf.py").read_bytes()

    def layout(manifest: Path) -> object:
        document = json.loads(manifest.read_text(encoding="utf-8"))
        for entry in document["tensors"].values():
            assert re.fullmatch(r"[0-9a-f]{64}", entry.pop("sha256"))
        return document

    manifest = layout(committed / "manifest.json")
    assert layout(fresh / "manifest.json") == manifest
    written, kept = tfexec.load_module(fresh), tfexec.load_module(committed)
    f32 = DEFAULT_TOLERANCES[tfexec.DType.float32]
    names = list(json.loads((committed / "manifest.json").read_text(encoding="utf-8"))["tensors"])
    assert len(names) >= 9
    for name in names:
        assert compare_tensors(kept.constant(name), written.constant(name), f32).reason is None, name
