"""The exit rule (README, issue #29 C): 0 ok; 1 the program or a check failed; 2 the command
line is wrong — here a saved module whose module.tf.py does not parse, an inputs file whose
tensor has the wrong rank or axis size, and --against torch with a wrong number of
--example-shape. Each through the CLI, one line on stderr naming what to fix."""

import shutil
from pathlib import Path

import pytest
import torch

from tfexec.cli import main
from tfexec.loading import write_tensors

ROOT = Path(__file__).resolve().parent.parent
MLP = str(ROOT / "examples" / "mlp.tf.py")
W1, W2 = torch.zeros(64, 256), torch.zeros(256, 64)


def _exit_and_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 or "ParseError" in err, err  # a ParseError adds its caret lines
    assert "internal error" not in err and "Traceback" not in err
    return code, err


@pytest.mark.parametrize("command", ["run", "check", "dump", "print", "validate"])
def test_a_saved_module_whose_text_does_not_parse_is_a_usage_error_like_a_tf_py(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "block"
    shutil.copytree(ROOT / "examples" / "llama_block", saved)
    text = (saved / "module.tf.py").read_text(encoding="utf-8")
    (saved / "module.tf.py").write_text(text.replace("def block(", "def block(((", 1), encoding="utf-8")
    broken = tmp_path / "broken.tf.py"
    broken.write_text("def f(x: f32[2]) -> f32[2]\n    return x\n", encoding="utf-8")
    extra = ["--out", str(tmp_path / "d.safetensors")] if command == "dump" else []
    for target in (saved, broken):
        capsys.readouterr()
        assert main([command, str(target), *extra]) == 2, target
        err = capsys.readouterr().err
        assert f"tfexec {command}: ParseError: " in err and "internal error" not in err


@pytest.mark.parametrize(
    ("tensors", "message"),
    [
        ({"x": torch.zeros(3, 16), "w1": W1, "w2": W2}, "parameter x is f32[B, 64]: axis 1 must have size 64, found 16 (shape [3, 16])"),
        ({"x": torch.zeros(64), "w1": W1, "w2": W2}, "parameter x is f32[B, 64]: expected rank 2, found rank 1 (shape [64])"),
        ({"x": torch.zeros(3, 64), "w1": torch.zeros(64, 255), "w2": W2},
         "parameter w1 is f32[64, 256]: axis 1 must have size 256, found 255 (shape [64, 255])"),
        ({"x": torch.zeros(3, 64), "w1": W1, "w2": torch.zeros(256, 64, 1)},
         "parameter w2 is f32[256, 64]: expected rank 2, found rank 3 (shape [256, 64, 1])"),
    ],
)
@pytest.mark.parametrize("command", ["run", "check"])
def test_an_inputs_file_of_the_wrong_shape_is_a_usage_error_naming_parameter_axis_and_sizes(
    command: str, tensors: dict[str, torch.Tensor], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = tmp_path / "in.safetensors"
    write_tensors(tensors, inputs)
    code, err = _exit_and_line([command, MLP, "--inputs", str(inputs)], capsys)
    assert code == 2 and err == f"tfexec {command}: {inputs}: {message}\n", err


def test_one_dim_at_two_sizes_in_an_inputs_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "add.tf.py"
    program.write_text("def f(x: f32[B, 4], y: f32[B, 4]) -> f32[B, 4]:\n    return add(x, y)\n", encoding="utf-8")
    inputs = tmp_path / "in.safetensors"
    write_tensors({"x": torch.zeros(3, 4), "y": torch.zeros(5, 4)}, inputs)
    code, err = _exit_and_line(["run", str(program), "--inputs", str(inputs)], capsys)
    assert code == 2 and "parameter y is f32[B, 4]: axis 0 is dim B, of size 3 at x axis 0, found 5 (shape [5, 4])" in err
    write_tensors({"x": torch.zeros(3, 4), "y": torch.ones(3, 4)}, inputs)
    assert main(["run", str(program), "--inputs", str(inputs)]) == 0  # agreeing sizes run


MODEL = '''
import torch
from torch import nn


class Masked(nn.Module):
    def forward(self, x, mask, scale=1.0):
        return x.masked_fill(mask, 0.0) * scale


def masked():
    return Masked()


def plain(x, *rest):
    return x


def function():
    return plain
'''


@pytest.mark.parametrize(
    ("factory", "shapes", "message"),
    [
        ("masked", ["2,3"], "forward(x, mask, scale=1.0) takes 2 to 3 input(s), got 1 --example-shape"),
        ("masked", ["2,3"] * 4, "forward(x, mask, scale=1.0) takes 2 to 3 input(s), got 4 --example-shape"),
        ("masked", [], "forward(x, mask, scale=1.0) takes 2 to 3 input(s), got 0 --example-shape"),
        ("function", [], "plain(x, *rest) takes 1 or more input(s), got 0 --example-shape"),
    ],
)
@pytest.mark.parametrize("command", ["check", "import"])
def test_against_torch_with_the_wrong_number_of_example_shapes_names_the_model_s_inputs(
    command: str, factory: str, shapes: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "model.py"
    model.write_text(MODEL, encoding="utf-8")
    flags = [flag for shape in shapes for flag in ("--example-shape", shape)]
    more = ["--against", "torch"] if command == "check" else ["--out", str(tmp_path / "out")]
    code, err = _exit_and_line([command, f"{model}:{factory}", *more, *flags], capsys)
    assert code == 2 and f"{model}:{factory}: {message}; give one --example-shape per input, in order" in err, err
    assert "TypeError" not in err
