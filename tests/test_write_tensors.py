"""tfexec.loading.write_tensors writes a valid safetensors file for 0, 1 and many tensors
(issue #29 E: for no tensors safetensors 0.8 wrote a header that is not JSON, so the
README's way to write an inputs file made one --inputs refused for a program with no
parameters). Each file is read back by safetensors itself and by tfexec's own reader."""

import json
import struct
from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file

from tfexec.cli import main
from tfexec.loading import write_tensors
from tfexec.loading.safetensors_io import WeightsFile

MANY = {
    "a": torch.arange(6, dtype=torch.float32).reshape(2, 3),
    "b": torch.tensor([1, -2, 3], dtype=torch.int64),
    "c": torch.tensor([True, False]),
    "d": torch.zeros(0, 4, dtype=torch.float16),
    "e": torch.tensor(2.5, dtype=torch.bfloat16),
}


def _header(path: Path) -> dict[str, object]:
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0 and 8 + n <= len(raw)
    header = json.loads(raw[8 : 8 + n])  # JSON, as the format says (padding spaces are allowed)
    assert isinstance(header, dict)
    return header


@pytest.mark.parametrize("count", [0, 1, len(MANY)])
@pytest.mark.parametrize("metadata", [None, {"writer": "test"}])
def test_round_trip(count: int, metadata: dict[str, str] | None, tmp_path: Path) -> None:
    tensors = dict(list(MANY.items())[:count])
    path = tmp_path / "t.safetensors"
    write_tensors(tensors, path, metadata=metadata)
    header = _header(path)
    assert set(header) - {"__metadata__"} == set(tensors)
    assert header.get("__metadata__") == metadata or (not metadata and header.get("__metadata__") in (None, {}))
    back = load_file(path)
    assert back.keys() == tensors.keys()
    for name, t in tensors.items():
        assert back[name].dtype == t.dtype and torch.equal(back[name], t), name
    with safe_open(path, framework="pt") as f:
        assert (f.metadata() or {}) == (metadata or {})
    ours = WeightsFile.open(path)
    assert set(ours.entries) == set(tensors)
    for name, t in tensors.items():
        assert torch.equal(ours.read(name, None), t), name


def test_an_empty_inputs_file_runs_a_program_without_parameters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "count.tf.py"
    program.write_text("def count() -> f32[3]:\n    return arange(extent=3, dtype=f32)\n", encoding="utf-8")
    inputs = tmp_path / "none.safetensors"
    write_tensors({}, inputs)
    assert main(["run", str(program), "--inputs", str(inputs)]) == 0
    assert "tensor([0., 1., 2.])" in capsys.readouterr().out
    assert main(["check", str(program), "--inputs", str(inputs)]) == 0
    assert "OK: 1 node(s) compared, 0 mismatch(es)" in capsys.readouterr().out
    write_tensors({"x": torch.zeros(1)}, inputs)  # a tensor the program has no parameter for
    assert main(["run", str(program), "--inputs", str(inputs)]) == 2
    assert "unexpected: x" in capsys.readouterr().err
