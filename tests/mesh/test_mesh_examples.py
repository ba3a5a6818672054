"""docs/mesh.md's module is built by a shipped script: ``examples/llama_tp.py`` writes
``llama_tp`` and ``in.safetensors``, and the page's own-launcher command runs on them."""

import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

import tfexec
from tfexec.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
import llama_tp  # noqa: E402


def test_the_docs_module_is_written_by_the_example_script_and_runs_on_the_mesh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    llama_tp.main([])  # the page's command: python examples/llama_tp.py
    assert (tmp_path / "llama_tp" / "manifest.json").exists() and (tmp_path / "in.safetensors").exists()
    x = load_file(tmp_path / "in.safetensors")["x"]
    single = tfexec.evaluate(tfexec.load_module("llama_tp"), x)
    assert isinstance(single, torch.Tensor)
    torch.testing.assert_close(single, llama_tp.reference(x, llama_tp.weights()))
    assert main(["mesh", "llama_tp", "--inputs", "in.safetensors", "--out", "out.safetensors"]) == 0
    assert "wrote 1 tensor(s) to out.safetensors (2 participants of Mesh((2,), ('tp',)))" in capsys.readouterr().out
    torch.testing.assert_close(load_file(tmp_path / "out.safetensors")["output"], single)  # w_down's split sum reassociates
