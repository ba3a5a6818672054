"""The benchmarks cannot rot: every bench/ script's ``main`` runs with ``--quick`` and prints
its table. No assertion is about timing; each script itself refuses to time executors
whose outputs disagree, so a run also checks that the routes compute eager's values.
ONNX's row is there exactly when ``onnx`` imports; with it blocked, W1 and W3 still run."""

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _script(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))  # the scripts import their neighbours (harness, w1_…) by name
    return importlib.import_module(name)


@pytest.mark.parametrize(
    ("script", "title", "rows"),
    [
        ("w1_elementwise", "W1 elementwise DAG", ["eager (straight-line)", "eager (op-list loop)", "fx GraphModule",
                                                  "fx Interpreter", "tfexec evaluate", "run check=off",
                                                  "run check=boundary", "run check=full", "targets (issue #19"]),
        ("w2_decoder", "W2 decoder block", ["eager (straight-line)", "fx GraphModule", "tfexec evaluate", "run check=off",
                                            "targets (issue #19"]),
        ("w3_tiled", "W3 tiled matmul", ["eager (Python loop)", "fx GraphModule", "fx Interpreter", "tfexec evaluate",
                                         "run check=off", "run check=full", "targets (issue #19"]),
        ("w5_scaling", "W5 scaling", ["build", "infer_types", "lower", "eager", "tfexec evaluate", "run check=off"]),
        ("profile_routes", "W1 evaluate", ["W1 run check=off", "W3 evaluate", "W3 run check=off"]),
        ("w6_llama_import", "W6 imported tiny Llama", ["eager", "tfexec evaluate", "run check=off", "run check=boundary"]),
        ("startup", "Startup", ["import torch", "import tfexec", "tfexec run mlp", "target (issue #32)"]),
    ],
)
def test_script_runs_quick_and_prints_its_table(
    script: str, title: str, rows: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = _script(script, monkeypatch)
    assert module.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert title in out
    lines = out.splitlines()
    assert any(set(line.replace(" ", "")) == {"-"} for line in lines), f"no table rule in:\n{out}"
    for row in rows:
        assert any(line.startswith(row) for line in lines), f"no row {row!r} in:\n{out}"


def _onnx_imports() -> bool:
    try:
        import onnx.reference  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("script", ["w1_elementwise", "w3_tiled"])
@pytest.mark.parametrize("blocked", [False, True], ids=["onnx as installed", "onnx blocked"])
def test_onnx_row_is_there_exactly_when_onnx_imports(
    script: str, blocked: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if blocked:  # an import of onnx now fails, as where it is not installed
        monkeypatch.setitem(sys.modules, "onnx", None)
        monkeypatch.setitem(sys.modules, "onnx.reference", None)
    present = _onnx_imports()
    module = _script(script, monkeypatch)
    assert module.main(["--quick", "--rounds", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = [line for line in lines if line.startswith("onnx ReferenceEvaluator ")]
    note = [line for line in lines if line.startswith("onnx ReferenceEvaluator:")]
    assert len(note) == 1, lines
    if present:
        assert len(row) == 1 and "within rtol=" in note[0], lines
    else:
        assert row == [] and "row absent" in note[0], lines


def test_w1_straight_line_source_is_one_statement_per_op_and_frees_after_last_read(monkeypatch: pytest.MonkeyPatch) -> None:
    w1 = _script("w1_elementwise", monkeypatch)
    program = w1.Program((("add", 0, 1), ("exp", 4, -1), ("mul", 5, 2), ("tanh", 6, -1), ("add", 7, 3)))
    assert w1.straight_line_source(program).splitlines() == [
        "def w1_straight_line(v0, v1, v2, v3):",
        "    v4 = torch.add(v0, v1)",
        "    del v0, v1",
        "    v5 = torch.exp(v4)",
        "    del v4",
        "    v6 = torch.mul(v5, v2)",
        "    del v2, v5",
        "    v7 = torch.tanh(v6)",
        "    del v6",
        "    v8 = torch.add(v7, v3)",
        "    del v3, v7",
        "    return v8",
    ]
    import torch

    xs = [torch.linspace(-1, 1, w1.WIDTH) * (i + 1) for i in range(w1.N_INPUTS)]
    assert torch.equal(w1.straight_line_fn(program)(*xs), w1.loop_fn(program)(*xs))


def test_w4_runs_its_children_and_prints_its_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    w4 = _script("w4_memory", monkeypatch)
    # Two fresh child processes (each imports torch: seconds), run side by side.
    assert w4.main(["--quick", "--executors", "eager,run check=off"]) == 0
    out = capsys.readouterr().out
    assert "W4 peak memory" in out
    assert [line.split()[0] for line in out.splitlines()[-2:]] == ["eager", "run"]


@pytest.mark.parametrize("executor", ["eager", "tfexec evaluate", "run check=off", "run check=boundary", "run check=full"])
def test_w4_child_measures_every_executor(executor: str, monkeypatch: pytest.MonkeyPatch) -> None:
    w4 = _script("w4_memory", monkeypatch)
    result = w4.child(executor, 8, 0.25)  # in this process: checks the measuring code, not the numbers
    assert result["executor"] == executor and result["agrees"] is True
    assert isinstance(result["peak_kib"], int)


def test_w1_program_is_a_dag_whose_every_value_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    w1 = _script("w1_elementwise", monkeypatch)
    program = w1.generate(500, seed=3)
    assert len(program.ops) == 500
    reads = [0] * (w1.N_INPUTS + len(program.ops))
    for index, (_kind, a, b) in enumerate(program.ops):
        here = w1.N_INPUTS + index
        assert 0 <= a < here and b < here  # operands are earlier values: a DAG
        reads[a] += 1
        if b >= 0:
            reads[b] += 1
    assert all(r > 0 for r in reads[:-1])  # no dead value: each executor does all the work
    assert max(reads) > 1  # and some sharing


def test_harness_refuses_executors_that_disagree(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    harness = _script("harness", monkeypatch)
    harness.same([("eager", torch.ones(2)), ("same", torch.ones(2))])
    with pytest.raises(AssertionError, match="benchmark executors disagree: off differs from eager"):
        harness.same([("eager", torch.ones(2)), ("off", torch.zeros(2))])
