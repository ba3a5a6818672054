"""``tfexec reduce FILE --check "COMMAND {program} {inputs}" [--fail-regex R]``.

The default-suite checks are small Python scripts that never import torch (a few
milliseconds a run); the slow test runs a real backend — tfexec with a wrong softmax — as
the check command.
"""

import sys
from pathlib import Path

import pytest

from tfexec.cli import main
from tfexec.reduce import load_repro

ROOT = Path(__file__).resolve().parents[2]
LLAMA = str(ROOT / "examples" / "llama_block")

PICKY = '''
import sys
text = open(sys.argv[1]).read()
assert sys.argv[2].endswith("inputs.safetensors")
if [l for l in text.splitlines() if l.strip().startswith("return (")]:
    print("backend error: programs with several outputs are not supported")
    sys.exit(1)
if "silu(" in text:
    print("backend error: silu kernel crashed", file=sys.stderr)
    sys.exit(3)
'''


@pytest.fixture()
def picky(tmp_path: Path) -> str:
    script = tmp_path / "picky.py"
    script.write_text(PICKY)
    return f"{sys.executable} {script} {{program}} {{inputs}}"


def test_reduce_writes_a_repro_that_fails_the_same_way(
    tmp_path: Path, picky: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main(["reduce", LLAMA, "--dim", "S=4", "--check", picky, "--fail-regex", "silu kernel", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert (out / "program.tf.py").read_text() == "def block(v51: f32[S, 172]):\n    gate = silu(v51)\n    return gate\n"
    assert "kept 1 of 57 node(s)" in captured.out and "(1-minimal)" in captured.out
    assert "  v51: value of " in captured.out and "matmul(hn, mlp_w_gate)" in captured.out
    assert f"reproduced: " in captured.out and "-> exit 3, output matches 'silu kernel'" in captured.out
    fn, inputs = load_repro(out)
    assert [p.name for p in fn.params] == ["v51"] and tuple(inputs[0].shape) == (4, 172)
    # progress went to stderr as plain lines (not a terminal)
    assert "reduce: start, 0 check(s): 57 of 57 node(s) left" in captured.err and "reduce: done" in captured.err


def test_without_a_fail_regex_the_reduction_drifts_to_another_error(
    tmp_path: Path, picky: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["--no-progress", "reduce", LLAMA, "--dim", "S=4", "--check", picky, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    text = (out / "program.tf.py").read_text()
    assert "silu(" not in text and "return (" in text
    assert captured.err == ""  # --no-progress


def test_a_check_that_passes_on_the_original_is_a_failure_with_its_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check = f"{sys.executable} -c \"print('all good')\" {{program}}"
    assert main(["--no-progress", "reduce", LLAMA, "--dim", "S=4", "--check", check, "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "  | all good" in err and "the check does not fail on the original program (exit 0): nothing to reduce" in err
    assert "Traceback" not in err


def test_a_failure_of_another_kind_on_the_original_is_named(tmp_path: Path, picky: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--no-progress", "reduce", LLAMA, "--dim", "S=4", "--check", picky, "--fail-regex", "segfault",
                 "--out", str(tmp_path / "o")])
    assert code == 1
    assert "exit 3, but the output does not match --fail-regex 'segfault'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("check", "extra", "message"),
    [
        ("true", [], "never mentions {program}"),
        ("", [], "--check needs a command"),
        ("'unbalanced {program}", [], "No closing quotation"),
        ("no-such-command-tfexec {program}", [], "command 'no-such-command-tfexec' not found"),
        ("cat {program}", ["--fail-regex", "("], "is not a valid regular expression"),
        ("cat {program}", ["--max-checks", "0"], "--max-checks must be at least 1"),
        ("cat {program}", ["--timeout", "0"], "--timeout must be a positive number"),
    ],
)
def test_bad_arguments_are_one_line_usage_errors(
    tmp_path: Path, check: str, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--no-progress", "reduce", LLAMA, "--dim", "S=4", "--check", check, "--out", str(tmp_path / "o"), *extra]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_budget_stops_early_and_says_so(tmp_path: Path, picky: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--no-progress", "reduce", LLAMA, "--dim", "S=4", "--check", picky, "--fail-regex", "silu",
            "--max-checks", "2", "--out", str(tmp_path / "o")]
    assert main(args) == 0
    assert "stopped at the check budget, not 1-minimal" in capsys.readouterr().out


WRONG_SOFTMAX = '''
import sys, torch, tfexec
from safetensors.torch import load_file
from tfexec.ir.ops.norm import Softmax
from tfexec.reduce import load_repro

program, inputs = sys.argv[1], sys.argv[2]
module = tfexec.parse(open(program).read(), filename=program)
fn = module.functions[module.entry or next(iter(module.functions))]
tensors = load_file(inputs)
xs = [tensors[p.name] for p in fn.params]
expected = tfexec.evaluate(fn, *xs)
original = tfexec.eval_registry.lookup(Softmax)

@tfexec.register_eval(Softmax, override=True)
def wrong(ctx):
    (x,) = ctx.args
    return tfexec.TensorValue(torch.softmax(x.data, dim=ctx.op.axis - 1), x.type)

got = tfexec.evaluate(fn, *xs)
same = all(torch.allclose(a, b, equal_nan=True) for a, b in zip(
    expected if isinstance(expected, tuple) else (expected,), got if isinstance(got, tuple) else (got,)))
if not same:
    print("MISMATCH: the backend disagrees with tfexec")
    sys.exit(1)
'''


@pytest.mark.slow
def test_a_real_backend_as_the_check_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "wrong_softmax.py"
    script.write_text(WRONG_SOFTMAX)
    out = tmp_path / "out"
    check = f"{sys.executable} -W ignore {script} {{program}} {{inputs}}"
    assert main(["--no-progress", "reduce", LLAMA, "--dim", "S=8", "--check", check, "--fail-regex", "MISMATCH",
                 "--out", str(out)]) == 0
    assert (out / "program.tf.py").read_text() == "def block(masked: f32[4, S, S]):\n    probs = softmax(masked)\n    return probs\n"
    assert "reproduced:" in capsys.readouterr().out
