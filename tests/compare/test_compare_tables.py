"""``compare_tables``: any two per-node tables, in topological order, first divergence named."""

from collections.abc import Mapping
from pathlib import Path

import pytest
import torch

import tfexec
from tfexec import DType, Function, LoadedModule
from tfexec.compare import CompareError, Tolerance, compare_tables, tfexec_table

ROOT = Path(__file__).resolve().parents[2]
MLP_TEXT = '''
def mlp(x: f32[B, 4], w1: f32[4, 8], w2: f32[8, 4]) -> f32[B, 4]:
    h = matmul(x, w1)
    a = silu(h)
    return matmul(a, w2)
'''


@pytest.fixture(scope="module")
def mlp(tmp_path_factory: pytest.TempPathFactory) -> tuple[Function, tuple[torch.Tensor, ...]]:
    path = tmp_path_factory.mktemp("mlp") / "mlp.tf.py"
    path.write_text(MLP_TEXT)
    fn = tfexec.parse(path.read_text(), filename=str(path)).functions["mlp"]
    g = torch.Generator().manual_seed(0)
    return fn, (torch.randn(2, 4, generator=g), torch.randn(4, 8, generator=g), torch.randn(8, 4, generator=g))


def test_tfexec_against_itself_agrees_on_every_node(mlp: tuple[Function, tuple[torch.Tensor, ...]]) -> None:
    fn, xs = mlp
    report = compare_tables(tfexec_table, tfexec_table, program=fn, inputs=xs)
    assert report.ok and report.compared == 3 and report.first_divergence is None
    assert [r.key for r in report.rows] == ["mlp/h", "mlp/a", "mlp/%5"]
    assert "OK: 3 node value(s) compared, 0 diverge" in str(report)


def test_the_first_divergence_in_topological_order_is_named_with_its_source_line(
    mlp: tuple[Function, tuple[torch.Tensor, ...]],
) -> None:
    fn, xs = mlp

    def wrong_silu(program: "Function | LoadedModule", inputs: tuple[object, ...]) -> Mapping[str, object]:
        table: dict[str, object] = dict(tfexec_table(program, inputs))
        h = table["mlp/h"]
        assert isinstance(h, torch.Tensor)
        table["mlp/a"] = h * torch.sigmoid(1.01 * h)
        table["mlp/%5"] = torch.zeros(2, 4)
        return table

    report = compare_tables(tfexec_table, wrong_silu, program=fn, inputs=xs)
    first = report.first_divergence
    assert not report.ok and first is not None and first.key == "mlp/a"
    assert (first.op, first.source) == ("silu", "a = silu(h)") and first.location.endswith("mlp.tf.py:4:9")
    assert [r.status for r in report.rows] == ["ok", "MISMATCH", "MISMATCH"]
    text = str(report)
    assert "first divergence at mlp/a (silu, " in text and "  4 | a = silu(h)" in text
    assert "tolerances: f32 rtol=1.3e-06 atol=1e-05" in text


def test_a_mapping_works_as_well_as_a_callable_and_tolerances_are_per_dtype() -> None:
    expected = {"f/a": torch.ones(3), "f/b": torch.ones(3, dtype=torch.float16), "f/c": torch.arange(3)}
    actual = {"f/a": torch.ones(3) + 1e-4, "f/b": torch.ones(3, dtype=torch.float16), "f/c": torch.arange(3)}
    report = compare_tables(expected, actual)
    assert [r.status for r in report.rows] == ["MISMATCH", "ok", "ok"]
    assert report.rows[2].tolerance == "exact"
    loose = compare_tables(expected, actual, tolerances={DType.float32: Tolerance(0.0, 1e-3)})
    assert loose.ok and ("f32", "rtol=0 atol=0.001") in loose.tolerances


def test_keys_only_one_table_has_fail_unless_allowed() -> None:
    expected = {"f/a": torch.ones(1), "f/b": torch.ones(1)}
    actual = {"f/a": torch.ones(1), "f/z": torch.ones(1)}
    strict = compare_tables(expected, actual)
    assert not strict.ok and [r.status for r in strict.rows] == ["ok", "MISSING", "EXTRA"]
    assert strict.first_divergence is None and "1 only in expected, 1 only in actual (each a failure" in strict.summary()
    lenient = compare_tables(expected, actual, allow_missing=True)
    assert lenient.ok and "(not compared)" in lenient.summary()


def test_nothing_in_common_is_never_ok() -> None:
    report = compare_tables({"a": torch.ones(1)}, {"b": torch.ones(1)}, allow_missing=True)
    assert not report.ok and "nothing was compared" in report.summary()


def test_tuple_values_are_compared_field_by_field() -> None:
    flash = tfexec.parse((ROOT / "examples" / "flash_attention.tf.py").read_text()).functions["flash"]
    xs = (torch.randn(4, 32), torch.randn(32, 32), torch.randn(32, 32))
    table = tfexec_table(flash, xs)
    assert {"flash/%10.0", "flash/%10.1", "flash/%10.2"} <= set(table)
    changed = dict(table)
    changed["flash/%10.1"] = changed["flash/%10.1"] * 2
    report = compare_tables(table, changed, program=flash, inputs=xs)
    first = report.first_divergence
    assert first is not None and first.key == "flash/%10.1" and first.op == "grid"


def test_loop_iterations_take_their_node_s_source() -> None:
    tiled = tfexec.parse((ROOT / "examples" / "tiled_matmul.tf.py").read_text(), filename="tiled.tf.py").functions["tiled_matmul"]
    xs = (torch.randn(128, 64), torch.randn(64, 128))
    expand = tfexec_table(tiled, xs, loops="expand")
    report = compare_tables(expand, expand, program=tiled, inputs=xs)
    row = {r.key: r for r in report.rows}["tiled_matmul/acc[1]/pa"]
    assert report.ok and row.op == "slice" and row.location.startswith("tiled.tf.py:")


def test_a_callable_needs_a_program_and_values_must_be_tensors() -> None:
    with pytest.raises(CompareError, match="pass program= and inputs="):
        compare_tables(tfexec_table, {})
    with pytest.raises(CompareError, match="table entry 'a' is a float"):
        compare_tables({"a": 1.0}, {})


def test_arguments_are_checked_at_the_boundary() -> None:
    with pytest.raises(tfexec.ArgumentTypeError):
        compare_tables({}, {}, tolerances=[1.0])  # type: ignore[arg-type]


def test_a_caller_s_node_info_comes_first(mlp: tuple[Function, tuple[torch.Tensor, ...]]) -> None:
    from tfexec.compare import NodeInfo

    fn, xs = mlp
    mine = {"mlp/a": NodeInfo("F.silu", "model.py:12:8", "a = F.silu(h)")}
    report = compare_tables(tfexec_table, tfexec_table, program=fn, inputs=xs, info=mine)
    rows = {r.key: r for r in report.rows}
    assert (rows["mlp/a"].op, rows["mlp/a"].source) == ("F.silu", "a = F.silu(h)") and rows["mlp/h"].op == "matmul"
