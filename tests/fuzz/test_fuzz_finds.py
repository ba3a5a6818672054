"""The fuzzer finds planted bugs and reduces each to the one node, deterministically for a
seed; backends that compute what tfexec computes never diverge."""

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from broken_backends import dropped_loop_carry, eager_tfexec, gelu_off_by_an_ulp, slice_start_off_by_one
from tfexec.compare import EXACT
from tfexec.fuzz import FuzzOptions, fuzz, replay
from tfexec.ir.dtypes import DType

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "fuzz_backends"

CASES = {
    # gelu one ulp off: only an exact f32 tolerance sees it (the default one would not)
    "gelu": (gelu_off_by_an_ulp, FuzzOptions(seed=0, count=8, ops=frozenset({"gelu", "add", "mul"}), loops=False,
                                             tolerances={DType.float32: EXACT}), "gelu("),
    "slice": (slice_start_off_by_one, FuzzOptions(seed=0, count=8, ops=frozenset({"slice", "add", "mul"}),
                                                  loops=False), "slice("),
    "carry": (dropped_loop_carry, FuzzOptions(seed=0, count=10, ops=frozenset({"add", "mul", "neg"}), calls=False),
              "grid("),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_planted_bug_is_found_and_reduced_to_its_node(case: str, tmp_path: Path) -> None:
    backend, options, op = CASES[case]
    report = fuzz(backend, options, corpus=tmp_path)
    assert report.found and report.divergences, report.summary()
    assert all(f.signature.startswith(op) for f in report.divergences), report.summary()
    first = report.divergences[0]
    assert len(first.kept) == 1 and f"{op[:-1]}(" in first.kept[0], first  # the one node, 1-minimal
    assert "1-minimal" in first.reduction
    assert first.repro is not None
    files = {p.name for p in first.repro.iterdir()}
    assert {"program.tf.py", "inputs.safetensors", "tfexec.safetensors", "backend.safetensors",
            "finding.json", "replay.txt"} <= files
    record = json.loads((first.repro / "finding.json").read_text())
    assert record["signature"] == first.signature and record["kind"] == "divergence"
    # deterministic for the seed: the same findings, first seen in the same programs
    again = fuzz(backend, dataclasses.replace(options, reduce=False))
    assert [(f.signature, f.program) for f in again.findings.values()] == [
        (f.signature, f.program) for f in report.findings.values()]


def test_the_repro_shows_the_broken_backend_not_the_program(tmp_path: Path) -> None:
    from tfexec.fuzz._findings import predicate
    from tfexec.reduce import load_repro

    backend, options, _ = CASES["gelu"]
    first = fuzz(backend, options, corpus=tmp_path).divergences[0]
    assert first.repro is not None
    repro = load_repro(first.repro)
    assert predicate("divergence", first.signature, backend, options.tolerances)(*repro)
    assert not predicate("divergence", first.signature, eager_tfexec, options.tolerances)(*repro)
    shown = replay(backend, first.repro, options.tolerances)
    assert shown is not None and shown.startswith(first.signature + ": ")
    assert replay(eager_tfexec, first.repro, options.tolerances) is None


def test_a_signature_already_in_the_corpus_is_not_reduced_again(tmp_path: Path) -> None:
    backend, options, _ = CASES["gelu"]
    first = fuzz(backend, options, corpus=tmp_path)
    entries = sorted(p.name for p in tmp_path.iterdir())
    second = fuzz(backend, options, corpus=tmp_path)
    assert [f.signature for f in second.findings.values()] == [f.signature for f in first.findings.values()]
    assert all(f.reduction == "already in the corpus (not reduced again)" for f in second.findings.values())
    assert sorted(p.name for p in tmp_path.iterdir()) == entries
    assert second.found  # still found in this run: the exit status says so


def test_the_default_tolerance_does_not_see_one_ulp() -> None:
    backend, options, _ = CASES["gelu"]
    assert fuzz(backend, dataclasses.replace(options, tolerances={})).ok


def test_tfexec_itself_never_diverges() -> None:
    report = fuzz(eager_tfexec, FuzzOptions(seed=3, count=30))
    assert report.ok, report.summary()
    assert report.ran > 20


def _fx_backend(mode: str):  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(EXAMPLES))
    try:
        import torch_fx_backend
    finally:
        sys.path.remove(str(EXAMPLES))
    return torch_fx_backend.backend(mode)


def test_the_eager_fx_adapter_never_diverges() -> None:
    report = fuzz(_fx_backend("eager"), FuzzOptions(seed=0, count=40, layouts=False))
    assert report.ok, report.summary()
    assert report.ran - sum(report.declined.values()) >= 20, report.summary()  # it computed most programs


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_eager_fx_adapter_never_diverges_on_many_programs(seed: int) -> None:
    report = fuzz(_fx_backend("eager"), FuzzOptions(seed=seed, count=300, layouts=False))
    assert report.ok, report.summary()


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_planted_bug_is_found_with_every_op_on(case: str) -> None:
    backend, options, op = CASES[case]
    wide = FuzzOptions(seed=1, count=300, loops=options.loops, tolerances=options.tolerances, reduce=False)
    report = fuzz(backend, wide)
    assert any(f.signature.startswith(op) for f in report.divergences), report.summary()


@pytest.mark.slow
def test_the_inductor_row_compiles_and_agrees_on_a_few_programs() -> None:
    report = fuzz(_fx_backend("inductor"), FuzzOptions(seed=0, count=3, layouts=False, ops=frozenset({"add", "mul", "gelu", "softmax", "reduce"})))
    assert report.compared >= 1, report.summary()
