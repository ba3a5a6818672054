"""bench/mesh_overhead.py cannot rot: its ``main`` runs with ``--quick`` and prints its table
(one mesh launch, so it is marked slow). No assertion is about timing; the script itself
checks the mesh values against ``evaluate`` before it reports."""

import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.slow
def test_mesh_overhead_runs_quick_and_prints_its_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(BENCH))  # the script imports its neighbour harness by name
    module = importlib.import_module("mesh_overhead")
    assert module.main(["--quick", "--rounds", "2"]) == 0
    out = capsys.readouterr().out
    assert "Mesh overhead: Mesh((2,), ('tp',)) (2 participants)" in out
    lines = out.splitlines()
    assert any(set(line.replace(" ", "")) == {"-"} for line in lines)
    for row in ("column matmul", "mlp", "launch:"):
        assert any(line.startswith(row) for line in lines), row
