"""A real miscompile: a backend with one wrong op rule, run on the Llama block example.

The backend is tfexec with one value rule replaced (``register_eval(..., override=True)``,
restored afterwards): ``softmax`` over the wrong axis, or a ``silu`` kernel that crashes.
``reduce_failing`` brings the block down to the wrong op alone, the per-node comparison
names that op's node first, and the written files reproduce the failure.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

import tfexec
from tfexec import EvaluateContext, Function, LoadedModule, TensorValue, Tuple, Value
from tfexec.compare import compare_tables, tfexec_table
from tfexec.ir.ops.base import Op
from tfexec.ir.ops.elementwise import Silu
from tfexec.ir.ops.norm import Softmax
from tfexec.reduce import load_repro, output_mismatch, raises, reduce_failing

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def wrong_rule(op: type[Op], handler: Callable[[EvaluateContext], Value]) -> Iterator[None]:
    """``handler`` as ``op``'s value rule inside the block; the real rule again afterwards."""
    original = tfexec.eval_registry.lookup(op)
    assert original is not None
    tfexec.register_eval(op, override=True)(handler)
    try:
        yield
    finally:
        tfexec.eval_registry.add(op, original, override=True)  # the entry itself (register_eval would wrap it as a handler)


def softmax_off_by_one_axis(ctx: EvaluateContext) -> Value:
    (x,) = ctx.args
    assert isinstance(x, TensorValue) and isinstance(ctx.op, Softmax)
    return TensorValue(torch.softmax(x.data, dim=ctx.op.axis - 1), x.type)


def crashing_silu(ctx: EvaluateContext) -> Value:
    raise RuntimeError("silu kernel crashed: unsupported tile shape")


def wrong_softmax_backend(program: "Function | LoadedModule", inputs: tuple[object, ...]) -> object:
    with wrong_rule(Softmax, softmax_off_by_one_axis):
        return tfexec.evaluate(program, *inputs)


def wrong_softmax_table(program: "Function | LoadedModule", inputs: tuple[object, ...]) -> dict[str, torch.Tensor]:
    with wrong_rule(Softmax, softmax_off_by_one_axis):
        return tfexec_table(program, inputs)


def picky_backend(program: Function, inputs: tuple[torch.Tensor, ...]) -> object:
    """Crashes in silu; also refuses programs with several outputs (a different error)."""
    if isinstance(program.body, Tuple):
        raise RuntimeError("backend: programs with several outputs are not supported")
    with wrong_rule(Silu, crashing_silu):
        return tfexec.evaluate(program, *inputs)


@pytest.fixture(scope="module")
def llama() -> tuple[LoadedModule, torch.Tensor]:
    return tfexec.load_module(ROOT / "examples" / "llama_block"), torch.randn(8, 64, generator=torch.Generator().manual_seed(0))


def test_the_wrong_rule_is_restored(llama: tuple[LoadedModule, torch.Tensor]) -> None:
    block, x = llama
    before = tfexec.evaluate(block, x)
    assert not torch.equal(wrong_softmax_backend(block, (x,)), before)  # type: ignore[arg-type]
    assert torch.equal(tfexec.evaluate(block, x), before)


def test_a_wrong_softmax_reduces_to_the_softmax_alone(llama: tuple[LoadedModule, torch.Tensor]) -> None:
    block, x = llama
    reduced = reduce_failing(block, x, fails=output_mismatch(wrong_softmax_backend))
    assert reduced.minimal and reduced.nodes_after == 1 and reduced.nodes_before > 50
    assert reduced.kept[0].endswith("llama_block/module.tf.py:35:13 probs = softmax(masked)")
    assert reduced.text == "def block(masked: f32[4, S, S]):\n    probs = softmax(masked)\n    return probs\n"
    assert reduced.input_names == ("masked",) and reduced.origins[0].startswith("value of ")
    assert reduced.origins[0].endswith('masked = where(le(cols, rows), scores, float("-inf"))')
    golden = tfexec_table(block, (x,))["block/masked"]
    assert torch.equal(reduced.inputs[0], golden)  # the cut is fed tfexec's own value


def test_the_written_files_reproduce_the_failure(llama: tuple[LoadedModule, torch.Tensor], tmp_path: Path) -> None:
    block, x = llama
    fails = output_mismatch(wrong_softmax_backend)
    reduced = reduce_failing(block, x, fails=fails)
    program, inputs = reduced.write(tmp_path)
    assert program.read_text() == reduced.text
    fn, values = load_repro(tmp_path)
    assert fails(fn, values)
    assert all(torch.equal(a, b) for a, b in zip(values, reduced.inputs))
    from safetensors import safe_open

    with safe_open(str(inputs), framework="pt") as f:
        assert (f.metadata() or {})["origin.masked"] == reduced.origins[0]
    with pytest.raises(tfexec.TfexecError, match="not a written reduction"):
        load_repro(tmp_path / "nothing-here")


def test_the_per_node_comparison_names_the_softmax_first(llama: tuple[LoadedModule, torch.Tensor]) -> None:
    block, x = llama
    report = compare_tables(tfexec_table, wrong_softmax_table, program=block, inputs=(x,))
    first = report.first_divergence
    assert not report.ok and first is not None
    assert (first.key, first.op, first.source) == ("block/probs", "softmax", "probs = softmax(masked)")
    statuses = {r.key: r.status for r in report.rows}
    assert statuses["block/masked"] == "ok" and statuses["block/h"] == "MISMATCH"
    assert "first divergence at block/probs (softmax, " in str(report)


def test_a_crash_reduces_too(llama: tuple[LoadedModule, torch.Tensor]) -> None:
    block, x = llama
    reduced = reduce_failing(block, x, fails=raises(picky_backend, match="silu kernel crashed"))
    assert reduced.nodes_after == 1 and "silu(" in reduced.text and reduced.kept[0].endswith("gate = silu(matmul(hn, mlp_w_gate))")


def test_a_fail_regex_keeps_the_reduction_on_the_same_error(llama: tuple[LoadedModule, torch.Tensor]) -> None:
    """Unpinned, any exception counts and the search drifts to the other error (several
    outputs); pinned to the silu message, it ends at the silu."""
    block, x = llama
    drifted = reduce_failing(block, x, fails=raises(picky_backend))
    assert "silu(" not in drifted.text and isinstance(drifted.function.body, Tuple)
    pinned = reduce_failing(block, x, fails=raises(picky_backend, match="silu kernel crashed"))
    assert "silu(" in pinned.text and not isinstance(pinned.function.body, Tuple)


def test_a_mismatch_predicate_does_not_count_a_crash() -> None:
    fn = tfexec.parse("def f(x: f32[4]) -> f32[4]:\n    return silu(x)\n").functions["f"]
    assert raises(picky_backend)(fn, (torch.ones(4),))
    assert not output_mismatch(picky_backend)(fn, (torch.ones(4),))
