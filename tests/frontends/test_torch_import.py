"""tfexec.frontends.torch: torch.export programs imported as HIR modules.

Each exported program is shared by the tests of its module-scoped fixture (an export takes
seconds). Tolerances: fp32 rtol=1e-5, atol=1e-5 against the PyTorch module (a composed op
such as addmm = matmul + add may round differently from torch's fused kernel; ``linear`` is
one ``linear`` node, bitwise); the two tfexec routes, the text round trip and the save/load
round trip are compared bitwise.
"""

import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch.export import Dim

import tfexec
from frontends import models
from tfexec import LoadedModule, describe_expr, load_module
from tfexec.cli import main as cli
from tfexec.evaluator.visitor import evaluate_value
from tfexec.frontends.torch import (
    SUPPORTED_OPS,
    ImportedModule,
    TorchImportError,
    import_module,
    import_program,
)
from tfexec.ir.expr import Call
from tfexec.ir.graph import post_order

RTOL = ATOL = 1e-5


def close(got: object, want: torch.Tensor) -> float:
    """Assert fp32 closeness; return the largest absolute difference."""
    assert isinstance(got, torch.Tensor)
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got, want, rtol=RTOL, atol=ATOL)
    return float((got - want).abs().max())


def bitwise(a: object, b: object) -> None:
    assert isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert torch.equal(a.view(-1).view(torch.int32), b.view(-1).view(torch.int32))


def nodes(loaded: LoadedModule) -> list[Call]:
    assert loaded.entry is not None
    return [n for n in post_order([loaded.entry.body]) if isinstance(n, Call)]


def named(loaded: LoadedModule, binding: str) -> Call:
    found = [n for n in nodes(loaded) if n.span is not None and n.span.binding == binding]
    assert len(found) == 1, [n.span for n in nodes(loaded)]
    return found[0]


# -- fixtures: one export per program -----------------------------------------------------------


@pytest.fixture(scope="module")
def mlp() -> tuple[torch.nn.Module, ImportedModule]:
    torch.manual_seed(0)
    model = models.MLP().eval()
    return model, import_module(model, (torch.randn(4, 16),), {"x": {0: Dim("B")}})


@pytest.fixture(scope="module")
def block() -> tuple[torch.nn.Module, ImportedModule]:
    torch.manual_seed(1)
    model = models.DecoderBlock().eval()
    x = torch.randn(2, 6, 32)
    return model, import_module(model, (x,), {"x": {0: Dim("B", max=16), 1: Dim("S", max=64)}})


@pytest.fixture(scope="module")
def masked() -> tuple[torch.nn.Module, ImportedModule]:
    torch.manual_seed(2)
    model = models.MaskedAttention().eval()
    return model, import_module(model, (torch.randn(2, 5, 16),), {"x": {1: Dim("S", max=32)}})


# -- values match PyTorch -------------------------------------------------------------------------


def test_mlp_matches_pytorch(mlp: tuple[torch.nn.Module, ImportedModule]) -> None:
    model, loaded = mlp
    x = torch.randn(4, 16)
    with torch.no_grad():
        close(tfexec.evaluate(loaded, x), model(x))


def test_mlp_weights_are_the_state_dict(mlp: tuple[torch.nn.Module, ImportedModule]) -> None:
    model, loaded = mlp
    assert set(loaded.module.constants) == set(model.state_dict())
    assert dict(loaded.module.constants)["fc1.weight"] == tfexec.f32[32, 16]
    assert loaded.weights["fc2.bias"].data_ptr() == model.fc2.bias.data_ptr()  # the module's own tensors
    (param,) = loaded.entry.params if loaded.entry is not None else ()
    assert param.name == "x" and param.type == tfexec.f32[tfexec.DimVar("B"), 16]


def test_decoder_block_matches_pytorch(block: tuple[torch.nn.Module, ImportedModule]) -> None:
    model, loaded = block
    x = torch.randn(2, 6, 32)
    with torch.no_grad():
        close(tfexec.evaluate(loaded, x), model(x))


def test_masked_attention_matches_pytorch(masked: tuple[torch.nn.Module, ImportedModule]) -> None:
    model, loaded = masked
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        close(tfexec.evaluate(loaded, x), model(x))


def test_handwritten_rmsnorm_is_bitwise_torch(block: tuple[torch.nn.Module, ImportedModule]) -> None:
    """Ops named after torch functions compute exactly what torch computes: the hand-written
    RMSNorm (pow, mean, add, rsqrt, mul) is bitwise equal to eager torch."""
    model, loaded = block
    line = models.marker_line("rmsnorm")
    on_line = [n for n in nodes(loaded) if n.span is not None and n.span.line == line and n.span.binding]
    assert [n.target.name for n in on_line] == ["pow", "reduce", "add", "rsqrt", "mul", "mul"]
    binding = on_line[-1].span.binding if on_line[-1].span is not None else None
    x = torch.randn(3, 7, 32)
    table: dict[str, object] = {}
    evaluate_value(loaded, (x,), table=table)
    got = table[f"forward/{binding}"]
    with torch.no_grad():
        bitwise(got.data, model.attn_norm(x))


@pytest.mark.parametrize(("dtype", "d_in"), [(torch.float32, 256), (torch.bfloat16, 16), (torch.float16, 32)])
def test_a_linear_is_one_node_bitwise_what_eager_computes(dtype: torch.dtype, d_in: int) -> None:
    """``aten.linear`` is one ``linear`` node: torch's fused GEMM, bitwise eager's result where
    ``matmul`` then ``add`` is not (half precision, or fp32 over a longer contraction)."""
    torch.manual_seed(6)
    model = torch.nn.Linear(d_in, 48).to(dtype).eval()
    x = torch.randn(2, 5, d_in).to(dtype)
    loaded = import_module(model, (x,), {"input": {0: Dim("B")}})
    assert [n.target.name for n in nodes(loaded)] == ["linear"]
    with torch.no_grad():
        want = model(x)
        composed = torch.matmul(x, model.weight.t()) + model.bias
    got = tfexec.evaluate(loaded, x)
    assert isinstance(got, torch.Tensor) and got.dtype == dtype and torch.equal(got, want)
    if dtype != torch.float32:  # rounded to half precision twice, not once (fp32 differs here too, by the BLAS)
        assert not torch.equal(composed, want)
    assert torch.equal(tfexec.lower(loaded).run(x), got)


class _LinearTorchTakesAndHirRefuses(torch.nn.Module):
    """``F.linear`` with a bias that only broadcasts ([rows, out]) and with a 1-D weight."""

    def __init__(self) -> None:
        super().__init__()
        self.w, self.v = torch.nn.Parameter(torch.randn(5, 4)), torch.nn.Parameter(torch.randn(4))
        self.b = torch.nn.Parameter(torch.randn(3, 5))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return F.linear(x, self.w, self.b), F.linear(x, self.v)


def test_a_linear_the_op_refuses_is_translated_as_matmul_and_add() -> None:
    """What torch's linear takes and the ``linear`` op does not (its C2, C5) is imported as
    ``matmul(x, transpose(w)) + b``, as before the op existed."""
    torch.manual_seed(7)
    model, x = _LinearTorchTakesAndHirRefuses().eval(), torch.randn(3, 4)
    loaded = import_module(model, (x,))
    assert sorted(n.target.name for n in nodes(loaded)) == ["add", "matmul", "matmul", "transpose"]
    got = tfexec.evaluate(loaded, x)
    with torch.no_grad():
        want = model(x)
    assert isinstance(got, tuple)
    for g, w in zip(got, want, strict=True):
        close(g, w)


@pytest.fixture(scope="module")
def zoo() -> tuple[torch.nn.Module, ImportedModule]:
    torch.manual_seed(4)
    model = models.OpZoo().eval()
    x, ids = torch.randn(2, 6, 8), torch.randint(0, 10, (2, 6))
    return model, import_module(model, (x, ids), {"x": {0: Dim("B")}, "ids": {0: Dim("B")}}, decompose=False)


def test_op_zoo_matches_pytorch(zoo: tuple[torch.nn.Module, ImportedModule]) -> None:
    """Reductions, variance, log-softmax, gathers, splits, joins, clamps, triangles, tiling,
    conversions and logic, translated rule by rule (no decomposition), at another batch."""
    model, loaded = zoo
    x, ids = torch.randn(3, 6, 8), torch.randint(0, 10, (3, 6))
    got = tfexec.evaluate(loaded, x, ids)
    with torch.no_grad():
        want = model(x, ids)
    assert isinstance(got, tuple) and len(got) == len(want) == 5
    for g, w in zip(got, want):
        close(g, w)
    assert tfexec.check_equivalence(loaded, x, ids).ok


@pytest.mark.parametrize("decompose", [None, False])
def test_in_place_assignment_is_functionalised(decompose: bool | None) -> None:
    """relu_, +=, h[i] = …, h[a:b:s] = … write in place: the program is functionalized (even
    with decompose=False, which keeps every op) and the scatters are translated; exact."""
    torch.manual_seed(5)
    model = models.InPlace()
    loaded = import_module(model, (torch.randn(4, 6),), {"x": {0: Dim("B", min=3)}}, decompose=decompose)
    x = torch.randn(7, 6)
    with torch.no_grad():
        bitwise(tfexec.evaluate(loaded, x), model(x))


# -- the routes, the text form, saving ------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["mlp", "block", "masked"])
def test_both_routes_agree(fixture: str, request: pytest.FixtureRequest) -> None:
    _, loaded = request.getfixturevalue(fixture)
    shape = {"mlp": (3, 16), "block": (2, 9, 32), "masked": (2, 7, 16)}[fixture]
    report = tfexec.check_equivalence(loaded, torch.randn(shape))
    assert report.ok, report
    assert report.compared == len(nodes(loaded))  # every op node (the MLP's six: three linear, relu, gelu, silu)


@pytest.mark.parametrize("fixture", ["block", "masked", "zoo"])
def test_text_round_trip_evaluates_identically(fixture: str, request: pytest.FixtureRequest) -> None:
    _, loaded = request.getfixturevalue(fixture)
    text = tfexec.print_ir(loaded.module)
    reparsed = tfexec.parse(text)
    assert tfexec.print_ir(reparsed) == text
    again = LoadedModule.from_reading(reparsed, loaded.weights)
    inputs = {
        "block": (torch.randn(2, 6, 32),),
        "masked": (torch.randn(2, 6, 16),),
        "zoo": (torch.randn(2, 6, 8), torch.randint(0, 10, (2, 6))),
    }[fixture]
    got, want = tfexec.evaluate(again, *inputs), tfexec.evaluate(loaded, *inputs)
    for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        bitwise(a, b)


def test_save_and_load_round_trip(mlp: tuple[torch.nn.Module, ImportedModule], tmp_path: Path) -> None:
    model, loaded = mlp
    path = loaded.save(tmp_path / "mlp")
    reloaded = load_module(path)
    x = torch.randn(5, 16)
    bitwise(tfexec.evaluate(reloaded, x), tfexec.evaluate(loaded, x))
    assert set(reloaded.reads()) <= set(model.state_dict())


# -- dynamic sizes ----------------------------------------------------------------------------


def test_dims_are_named_after_torch_export_dims(block: tuple[torch.nn.Module, ImportedModule]) -> None:
    _, loaded = block
    assert loaded.entry is not None
    B, S = tfexec.DimVar("B"), tfexec.DimVar("S")
    assert loaded.entry.params[0].type == tfexec.f32[B, S, 32]
    assert loaded.entry.ret_type == tfexec.f32[B, S, 32]


@pytest.mark.parametrize("shape", [(1, 3, 32), (3, 11, 32)])
def test_dynamic_dims_evaluate_at_other_sizes(block: tuple[torch.nn.Module, ImportedModule], shape: tuple[int, ...]) -> None:
    model, loaded = block
    x = torch.randn(shape)
    with torch.no_grad():
        close(tfexec.evaluate(loaded, x), model(x))


def test_dynamic_seq_in_masks(masked: tuple[torch.nn.Module, ImportedModule]) -> None:
    """The masks (full, triu, arange, le) are built at the run's sequence length; the batch
    was not marked dynamic, so it is static."""
    model, loaded = masked
    assert loaded.entry is not None
    assert loaded.entry.params[0].type == tfexec.f32[2, tfexec.DimVar("S"), 16]
    x = torch.randn(2, 12, 16)
    with torch.no_grad():
        close(tfexec.evaluate(loaded, x), model(x))
    with pytest.raises(tfexec.EvalError, match=r"parameter x \(input 0\): axis 0 must have size 2"):
        tfexec.evaluate(loaded, torch.randn(3, 12, 16))


def sizes(x: torch.Tensor) -> torch.Tensor:
    """Sizes as values: negative indices on a symbolic axis, a concat whose size torch spells
    ``2*S`` (HIR: ``S + S``), SymInts as operands and as ``arange`` bounds."""
    s = x.shape[1]
    doubled = torch.cat([x, x], dim=1)
    last = x[:, -1] + x[:, -2:].sum(1) + doubled[:, s - 1] + doubled[:, -3:-1].mean(1)
    pos = torch.arange(s, 2 * s).float()
    return last / s + pos.sum() + doubled.sum(1) * (x.shape[0] * s)


def test_symbolic_sizes_as_values() -> None:
    loaded = import_module(sizes, (torch.randn(2, 5, 3),), ({0: Dim("B"), 1: Dim("S", min=3)},))
    text = tfexec.print_ir(loaded.module)
    assert "size_S = reduce(full(shape=(S,), value=1, dtype=i64), kind='sum')" in text
    assert "shape=(B, 2 * S, 3)" in text  # torch's spelling of the concat's size, re-spelled
    for shape in [(2, 5, 3), (4, 9, 3)]:
        x = torch.randn(shape)
        bitwise(tfexec.evaluate(loaded, x), sizes(x))
        assert tfexec.check_equivalence(loaded, x).ok


def test_derived_dims_are_spelled_with_their_root() -> None:
    T = Dim("T")  # not "S": torch.export cannot derive from a Dim named S (sympy's S)

    def pair(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, x]) + y

    loaded = import_module(pair, (torch.randn(3), torch.randn(6)), ({0: T}, {0: 2 * T}))
    assert loaded.entry is not None and str(loaded.entry.params[1].type) == "f32[2 * T]"
    x, y = torch.randn(5), torch.randn(10)
    bitwise(tfexec.evaluate(loaded, x, y), pair(x, y))
    with pytest.raises(tfexec.EvalError, match=r"axis 0 must have size 2 \* T = 10, found 9"):
        tfexec.evaluate(loaded, x, torch.randn(9))


def test_a_size_no_input_axis_binds_is_refused() -> None:
    def halve(y: torch.Tensor) -> torch.Tensor:
        return y[: y.shape[0] // 2] * 2

    with pytest.raises(TorchImportError, match=r"input y axis 0: its size 2 \* T uses T, which is not the whole size"):
        import_module(halve, (torch.randn(6),), ({0: 2 * Dim("T")},))


# -- provenance -----------------------------------------------------------------------------


def test_spans_point_at_the_user_source_line(block: tuple[torch.nn.Module, ImportedModule]) -> None:
    _, loaded = block
    attention = named(loaded, "scaled_dot_product_attention")
    line = models.marker_line("sdpa")
    assert attention.span is not None
    assert Path(attention.span.file) == Path(models.__file__)
    source = Path(models.__file__).read_text(encoding="utf-8").splitlines()[line - 1]
    column = len(source) - len(source.lstrip()) + 1
    text = describe_expr(attention)
    assert text.startswith(f"{attention.span.file}:{line}:{column} scaled_dot_product_attention = attention(")
    on_line = [n for n in nodes(loaded) if n.span is not None and n.span.line == line]
    assert [n.target.name for n in on_line] == ["attention"]  # torch's fused op, one node


def test_module_name_in_linear_span(mlp: tuple[torch.nn.Module, ImportedModule]) -> None:
    """A node made inside torch (nn.Linear.forward) points at the user's line that called it."""
    _, loaded = mlp
    linear = named(loaded, "linear")
    assert linear.span is not None and Path(linear.span.file) == Path(models.__file__)
    line = Path(models.__file__).read_text(encoding="utf-8").splitlines()[linear.span.line - 1]
    assert "self.fc1(x)" in line


# -- functions, errors, decomposition -------------------------------------------------------------


def test_plain_function_keeps_its_parameter_names() -> None:
    def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    q, k, v = (torch.randn(2, 3, 5, 8) for _ in range(3))
    loaded = import_module(attend, (q, k, v), {"q": {2: Dim("L")}, "k": {2: Dim("M")}, "v": {2: Dim("M")}})
    assert loaded.entry is not None
    assert [p.name for p in loaded.entry.params] == ["q", "k", "v"]
    assert str(loaded.entry.params[1].type) == "f32[2, 3, M, 8]"
    q, k, v = torch.randn(2, 3, 4, 8), torch.randn(2, 3, 9, 8), torch.randn(2, 3, 9, 8)
    close(tfexec.evaluate(loaded, q, k, v), attend(q, k, v))
    assert loaded.module.constants == {}


def test_unsupported_ops_are_all_listed_with_their_lines() -> None:
    with pytest.raises(TorchImportError) as info:
        import_module(models.Unsupported(), (torch.randn(3, 4),), decompose=False)
    message = str(info.value)
    assert "2 ATen op(s) have no HIR translation (aten.erfinv.default, aten.lgamma.default)" in message
    for marker in ("lgamma", "erfinv", "erfinv2"):
        line = models.marker_line(marker)
        assert re.search(rf"{re.escape(models.__file__)}:{line}:\d+ \w+ = aten\.(lgamma|erfinv)\.default", message), message
    assert "# c = torch.lgamma(x.abs() + 1)" in message  # the source text
    assert "relu" not in message and "add" not in message  # nodes after a failure are not re-reported


def test_rule_refusal_is_reported_with_the_op() -> None:
    def train_dropout(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.dropout(x, 0.5, training=True) + torch.lgamma(x)

    with pytest.raises(TorchImportError, match=r"(?s)aten\.lgamma\.default.*aten\.dropout\.default: dropout in training mode"):
        import_module(train_dropout, (torch.randn(3),), decompose=False)


def test_export_failure_is_a_torch_import_error() -> None:
    def data_dependent(x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.sum() > 0 else x

    with pytest.raises(TorchImportError, match=r"test_torch_import.py:\d+: `return x \* 2 if x.sum\(\) > 0 else x` "
                       r"branches on a tensor's value \(data-dependent control flow\)"):
        import_module(data_dependent, (torch.randn(3),))


def test_bad_example_inputs() -> None:
    with pytest.raises(TorchImportError, match=r"example input 1 is int, not a tensor"):
        import_module(models.MLP(), (torch.randn(2, 16), 3))  # type: ignore[arg-type]


def test_decomposition_fallback_translates_core_aten() -> None:
    """An op without a rule (``addcmul``) is decomposed into ops with rules, automatically."""

    def fused(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.addcmul(x, x, y, value=0.5)

    x, y = torch.randn(4, 3), torch.randn(4, 3)
    with pytest.raises(TorchImportError, match=r"aten\.addcmul\.default"):
        import_program(fused, (x, y), decompose=False)
    loaded = import_module(fused, (x, y))
    close(tfexec.evaluate(loaded, x, y), fused(x, y))


def test_decompose_always_keeps_the_ops_with_rules(mlp: tuple[torch.nn.Module, ImportedModule]) -> None:
    model, imported = mlp
    program = import_program(model, (torch.randn(4, 16),), decompose=True)
    entry = program.module.functions["forward"]
    assert "linear" in {n.span.binding for n in post_order([entry.body]) if isinstance(n, Call) and n.span is not None}
    assert [n.target.name for n in post_order([entry.body]) if isinstance(n, Call)].count("linear") == 3
    x = torch.randn(4, 16)
    bitwise(tfexec.evaluate(LoadedModule.from_reading(program.module, program.weights), x), tfexec.evaluate(imported, x))


def test_supported_ops_cover_the_issue_list() -> None:
    wanted = {
        "linear.default", "addmm.default", "mm.default", "t.default", "relu.default", "gelu.default", "silu.default",
        "rsqrt.default", "mean.dim", "rms_norm.default", "slice.Tensor", "cat.default", "neg.default",
        "scaled_dot_product_attention.default", "_softmax.default", "softmax.int", "where.self", "full.default",
        "arange.default", "le.Tensor", "triu.default", "view.default", "reshape.default", "transpose.int",
        "permute.default", "expand.default", "unsqueeze.default", "squeeze.dim",
    }
    assert {f"aten.{w}" for w in wanted} <= SUPPORTED_OPS


# -- the command line -----------------------------------------------------------------------


def test_cli_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tiny"
    code = cli(["import", f"{models.__file__}:tiny_mlp", "--example-shape", "B=3,8", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert "forward(x: f32[B, 8]) -> f32[B, 4]" in capsys.readouterr().out
    loaded = load_module(out)
    x = torch.randn(5, 8)
    with torch.no_grad():
        close(tfexec.evaluate(loaded, x), models.tiny_mlp()(x))
    assert cli(["check", str(out), "--dim", "B=2"]) == 0


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["nowhere.py:f", "--example-shape", "2"], 2, "nowhere.py: no such file"),
        (["{models}:no_such_factory", "--example-shape", "2"], 2, "has no factory no_such_factory"),
        (["{models}:tiny_mpl", "--example-shape", "2"], 2, "has no factory tiny_mpl (a callable returning the model); did you mean tiny_mlp"),
        (["{models}", "--example-shape", "2"], 2, "expects MODEL.py:FACTORY"),
        (["{models}:tiny_mlp", "--example-shape", "2,x"], 2, "--example-shape"),
        (["{models}:Unsupported", "--example-shape", "3,4"], 1, "aten.lgamma.default"),
    ],
)
def test_cli_import_errors(
    argv: list[str], code: int, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [a.replace("{models}", models.__file__) for a in argv]
    assert cli(["import", *argv, "--out", str(tmp_path / "o")]) == code
    assert message in capsys.readouterr().err


def test_cli_help_says_it_runs_user_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli(["import", "--help"])
    assert "runs the Python code" in " ".join(capsys.readouterr().out.split())


# -- slow: more shapes, dtypes ------------------------------------------------------------------


@pytest.mark.slow
def test_block_in_float64_is_close_to_eager() -> None:
    torch.manual_seed(3)
    model = models.DecoderBlock().double().eval()
    x = torch.randn(2, 5, 32, dtype=torch.float64)
    loaded = import_module(model, (x,), {"x": {1: Dim("S")}})
    with torch.no_grad():
        torch.testing.assert_close(tfexec.evaluate(loaded, x), model(x), rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_unsupported_ops_after_decomposition_are_listed() -> None:
    with pytest.raises(TorchImportError, match=r"(?s)aten\.erfinv\.default.*aten\.lgamma\.default"):
        import_module(models.Unsupported(), (torch.randn(3, 4),))
