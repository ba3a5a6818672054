"""``check_against_torch`` and ``tfexec check MODEL.py:FACTORY --against torch``: every
imported node's value against PyTorch's value of the exported FX node it came from.

Small models here (one import each, module-scoped); the transformers models are checked in
``test_hf_models.py`` on that file's imports. A wrong rule is installed with
``register_eval(Op, override=True)`` by the ``wrong_rule`` fixture, which puts the
registry's own entry back afterwards (``eval_registry.add(op, entry, override=True)``).
"""

import inspect
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim

import tfexec
from frontends import models
from tfexec import EvaluateContext, TensorValue, Value
from tfexec.cli import main as cli
from tfexec.compare import DEFAULT_TOLERANCES, EXACT, Tolerance, text_mismatch
from tfexec.frontends.torch import (
    ImportedModule,
    TorchCheckError,
    TorchCheckReport,
    check_against_torch,
    check_imported_against_torch,
    import_module,
)
from tfexec.ir.ops.base import Op
from tfexec.ir.ops.elementwise import Gelu, Silu
from tfexec.semantics.keys import node_sources

Install = Callable[[type[Op], Callable[[EvaluateContext], Value]], None]


class Mixed(nn.Module):
    """A linear, then what has no counterpart: an identity ``to``, a two-output ``max``, a size."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = F.gelu(self.fc(x), approximate="tanh")  # <- gelu
        h = h.to(torch.float32)  # <- identity
        top, where = h.max(dim=-1)  # <- max
        return torch.softmax(h, -1) * top.unsqueeze(-1) / x.shape[0], where


def line_of(cls: type, marker: str) -> int:
    """The line of ``cls``'s source marked ``# <- marker``."""
    lines, first = inspect.getsourcelines(cls)
    return first + next(i for i, line in enumerate(lines) if line.rstrip().endswith(f"# <- {marker}"))


def mlp_line(text: str) -> int:
    """The line of ``models.MLP.forward`` that contains ``text``."""
    lines, first = inspect.getsourcelines(models.MLP.forward)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.fixture(scope="module")
def mlp() -> tuple[ImportedModule, torch.Tensor]:
    """``models.tiny_mlp`` (linear, relu, linear, tanh-gelu, linear, silu), batch dynamic."""
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(0))
    return import_module(models.tiny_mlp().eval(), (x,), {"x": {0: Dim("B")}}), x


@pytest.fixture(scope="module")
def mixed() -> tuple[ImportedModule, torch.Tensor]:
    torch.manual_seed(0)
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(1))
    return import_module(Mixed().eval(), (x,), {"x": {0: Dim("B")}}), x


@pytest.fixture
def wrong_rule() -> Iterator[Install]:
    """``install(op, handler)``: ``handler`` becomes ``op``'s value rule for this test; the
    registry's original ``OpRule`` entry is put back afterwards, as it was."""
    saved: dict[type[Op], object] = {}

    def install(op: type[Op], handler: Callable[[EvaluateContext], Value]) -> None:
        original = tfexec.eval_registry.lookup(op)
        assert original is not None
        saved.setdefault(op, original)
        tfexec.register_eval(op, override=True)(handler)

    yield install
    for op, original in saved.items():
        assert isinstance(original, tfexec.semantics.registry.OpRule)
        tfexec.eval_registry.add(op, original, override=True)  # the entry itself, not a handler wrapping it
        assert tfexec.eval_registry.lookup(op) is original


def gelu_without_the_tanh_approximation(ctx: EvaluateContext) -> Value:
    (x,) = ctx.args
    assert isinstance(x, TensorValue)
    return TensorValue(F.gelu(x.data), x.type)


def silu_shifted_by(shift: float) -> Callable[[EvaluateContext], Value]:
    def shifted(ctx: EvaluateContext) -> Value:
        (x,) = ctx.args
        assert isinstance(x, TensorValue)
        return TensorValue(F.silu(x.data) + shift, x.type)

    return shifted


def accounted_for(imported: ImportedModule, report: TorchCheckReport) -> None:
    """Every FX node is paired or listed (placeholders and the output aside), and every
    keyed HIR node is paired or listed: nothing is silently dropped."""
    assert imported.exported is not None and imported.entry is not None
    fx = [n for n in imported.exported.graph.nodes if n.op not in ("placeholder", "output")]
    pairing = report.pairing
    assert len(pairing.paired) + len(pairing.unpaired_fx) == len(fx)
    keys = {p.key.split(".")[0] for p in pairing.paired}
    assert keys | {u.name for u in pairing.unpaired_hir} == set(node_sources(imported.entry))
    assert len(keys) == len(pairing.paired)  # one FX node per HIR node


def test_every_node_of_a_small_model_agrees_at_its_source_line(mlp: tuple[ImportedModule, torch.Tensor]) -> None:
    imported, x = mlp
    report = check_imported_against_torch(imported, x)
    assert report.ok, report
    rows = report.comparison.rows
    assert [r.key for r in rows] == [f"forward/{n}" for n in ("linear", "relu", "linear_1", "gelu", "linear_2", "silu")]
    file = str(Path(models.__file__).resolve())
    gelu = next(r for r in rows if r.key == "forward/gelu")
    assert gelu.op == "gelu (aten.gelu)" and gelu.location == f"{file}:{mlp_line('F.gelu')}:9"
    assert gelu.source == 'h = F.gelu(self.fc2(h), approximate="tanh")'
    assert all(r.status == "ok" and r.max_abs_diff is not None for r in rows)
    accounted_for(imported, report)


def test_the_report_states_the_tolerances_and_the_verdict(mlp: tuple[ImportedModule, torch.Tensor]) -> None:
    imported, x = mlp
    text = str(check_imported_against_torch(imported, x))
    assert "tolerances: f32 rtol=1.3e-06 atol=1e-05" in text
    assert text.splitlines()[-1].startswith("OK against PyTorch: 6 paired node(s) compared, 0 diverge")


def test_unpaired_nodes_are_listed_with_their_reason_and_do_not_fail(mixed: tuple[ImportedModule, torch.Tensor]) -> None:
    imported, x = mixed
    report = check_imported_against_torch(imported, x)
    assert report.ok, report
    why = {u.name: u.why for u in report.pairing.unpaired_fx}
    assert why["to"] == "the same HIR node as gelu (an identity here): compared there"
    assert why["max_1"] == "several outputs: each is paired through its getitem"
    assert any(w.startswith("a size") for w in why.values())
    assert any(w.startswith("a runtime assertion") for w in why.values())
    hir = {u.op: u.why for u in report.pairing.unpaired_hir}
    assert hir["full"] == "built in the translation of div, with no FX node of its own"  # x.shape[0] as a tensor
    assert "transpose" not in hir  # a linear is one node, paired with its FX node
    rows = {r.key: r for r in report.comparison.rows}
    assert rows["forward/getitem"].op == "reduce (aten.max.dim[0])"
    assert rows["forward/getitem_1"].dtype == "i64" and rows["forward/getitem_1"].tolerance == "exact"
    assert rows["forward/getitem"].location.endswith(f":{line_of(Mixed, 'max')}:9")
    text = str(report)
    assert "unpaired (not compared, not failures): 4 FX nodes with no HIR node of their own" in text
    accounted_for(imported, report)


def test_it_checks_at_another_size_of_a_dynamic_axis(mixed: tuple[ImportedModule, torch.Tensor]) -> None:
    imported, _ = mixed
    report = check_imported_against_torch(imported, torch.randn(6, 8))
    assert report.ok, report
    assert report.comparison.rows[0].shape == "[6, 8]"


def test_a_wrong_rule_is_named_first_at_the_user_s_source_line(
    mlp: tuple[ImportedModule, torch.Tensor], wrong_rule: Install
) -> None:
    imported, x = mlp
    wrong_rule(Gelu, gelu_without_the_tanh_approximation)
    report = check_imported_against_torch(imported, x)
    assert not report.ok
    first = report.first_divergence
    assert first is not None and first.key == "forward/gelu"
    assert first.location == f"{Path(models.__file__).resolve()}:{mlp_line('F.gelu')}:9"
    assert first.source == 'h = F.gelu(self.fc2(h), approximate="tanh")'
    statuses = [r.status for r in report.comparison.rows]
    assert statuses[:3] == ["ok"] * 3 and statuses[3] == "MISMATCH"  # the nodes before it agree
    last = str(report).splitlines()
    assert "first divergence at forward/gelu (gelu (aten.gelu)" in last[-2]
    assert last[-1].endswith('| h = F.gelu(self.fc2(h), approximate="tanh")')


def test_the_real_rule_is_back_after_the_wrong_rule_fixture(mlp: tuple[ImportedModule, torch.Tensor]) -> None:
    imported, x = mlp
    assert check_imported_against_torch(imported, x).ok


def test_a_shift_within_tolerance_passes_with_its_margin_and_fails_when_exact(
    mlp: tuple[ImportedModule, torch.Tensor], wrong_rule: Install
) -> None:
    """silu is the last node: a shift of half the f32 atol there moves nothing else."""
    imported, x = mlp
    wrong_rule(Silu, silu_shifted_by(5e-6))
    report = check_imported_against_torch(imported, x)
    assert report.ok, report
    assert report.worst is not None and report.worst.key == "forward/silu"
    assert 0.2 < report.worst.ratio < 0.6
    assert f"worst |Δ| is {report.worst.ratio:.3g} of its tolerance (at forward/silu)" in report.summary()
    exact = check_imported_against_torch(imported, x, tolerances={tfexec.DType.float32: EXACT})
    assert not exact.ok and exact.first_divergence is not None and exact.first_divergence.key == "forward/silu"
    assert exact.worst is not None and exact.worst.ratio == float("inf")
    assert "tolerances: f32 exact" in str(exact)
    loose = check_imported_against_torch(imported, x, tolerances={tfexec.DType.float32: Tolerance(0.0, 1e-3)})
    assert loose.ok and loose.worst is not None and loose.worst.ratio < 0.01


def test_check_against_torch_imports_a_function_and_checks_it() -> None:
    def program(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x @ w, dim=-1).cumsum(-1)

    x, w = torch.randn(4, 6), torch.randn(6, 5)
    report = check_against_torch(program, (x, w))
    assert report.ok, report
    assert [r.key for r in report.comparison.rows] == ["forward/matmul", "forward/softmax", "forward/cumsum"]
    other = check_against_torch(program, (x, w), {"x": {0: Dim("B")}}, inputs=(torch.randn(7, 6), w))
    assert other.ok and other.comparison.rows[0].shape == "[7, 5]"


def test_a_decomposed_import_is_paired_with_the_decomposed_graph() -> None:
    """``lerp`` has no rule: the import decomposes, and PyTorch runs what was translated."""

    def program(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.lerp(x, y, 0.3) * 2

    report = check_against_torch(program, (torch.randn(3, 4), torch.randn(3, 4)))
    assert report.ok, report
    ops = [r.op for r in report.comparison.rows]
    assert len(ops) > 2 and not any("lerp" in op for op in ops)


def test_what_cannot_be_checked_is_refused_with_a_tfexec_error(mlp: tuple[ImportedModule, torch.Tensor], tmp_path: Path) -> None:
    imported, x = mlp
    with pytest.raises(TorchCheckError, match=r"takes 1 input\(s\), got 2"):
        check_imported_against_torch(imported, (x, x))
    with pytest.raises(TorchCheckError, match="a tensor or a sequence of tensors"):
        check_imported_against_torch(imported, [x.tolist()])  # type: ignore[list-item]
    reloaded = tfexec.load_module(imported.save(tmp_path / "mlp"))
    with pytest.raises(TorchCheckError, match="needs the module import_module returned"):
        check_imported_against_torch(reloaded, x)  # type: ignore[arg-type]
    with pytest.raises(TorchCheckError, match=r"input 0 \(x\) axis 1 has size 9; the program was exported with size 8"):
        check_imported_against_torch(imported, torch.randn(3, 9))  # the wrong width


def test_inputs_the_export_was_not_made_for_are_refused_before_either_run() -> None:
    """The node-by-node run of the exported graph skips torch's own input checks, so the
    check makes them: a dim outside its exported range, one dim at two sizes, a wrong rank."""
    from torch.export import Dim

    from tfexec.frontends.torch import check_against_torch

    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x * 2, dim=-1) + y

    x = torch.randn(4, 16)
    shapes = {"x": {0: Dim("B", max=8)}, "y": {0: Dim("B", max=8)}}
    assert check_against_torch(f, (x, x), shapes, inputs=(torch.randn(6, 16), torch.randn(6, 16))).ok
    refusals = [
        ((torch.randn(9, 16), torch.randn(9, 16)), r"input 0 \(x\) axis 0 has size 9, outside the range its dim was exported for \(0\.\.8\)"),
        ((torch.randn(4, 16), torch.randn(5, 16)), r"input 1 \(y\) axis 0 has size 5 but input 0 \(x\) axis 0 has 4"),
        ((torch.randn(4), torch.randn(4, 16)), r"input 0 \(x\) has rank 1; the program was exported for rank 2"),
    ]
    for inputs, message in refusals:
        with pytest.raises(TorchCheckError, match=message):
            check_against_torch(f, (x, x), shapes, inputs=inputs)


def test_pytorch_failing_on_the_exported_program_names_the_node(mlp: tuple[ImportedModule, torch.Tensor]) -> None:
    """tfexec runs first (its binding errors name the parameter); should PyTorch then fail,
    the error names the FX node and its line, not a traceback."""
    from tfexec.frontends.torch._against import torch_values

    imported, _ = mlp
    assert imported.exported is not None
    with pytest.raises(TorchCheckError, match=r"failed at .*models\.py:\d+:9 linear = aten\.linear\.default: RuntimeError"):
        torch_values(imported.exported, (torch.ones(3, 8, dtype=torch.int64),))


# -- the command line ---------------------------------------------------------------------------

MLP_ARGS = [f"{models.__file__}:tiny_mlp", "--against", "torch", "--example-shape", "B=3,8"]


def test_cli_check_against_torch(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["check", *MLP_ARGS]) == 0
    out = capsys.readouterr().out
    assert "forward/gelu" in out and 'h = F.gelu(self.fc2(h), approximate="tanh")' in out
    assert "tolerances: f32 rtol=1.3e-06 atol=1e-05" in out
    assert out.splitlines()[-1].startswith("OK against PyTorch: 6 paired node(s) compared")


def test_cli_check_against_torch_names_a_wrong_rule_s_node(capsys: pytest.CaptureFixture[str], wrong_rule: Install) -> None:
    wrong_rule(Gelu, gelu_without_the_tanh_approximation)
    assert cli(["check", *MLP_ARGS, "--seed", "3"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2].startswith("MISMATCH against PyTorch") and "first divergence at forward/gelu" in lines[-2]
    assert lines[-1].endswith(f"models.py:{mlp_line('F.gelu')}:9 | h = F.gelu(self.fc2(h), approximate=\"tanh\")")


def test_cli_check_against_torch_takes_tolerances(capsys: pytest.CaptureFixture[str], wrong_rule: Install) -> None:
    wrong_rule(Silu, silu_shifted_by(5e-6))
    assert cli(["check", *MLP_ARGS]) == 0
    assert cli(["check", *MLP_ARGS, "--tol", "f32=0,0"]) == 1
    assert cli(["check", *MLP_ARGS, "--atol", "0"]) == 1  # rtol stays f32's default: 1.3e-6 * |silu| is below 5e-6
    assert "tolerances: f32 rtol=1.3e-06 atol=0 " in capsys.readouterr().out
    assert cli(["check", *MLP_ARGS, "--rtol", "0", "--atol", "1e-4"]) == 0
    assert "tolerances: f32 rtol=0 atol=0.0001 " in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{models}:tiny_mlp", "--against", "torch"], "give one --example-shape per input"),
        (["{models}:tiny_mlp", "--example-shape", "B=3,8"], "--example-shape is for --against torch"),
        (["{models}:tiny_mlp"], "is checked with --against torch --example-shape"),
        (["{models}:tiny_mlp", "--against", "torch", "--example-shape", "B=3,8", "--dim", "B=2"], "--dim: not with --against torch"),
        (["{models}:tiny_mlp", "--against", "torch", "--example-shape", "B=3,8", "--tol", "f32"], "--tol expects DTYPE=RTOL,ATOL"),
        (["{models}:no_such", "--against", "torch", "--example-shape", "3,8"], "has no factory no_such"),
        (["nowhere.py:f", "--against", "torch", "--example-shape", "3,8"], "nowhere.py: no such file"),
        (["{models}:tiny_mlp", "--against", "torch", "--example-shape", "3,x"], "is not a size"),
    ],
)
def test_cli_check_against_torch_refuses_a_wrong_command_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["check", *(a.replace("{models}", models.__file__) for a in argv)]) == 2
    assert message in capsys.readouterr().err


def test_cli_check_against_torch_reports_a_model_that_does_not_import(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["check", f"{models.__file__}:tiny_mlp", "--against", "torch", "--example-shape", "3,9"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tfexec check: TorchImportError:") and len(err.strip().splitlines()) == 1


# -- docs/against-torch.md ----------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "against-torch.md").read_text(encoding="utf-8")


@pytest.mark.values
def test_the_doc_s_python_runs_as_written_and_prints_what_it_shows(tmp_path: Path) -> None:
    script = tmp_path / "docs.py"
    script.write_text("\n".join(re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)), encoding="utf-8")
    done = subprocess.run([sys.executable, "-W", "ignore", str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    (shown,) = re.findall(r"```text\n(.*?)```", DOC, re.DOTALL)
    printed = done.stdout.replace(str(script), "/path/to/docs.py")
    # The page shows what its example prints: the words exactly, the digits within f32's
    # tolerance (they are this machine's gelu kernel's; another CPU prints other last digits).
    mismatch = text_mismatch(shown.strip(), printed, within=True)
    assert mismatch is None, f"{mismatch}\nprinted:\n{printed}"


def test_the_doc_s_command_runs_and_its_tolerances_are_the_code_s(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (command,) = [line for line in re.findall(r"```bash\n(.*?)```", DOC, re.DOTALL)[0].splitlines() if line.strip()]
    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)
    assert argv[:2] == ["tfexec", "check"] and cli(argv[1:]) == 0
    assert "OK against PyTorch" in capsys.readouterr().out
    stated = {m[0]: (float(m[1]), float(m[2])) for m in re.findall(r"\| `(\w+)` \| ([\d.e-]+) \| ([\d.e-]+) \|", DOC)}
    assert stated == {d.short: (t.rtol, t.atol) for d, t in DEFAULT_TOLERANCES.items()}
    assert "| integers and `b1` | exact | exact |" in DOC


def test_the_readme_links_the_doc_from_the_compiler_engineers_bullet() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    bullet = readme[readme.index("* **Compiler engineers**") : readme.index("* **Spec reviewers**")]
    assert "--against torch" in bullet and "(docs/against-torch.md)" in bullet


def _half_written(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    k = x.new_empty(4)
    k[:2] = x
    return k.sum() + 1, k[:2] * 2


def test_values_from_empty_memory_are_listed_not_compared() -> None:
    # PyTorch's new_empty holds whatever memory held (tfexec's holds zeros): the nodes that
    # read unwritten elements are listed with the reason; the written window is compared.
    report = check_against_torch(_half_written, (torch.randn(2),))
    assert report.ok, report
    compared = {row.key for row in report.comparison.rows}
    assert compared == {"forward/slice_4", "forward/mul"}
    why = {u.name: u.why for u in report.unpaired if u.side == "fx"}
    for name in ("new_empty", "slice_scatter", "sum_1", "add"):
        assert "not defined" in why[name] and "uninitialised memory" in why[name], why
    assert "only 2 of 4" in why["slice_scatter"]


def test_an_empty_fully_written_is_compared_again() -> None:
    def whole(x: torch.Tensor) -> torch.Tensor:
        k = x.new_empty(2, 5)
        k[:, :3] = x
        k[:, 3:] = x[:, :2] * 2
        return k.exp()

    report = check_against_torch(whole, (torch.randn(2, 3),))
    assert report.ok, report
    assert "forward/exp" in {row.key for row in report.comparison.rows}
    assert "not defined" in {u.name: u.why for u in report.unpaired}["new_empty"]
