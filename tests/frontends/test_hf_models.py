"""Real models from ``transformers``: tiny GPT-2, Llama (grouped-query attention), BERT and
ViT (2 layers, hidden 64, vocab 128; random weights from a fixed seed, built offline).

Each (a) imports, (b) evaluates on the direct route, (c) runs lowered, (d) matches the
PyTorch module (fp32, max |Δ| <= 1e-4 * max(1, max |reference|)), (e) passes
``check_equivalence``, (f) prints and re-parses to a program that evaluates identically,
(g) saves and loads as a module directory, (h) evaluates at another sequence length
(ViT: another batch size) from the one import, and (i) agrees with PyTorch node by node
(``check_imported_against_torch``: every paired node within its dtype's tolerance, at both
sizes); (j) a wrong ``silu`` rule is named first, at its source line. One import per model
(module-scoped).
"""

import linecache
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers", reason="the model tests need transformers (the dev extra)")

import tfexec  # noqa: E402
from tfexec import LoadedModule, describe_expr  # noqa: E402
from tfexec.frontends.torch import ImportedModule, check_imported_against_torch, import_module  # noqa: E402
from tfexec.ir.expr import Call  # noqa: E402
from tfexec.ir.graph import post_order  # noqa: E402
from tfexec.ir.ops.elementwise import Silu  # noqa: E402
from tfexec.semantics.keys import node_sources  # noqa: E402

from frontends import hf_models  # noqa: E402

NAMES = sorted(hf_models.MODELS)


@dataclass
class Imported:
    model: torch.nn.Module
    loaded: ImportedModule
    inputs: tuple[torch.Tensor, ...]
    other: tuple[torch.Tensor, ...]
    kwargs: dict[str, object]


def _import(name: str) -> Imported:
    model, inputs, spec, kwargs, other = hf_models.MODELS[name]()
    return Imported(model, import_module(model, inputs, spec, kwargs=kwargs), inputs, other, kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def gpt2() -> Imported:
    return _import("gpt2")


@pytest.fixture(scope="module")
def llama() -> Imported:
    return _import("llama")


@pytest.fixture(scope="module")
def bert() -> Imported:
    return _import("bert")


@pytest.fixture(scope="module")
def vit() -> Imported:
    return _import("vit")


def imported(request: pytest.FixtureRequest, name: str) -> Imported:
    found = request.getfixturevalue(name)
    assert isinstance(found, Imported)
    return found


def as_tuple(value: object) -> tuple[torch.Tensor, ...]:
    out = value if isinstance(value, tuple) else (value,)
    assert all(isinstance(v, torch.Tensor) for v in out)
    return out  # type: ignore[return-value]


def assert_matches(got: object, want: tuple[torch.Tensor, ...]) -> None:
    """fp32: max |Δ| <= 1e-4 * max(1, max |reference|), per output; same dtypes and shapes."""
    values = as_tuple(got)
    assert len(values) == len(want)
    for g, w in zip(values, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        tolerance = 1e-4 * max(1.0, float(w.abs().max()))
        assert float((g - w).abs().max()) <= tolerance


def bitwise(a: object, b: object) -> None:
    for x, y in zip(as_tuple(a), as_tuple(b), strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y)


@pytest.mark.parametrize("name", NAMES)
def test_a_imports_with_the_state_dict_as_constants(name: str, request: pytest.FixtureRequest) -> None:
    m = imported(request, name)
    assert set(m.loaded.module.constants) <= set(m.model.state_dict()) | {k for k, _ in m.model.named_buffers()}
    assert m.loaded.entry is not None
    dims = {d.name for p in m.loaded.entry.params for d in getattr(p.type, "shape", ()) if isinstance(d, tfexec.DimVar)}
    assert dims == ({"B"} if name == "vit" else {"S"})


@pytest.mark.parametrize("name", NAMES)
def test_b_d_evaluates_like_the_pytorch_module(name: str, request: pytest.FixtureRequest) -> None:
    m = imported(request, name)
    assert_matches(tfexec.evaluate(m.loaded, *m.inputs), hf_models.outputs(m.model, m.inputs, m.kwargs))


@pytest.mark.parametrize("name", NAMES)
def test_c_runs_lowered_bitwise_like_the_direct_route(name: str, request: pytest.FixtureRequest) -> None:
    m = imported(request, name)
    bitwise(tfexec.lower(m.loaded).run(*m.inputs), tfexec.evaluate(m.loaded, *m.inputs))


@pytest.mark.parametrize("name", NAMES)
def test_e_both_routes_agree_node_by_node(name: str, request: pytest.FixtureRequest) -> None:
    m = imported(request, name)
    report = tfexec.check_equivalence(m.loaded, *m.inputs)
    assert report.ok, report
    assert report.compared > 50


@pytest.mark.parametrize("name", NAMES)
def test_f_prints_and_reparses_to_a_program_that_evaluates_identically(name: str, request: pytest.FixtureRequest) -> None:
    m = imported(request, name)
    text = tfexec.print_ir(m.loaded.module)
    reparsed = tfexec.parse(text)
    assert tfexec.print_ir(reparsed) == text
    bitwise(tfexec.evaluate(LoadedModule.from_reading(reparsed, m.loaded.weights), *m.inputs), tfexec.evaluate(m.loaded, *m.inputs))


@pytest.mark.parametrize("name", NAMES)
def test_g_saves_and_loads_as_a_module_directory(name: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    m = imported(request, name)
    reloaded = tfexec.load_module(m.loaded.save(tmp_path / name))
    bitwise(tfexec.evaluate(reloaded, *m.inputs), tfexec.evaluate(m.loaded, *m.inputs))


@pytest.mark.parametrize("name", NAMES)
def test_h_evaluates_at_another_size_from_one_import(name: str, request: pytest.FixtureRequest) -> None:
    m = imported(request, name)
    assert m.other[0].shape != m.inputs[0].shape
    got = tfexec.evaluate(m.loaded, *m.other)
    assert_matches(got, hf_models.outputs(m.model, m.other, m.kwargs))
    bitwise(tfexec.lower(m.loaded).run(*m.other), got)


@pytest.mark.parametrize("name", NAMES)
def test_i_every_paired_node_agrees_with_pytorch(name: str, request: pytest.FixtureRequest) -> None:
    m = imported(request, name)
    assert m.loaded.exported is not None and m.loaded.entry is not None
    fx = [n for n in m.loaded.exported.graph.nodes if n.op not in ("placeholder", "output")]
    for inputs in (m.inputs, m.other):
        report = check_imported_against_torch(m.loaded, inputs)
        assert report.ok, report
        assert report.comparison.compared > 50
        assert all(r.location and r.source for r in report.comparison.rows)
        pairing = report.pairing  # every node on either side is paired or listed as unpaired
        assert len(pairing.paired) + len(pairing.unpaired_fx) == len(fx)
        paired = {p.key for p in pairing.paired}
        assert len(paired) == len(pairing.paired)
        assert paired | {u.name for u in pairing.unpaired_hir} == set(node_sources(m.loaded.entry))


@pytest.fixture
def wrong_silu() -> Iterator[None]:
    """silu's value rule off by 1%; the registry's own entry is put back afterwards."""
    original = tfexec.eval_registry.lookup(Silu)
    assert original is not None

    @tfexec.register_eval(Silu, override=True)
    def silu_one_percent_off(ctx: tfexec.EvaluateContext) -> tfexec.Value:
        (x,) = ctx.args
        assert isinstance(x, tfexec.TensorValue)
        return tfexec.TensorValue(torch.nn.functional.silu(x.data) * 1.01, x.type)

    yield
    tfexec.eval_registry.add(Silu, original, override=True)  # the OpRule itself, not a handler wrapping it
    assert tfexec.eval_registry.lookup(Silu) is original


def test_j_a_wrong_silu_rule_is_named_first_at_its_source_line(llama: Imported, wrong_silu: None) -> None:
    report = check_imported_against_torch(llama.loaded, llama.inputs)
    first = report.first_divergence
    assert not report.ok and first is not None
    assert first.key == "forward/silu" and first.op == "silu (aten.silu)"
    assert llama.loaded.entry is not None
    span = node_sources(llama.loaded.entry)["forward/silu"].span
    assert span is not None and first.location == span.location()
    assert first.source == linecache.getline(span.file, span.line).strip() and "silu" in first.source
    rows = report.comparison.rows
    assert all(r.status == "ok" for r in rows[: rows.index(first)])


def test_llama_attention_is_grouped(llama: Imported) -> None:
    """4 query heads over 2 key/value heads: the key/value projections are half the width."""
    constants = llama.loaded.module.constants
    assert constants["layers.0.self_attn.k_proj.weight"] == tfexec.f32[32, 64]
    assert constants["layers.0.self_attn.q_proj.weight"] == tfexec.f32[64, 64]


def test_nodes_made_in_helpers_point_at_the_helper_lines(llama: Imported) -> None:
    """The causal mask is built inside transformers' masking helpers, the rotation in
    ``rotate_half``: their nodes point at those lines, not at the line of forward that
    called them."""
    assert llama.loaded.entry is not None
    files = {Path(n.span.file).name for n in post_order([llama.loaded.entry.body]) if isinstance(n, Call) and n.span is not None}
    assert {"masking_utils.py", "modeling_llama.py"} <= files
    index = [n for n in post_order([llama.loaded.entry.body]) if isinstance(n, Call) and n.target.name == "index"]
    assert index and all(Path(n.span.file).name == "masking_utils.py" for n in index if n.span is not None)
    assert "masking_utils.py" in describe_expr(index[0])
