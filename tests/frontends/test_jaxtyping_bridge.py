"""The jaxtyping bridge (issue #29): forward's jaxtyping annotations name the import's dims
(one name one size, those axes dynamic, a fixed one static), conflicts and unreadable dim
strings are refused naming the places, nothing is evaluated, and an imported program's types
spelled back as jaxtyping annotations really check tensors under jaxtyped + beartype."""

from pathlib import Path

import pytest
import torch
from beartype import beartype
from jaxtyping import Float, Int, TypeCheckError, jaxtyped
from torch import Tensor
from torch.export import Dim

import tfexec
from tfexec.cli import main
from tfexec.frontends.torch import (
    AnnotationError, TorchImportError, check_against_torch, import_module, jaxtyping_annotations, jaxtyping_types,
)
from tfexec.frontends.torch._jaxtyping import jaxtyping_annotation
from tfexec.ir.dims import DimVar, dim_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.types import TensorType


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(64, 64)

    def forward(
        self, x: Float[Tensor, "batch seq d_model"], bias: Float[Tensor, "seq d_model"],
    ) -> Float[Tensor, "batch seq d_model"]:
        return torch.relu(self.proj(x) + bias)


def _block() -> Block:
    torch.manual_seed(0)
    return Block().eval()


def test_the_annotations_name_the_dims_and_the_fixed_one_is_static() -> None:
    imported = import_module(_block(), (torch.randn(2, 8, 64), torch.randn(8, 64)))
    x, bias = imported.entry.params
    assert str(x.type) == "f32[batch, seq, 64]" and str(bias.type) == "f32[seq, 64]"
    # dynamic: the same import runs at other sizes, equal to torch's own forward
    x2, b2 = torch.randn(3, 5, 64), torch.randn(5, 64)
    got = tfexec.evaluate(imported, x2, b2)
    assert isinstance(got, torch.Tensor)
    torch.testing.assert_close(got, _block()(x2, b2))


def test_check_against_torch_reads_them_too() -> None:
    report = check_against_torch(_block(), (torch.randn(3, 5, 64), torch.randn(5, 64)))
    assert report.ok


def test_one_name_at_two_sizes_is_refused_naming_both_places() -> None:
    with pytest.raises(AnnotationError, match=r"dim seq is 8 at x axis 1 .* but 4 at bias axis 0"):
        import_module(_block(), (torch.randn(2, 8, 64), torch.randn(4, 64)))


def _fn(annotation: object) -> object:
    def f(x: annotation) -> Tensor:  # type: ignore[valid-type]
        return x * 2
    return f


@pytest.mark.parametrize(("annotation", "shape", "says"), [
    (Float[Tensor, "n 4"], (3, 5), r"axis 1 is 4 in the annotation but 5 in the example"),
    (Float[Tensor, "n"], (3, 5), r"names 1 axis\(es\) but the example input has 2"),
    (Float[Tensor, "*batch 4"], (3, 4), r"'\*batch' stands for any number of axes"),
    (Float[Tensor, "... 4"], (3, 4), r"'\.\.\.' stands for any number of axes"),
    (Float[Tensor, "n n+1"], (3, 4), r"'n\+1' is not a plain dim name or size; .* never evaluates"),
    (Float[Tensor, "#n 4"], (3, 4), r"'#n' is not a plain dim name"),
    (Float[Tensor, "n 4"], (1, 4), r"dim n is 1 .* at least 2"),
    (Int[Tensor, "n 4"], (3, 4), r"does not admit the example input's dtype float32"),
])
def test_what_cannot_be_read_or_is_contradicted_is_refused(annotation: object, shape: tuple[int, ...], says: str) -> None:
    with pytest.raises(AnnotationError, match=says):
        import_module(_fn(annotation), (torch.randn(*shape),))


def test_a_dim_expression_is_never_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    evaluated: list[str] = []
    real_eval = builtins.eval

    def watching(source: object, *args: object) -> object:
        evaluated.append(str(source))
        return real_eval(source, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "eval", watching)
    for dims in ("n side_effect()", "n len(n)"):
        with pytest.raises(AnnotationError, match="never evaluates"):
            import_module(_fn(Float[Tensor, dims]), (torch.randn(3, 4),))
    assert not [s for s in evaluated if "side_effect" in s or "len(n)" in s]


def test_underscore_keeps_an_axis_static_and_integers_are_checked() -> None:
    imported = import_module(_fn(Float[Tensor, "n _ 4"]), (torch.randn(3, 6, 4),))
    assert str(imported.entry.params[0].type) == "f32[n, 6, 4]"


def test_explicit_dynamic_shapes_take_precedence() -> None:
    imported = import_module(_fn(Float[Tensor, "n 4"]), (torch.randn(3, 4),), {"x": {0: Dim("B")}})
    assert str(imported.entry.params[0].type) == "f32[B, 4]"


def test_the_users_own_dim_is_not_made_static_behind_their_back() -> None:
    with pytest.raises(TorchImportError, match="d_model"):
        import_module(_block(), (torch.randn(2, 8, 64), torch.randn(8, 64)),
                      {"x": {2: Dim("d_model")}, "bias": {1: Dim("d_model")}})


def test_unannotated_models_are_unchanged() -> None:
    def plain(x: Tensor) -> Tensor:
        return x + 1

    assert str(import_module(plain, (torch.randn(3, 4),)).entry.params[0].type) == "f32[3, 4]"


def test_the_spelled_annotations_check_real_tensors_with_jaxtyped_and_beartype() -> None:
    imported = import_module(_block(), (torch.randn(2, 8, 64), torch.randn(8, 64)))
    assert jaxtyping_annotations(imported) == {
        "x": "Float[Tensor, 'batch seq 64']", "bias": "Float[Tensor, 'seq 64']",
        "return": "Float[Tensor, 'batch seq 64']",
    }

    def wrapper(x: Tensor, bias: Tensor) -> Tensor:
        out = tfexec.evaluate(imported, x, bias)
        assert isinstance(out, Tensor)
        return out

    wrapper.__annotations__ = jaxtyping_types(imported)
    checked = jaxtyped(typechecker=beartype)(wrapper)
    assert checked(torch.randn(4, 3, 64), torch.randn(3, 64)).shape == (4, 3, 64)
    with pytest.raises(TypeCheckError):
        checked(torch.randn(4, 3, 64), torch.randn(5, 64))  # seq at two sizes
    with pytest.raises(TypeCheckError):
        checked(torch.randn(4, 3, 32), torch.randn(3, 32))  # 64 is fixed
    with pytest.raises(TypeCheckError):
        checked(torch.ones(4, 3, 64, dtype=torch.int64), torch.ones(3, 64, dtype=torch.int64))  # not Float


@pytest.mark.parametrize(("t", "spelled"), [
    (TensorType((DimVar("B"), 4), DType.int64), "Int[Tensor, 'B 4']"),
    (TensorType((dim_expr("mul", DimVar("N"), 2),), DType.bfloat16), "Float[Tensor, '_']"),
    (TensorType((), DType.bool), "Bool[Tensor, '']"),
    (TensorType((3,), DType.uint8), "UInt[Tensor, '3']"),
])
def test_the_spelling_of_each_kind(t: TensorType, spelled: str) -> None:
    assert jaxtyping_annotation(t) == spelled


MODEL = '''import torch
from jaxtyping import Float
from torch import Tensor


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(64, 64)

    def forward(self, x: Float[Tensor, "batch seq d_model"], bias: Float[Tensor, "seq d_model"]):
        return torch.relu(self.proj(x) + bias)


def make():
    return Block()
'''


def test_the_command_line_reads_them(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "block.py").write_text(MODEL)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "block.py:make", "--against", "torch", "--example-shape", "2,8,64", "--example-shape", "8,64"]) == 0
    assert "OK against PyTorch" in capsys.readouterr().out
    assert main(["import", "block.py:make", "--example-shape", "2,8,64", "--example-shape", "8,64", "--out", "m"]) == 0
    assert "forward(x: f32[batch, seq, 64], bias: f32[seq, 64])" in capsys.readouterr().out
    # Examples that contradict readable annotations are a command-line mistake (exit 2), on check and import.
    assert main(["check", "block.py:make", "--against", "torch", "--example-shape", "2,8,64", "--example-shape", "4,64"]) == 2
    err = capsys.readouterr().err
    assert "--example-shape: dim seq is 8 at x axis 1" in err and len(err.strip().splitlines()) == 1
    assert main(["import", "block.py:make", "--example-shape", "2,8,64", "--example-shape", "4,64", "--out", "m2"]) == 2
    assert "tfexec import: --example-shape: dim seq is 8 at x axis 1" in capsys.readouterr().err
    assert not (tmp_path / "m2").exists()


ANNOTATED_VARIADIC = MODEL.replace('"batch seq d_model"', '"*batch seq d_model"')


def test_an_annotation_tfexec_cannot_read_is_the_models_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "block.py").write_text(ANNOTATED_VARIADIC)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "block.py:make", "--against", "torch", "--example-shape", "2,8,64", "--example-shape", "8,64"]) == 1
    assert "AnnotationError: x: Float[Tensor, '*batch seq d_model']: '*batch' stands for any number of axes" in capsys.readouterr().err


FUTURE_MODEL = '''from __future__ import annotations

import torch
from jaxtyping import Float
from torch import Tensor

NOT_JAXTYPING = dict


def annotated(x: Float[Tensor, "n 4"]) -> Tensor:
    return x * 2


def lookalike(x: NOT_JAXTYPING[Tensor, "n 4"]) -> Tensor:
    return x * 2
'''


def test_string_annotations_are_parsed_never_evaluated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    path = tmp_path / "future_model.py"
    path.write_text(FUTURE_MODEL)
    spec = importlib.util.spec_from_file_location("future_model", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert isinstance(module.annotated.__annotations__["x"], str)
    assert str(import_module(module.annotated, (torch.randn(3, 4),)).entry.params[0].type) == "f32[n, 4]"
    # a name the module binds to something that is not a jaxtyping kind: the annotation is not read
    assert str(import_module(module.lookalike, (torch.randn(3, 4),)).entry.params[0].type) == "f32[3, 4]"
