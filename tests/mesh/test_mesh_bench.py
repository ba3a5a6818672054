"""The mesh benchmarks cannot rot: bench/mesh_overhead.py's ``main`` runs with ``--quick`` and
prints its table, bench/mesh_memory.py's at full size holds its memory goals (one mesh launch
each, so both are marked slow). No assertion is about timing; the scripts check the mesh
values against ``evaluate`` before they report."""

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


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="resident memory is read from /proc")
def test_participants_hold_half_of_1_gib_of_split_weights_and_the_caller_none(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """bench/mesh_memory.py at full size: 1 GiB of weights over 2 participants."""
    monkeypatch.syspath_prepend(str(BENCH))
    module = importlib.import_module("mesh_memory")
    result = module.main([])
    gib = 2**30
    assert result["weights_bytes"] > 0.99 * gib and result["checked"] is True
    growth = result["participants_growth"]
    assert len(growth) == 2, result
    for g in growth:
        assert g <= 0.6 * gib, f"a participant's resident memory grew by {g / 2**20:.0f} MiB for 1 GiB of weights over 2"
    assert result["caller_growth"] <= 64 * 2**20, f"the caller's resident memory grew by {result['caller_growth'] / 2**20:.0f} MiB"
    assert "participant rank 1 resident growth" in capsys.readouterr().out
