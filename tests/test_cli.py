"""The tfexec command: each subcommand, the exit-status rule (0 ok, 1 the program failed or the
routes disagree, 2 the command line is wrong), one-line errors and no traceback for any input,
explicit dims, and the wording a newcomer meets (issue #18: every command as the issue wrote it)."""

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tfexec.cli import EXIT_STATUS, SUBCOMMANDS, build_parser, main
from tfexec.loading import write_tensors

ROOT = Path(__file__).resolve().parent.parent
MLP = str(ROOT / "examples" / "mlp.tf.py")
TILED = str(ROOT / "examples" / "tiled_matmul.tf.py")
FLASH = str(ROOT / "examples" / "flash_attention.tf.py")
LLAMA = str(ROOT / "examples" / "llama_block")
MODELS = str(ROOT / "tests" / "frontends" / "models.py")


def _program(tmp_path: Path, text: str, name: str = "prog.tf.py") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def _one_clean_line(err: str) -> None:
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def _subprocess(*argv: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TORCH_LOGS"}
    return subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "tfexec", *argv], stdout=stdout, stderr=subprocess.PIPE,
        text=True, timeout=300, cwd=ROOT, env=env,
    )


# -- the subcommands ------------------------------------------------------------------------------


def test_run_prints_the_dims_used_and_the_outputs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", MLP, "--dim", "B=2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dims: B=2\n") and "output: f32[2, 64]" in out


def test_run_with_inputs_file_and_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.safetensors"
    x, w1, w2 = torch.randn(3, 64), torch.randn(64, 256), torch.randn(256, 64)
    write_tensors({"x": x, "w1": w1, "w2": w2}, inputs)
    out = tmp_path / "out.safetensors"
    assert main(["run", MLP, "--inputs", str(inputs), "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith("dims: B=3\nwrote 1 tensor(s)")
    from safetensors import safe_open

    with safe_open(str(out), framework="pt") as f:
        got = f.get_tensor("output")
    assert torch.allclose(got, torch.nn.functional.silu(x @ w1) @ w2, rtol=1e-5, atol=1e-5)


def test_check_prints_the_table_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", TILED, "--dim", "K=64", "--loops", "expand"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dims: K=64\n") and "tiled_matmul/acc[1]/pa" in out and "OK:" in out


def test_print_is_the_canonical_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["print", TILED]) == 0
    assert "for k, acc in grid(K // 32, acc0):" in capsys.readouterr().out


def test_print_takes_a_module_directory_as_run_check_and_graph_do(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["print", LLAMA]) == 0
    out = capsys.readouterr().out
    assert "@entry\ndef block(x: f32[S, 64]) -> f32[S, 64]:" in out and "const('attn.wq')" in out


def test_print_of_a_relative_module_directory(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["print", "examples/llama_block"]) == 0
    assert "def block" in capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["mermaid", "dot"])
def test_graph_draws_loop_bodies_as_subgraphs(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", TILED, "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert ("subgraph" in out) and ("flowchart TD" in out if fmt == "mermaid" else "digraph" in out)


def test_dump_and_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b, c = (str(tmp_path / f"{n}.safetensors") for n in "abc")
    assert main(["dump", MLP, "--dim", "B=2", "--out", a]) == 0
    assert capsys.readouterr().out.startswith("dims: B=2\nwrote ")
    assert main(["dump", MLP, "--dim", "B=2", "--out", b]) == 0
    assert main(["dump", MLP, "--dim", "B=2", "--seed", "1", "--out", c]) == 0
    assert main(["diff", a, b]) == 0
    capsys.readouterr()
    assert main(["diff", a, c]) == 1
    assert "first divergence at mlp/h" in capsys.readouterr().out


# -- honest verdicts ------------------------------------------------------------------------------


SLICE_PAST = "def f(x: f32[4]) -> f32[2]:\n    return slice(x, (3,), sizes=(2,))\n"
MISSING_WEIGHT = "w: f32[4] = const()\n\n@entry\ndef f(x: f32[4]) -> f32[4]:\n    return add(x, w)\n"
CALLEE_DIM = (
    "def make(x: f32[4]) -> f32[M]:\n    return full(shape=(M,), value=1.0, dtype=f32)\n\n"
    "@entry\ndef f(x: f32[4]) -> f32[M]:\n    return make(x)\n"
)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (SLICE_PAST, "runs past axis 0 of length 4"),
        (MISSING_WEIGHT, "constant w is missing from the reading"),
        (CALLEE_DIM, "dim M is not bound"),
    ],
    ids=["slice-past-its-axis", "missing-weight", "unbound-dim-in-a-callee"],
)
def test_check_exits_1_when_both_routes_fail_and_says_they_agree(
    text: str, error: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["check", _program(tmp_path, text)] + (["--dim", "M=2"] if "M" in text else [])
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "FAILED: the program fails, the same way on both routes (the routes agree on the error)" in captured.out
    assert "OK" not in captured.out and error in captured.out and error in captured.err


WRONG_SHAPE = "def layer(x: f32[B, 64], w: f32[64, 32]) -> f32[B, 64]:\n    h = matmul(x, w)\n    return silu(h)\n"
WRONG_DTYPE = "def layer(x: f32[B, 64], w: f32[64, 32]) -> i32[B, 32]:\n    h = matmul(x, w)\n    return silu(h)\n"


@pytest.mark.parametrize("command", ["run", "dump", "check"])
@pytest.mark.parametrize(("text", "declared"), [(WRONG_SHAPE, "f32[B, 64]"), (WRONG_DTYPE, "i32[B, 32]")], ids=["shape", "dtype"])
def test_a_wrong_declared_return_type_is_a_type_error_before_anything_runs(
    command: str, text: str, declared: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--out", str(tmp_path / "d.safetensors")] if command == "dump" else []
    assert main([command, _program(tmp_path, text), "--dim", "B=2", *extra]) == 1
    captured = capsys.readouterr()
    assert f"TypeInferenceError: {tmp_path / 'prog.tf.py'}:1:1 def layer: declared return type {declared}, body has type f32[B, 32]" in captured.err
    assert "MISMATCH" not in captured.out and "output" not in captured.out and "dims:" not in captured.out
    _one_clean_line(captured.err)
    assert not (tmp_path / "d.safetensors").exists()


# -- dims -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([FLASH], "flash uses dim(s) S, T and random inputs need a size for every dim: give --dim S=SIZE --dim T=SIZE"),
        ([FLASH, "--dim", "S=8"], "give --dim T=SIZE"),
        ([LLAMA], "block uses dim(s) S"),
        ([MLP, "--dim", "Q=3"], "--dim Q=3: mlp uses no dim Q (its dims are B)"),
        ([MLP, "--dim", "B=2", "--dim", "Q=3"], "mlp uses no dim Q"),
        ([TILED, "--dim", "K=64", "--dim", "K=32"], "--dim K is given twice, as 64 and 32"),
        ([MLP, "--dim", "B=-1"], "--dim B=-1: a size is a whole number, 0 or more"),
        ([MLP, "--dim", "B"], "--dim expects NAME=SIZE"),
        ([MLP, "--dim", "B=two"], "--dim expects NAME=SIZE"),
        ([MLP, "--dim", "B=1000000000000"], "cannot make a random input x: f32[B, 64] with B=1000000000000: "),
        ([MLP, "--dim", "B=99999999999999999999999"], "cannot make a random input x: f32[B, 64]"),
        ([MLP, "--dim", "B=2", "--out", "/no/such/dir/out.safetensors"], "--out /no/such/dir/out.safetensors: no such directory"),
    ],
)
def test_every_dim_needs_a_size_and_unknown_dims_are_refused(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    _one_clean_line(err)


def test_flash_attention_runs_its_loop_with_the_dims_given(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", FLASH, "--dim", "S=4", "--dim", "T=32"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dims: S=4, T=32\n") and "nan" not in out


def test_a_dim_used_only_in_the_body_is_bound_with_dim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _program(tmp_path, "def f(x: f32[4]) -> f32[N, 4]:\n    z = full(shape=(N, 4), value=1.0, dtype=f32)\n    return add(z, x)\n")
    assert main(["run", path]) == 2
    assert "f uses dim(s) N" in capsys.readouterr().err
    assert main(["run", path, "--dim", "N=3"]) == 0
    assert "dims: N=3\noutput: f32[3, 4]" in capsys.readouterr().out
    assert main(["check", path, "--dim", "N=3"]) == 0
    out = capsys.readouterr().out
    assert "f/z" in out and "OK: 2 node(s) compared, 0 mismatch(es)" in out
    dump = str(tmp_path / "d.safetensors")
    assert main(["dump", path, "--dim", "N=3", "--out", dump]) == 0
    from safetensors import safe_open

    with safe_open(dump, framework="pt") as f:
        assert sorted(f.keys()) == ["f/%2", "f/z"]  # the extra dim parameter adds no key


def test_a_body_only_dim_of_a_saved_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import tfexec

    module = tfexec.parse(
        "w: f32[H] = const()\n\n@entry\ndef f(x: f32[3]) -> f32[H]:\n    z = full(shape=(H,), value=1.0, dtype=f32)\n"
        "    return add(z, w)\n", filename="c.tf.py",
    )
    tfexec.save_module(module, {"w": torch.ones(3)}, tmp_path / "mod")
    assert main(["run", str(tmp_path / "mod"), "--dim", "H=3"]) == 0
    assert "tensor([2., 2., 2.])" in capsys.readouterr().out
    assert main(["check", str(tmp_path / "mod"), "--dim", "H=3"]) == 0


def test_a_dim_only_inside_a_dim_expression_needs_dim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _program(tmp_path, "def f(x: f32[B * 2]) -> f32[B * 2]:\n    return neg(x)\n")
    assert main(["run", path, "--dim", "B=3"]) == 0
    assert "output: f32[6]" in capsys.readouterr().out
    inputs = tmp_path / "in.safetensors"
    write_tensors({"x": torch.ones(6)}, inputs)
    assert main(["run", path, "--inputs", str(inputs)]) == 2
    assert "f uses dim(s) B and no input binds them: give --dim B=SIZE" in capsys.readouterr().err
    assert main(["run", path, "--inputs", str(inputs), "--dim", "B=3"]) == 0
    assert main(["run", path, "--inputs", str(inputs), "--dim", "B=2"]) == 1
    assert "axis 0 must have size B * 2 = 4, found 6" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--dim", "B=4"], "--dim B=4 disagrees with --inputs: x axis 0 has size 3"),
        (["--random"], "--inputs and --random are two sources of inputs: give one"),
        (["--seed", "1"], "--seed is the seed of random inputs; it does nothing with --inputs"),
        (["--dim", "Q=1"], "mlp uses no dim Q"),
    ],
)
def test_inputs_conflicting_with_dim_random_or_seed_are_refused(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = tmp_path / "in.safetensors"
    write_tensors({"x": torch.randn(3, 64), "w1": torch.randn(64, 256), "w2": torch.randn(256, 64)}, inputs)
    assert main(["run", MLP, "--inputs", str(inputs), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err
    _one_clean_line(err)
    assert main(["run", MLP, "--inputs", str(inputs), "--dim", "B=3"]) == 0  # agreeing is fine


def test_an_input_of_the_wrong_rank_is_refused_by_the_run_not_called_a_missing_dim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = tmp_path / "in.safetensors"
    write_tensors({"x": torch.randn(64), "w1": torch.randn(64, 256), "w2": torch.randn(256, 64)}, inputs)
    assert main(["run", MLP, "--inputs", str(inputs)]) == 2  # the inputs file is wrong: the command line's mistake
    err = capsys.readouterr().err
    assert f"{inputs}: parameter x is f32[B, 64]: expected rank 2, found rank 1 (shape [64])" in err and "--dim" not in err


def test_inputs_of_another_dtype_are_cast_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.safetensors"
    write_tensors({"x": torch.randn(3, 64, dtype=torch.float64), "w1": torch.randn(64, 256), "w2": torch.randn(256, 64)}, inputs)
    assert main(["run", MLP, "--inputs", str(inputs)]) == 0
    captured = capsys.readouterr()
    assert f"tfexec run: note: input x is f64 in {inputs}; it is cast to f32 as declared" in captured.err
    assert "output: f32[3, 64]" in captured.out
    write_tensors({"x": torch.randn(3, 64), "w1": torch.randn(64, 256), "w2": torch.randn(256, 64)}, inputs)
    assert main(["run", MLP, "--inputs", str(inputs)]) == 0
    assert capsys.readouterr().err == ""


def test_an_inputs_file_written_as_the_readme_says_works_without_numpy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "from tfexec.loading import write_tensors" in readme and "--inputs in.safetensors" in readme
    script = tmp_path / "write_inputs.py"
    script.write_text(
        "import sys\nsys.modules['numpy'] = None  # as if numpy were not installed\n"
        "import torch\nfrom tfexec.loading import write_tensors\n"
        "write_tensors({'x': torch.randn(3, 64), 'w1': torch.randn(64, 256), 'w2': torch.randn(256, 64)}, 'in.safetensors')\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, "-W", "ignore", str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert main(["run", MLP, "--inputs", str(tmp_path / "in.safetensors")]) == 0
    assert capsys.readouterr().out.startswith("dims: B=3\n")


# -- usage errors, one line each, exit 2 ----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "no/such/file.tf.py"], "no such file or directory"),
        (["run", MLP, "--function", "nope"], "no function 'nope' (functions: mlp)"),
        (["run", LLAMA, "--function", "nope", "--dim", "S=2"], "no function 'nope' (functions: block, heads, rope)"),
        (["print", "missing.tf.py"], "no such file or directory"),
        (["diff", "missing-a.safetensors", "missing-b.safetensors"], "cannot read dump"),
        (["check", FLASH, "--dim", "S=8", "--dim", "T=64", "--function", "frobnicate"], "no function 'frobnicate'"),
    ],
)
def test_bad_usage_is_one_line_on_stderr(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err
    _one_clean_line(err)


@pytest.mark.parametrize("text", ["", "# just a comment\n", '"""A docstring only."""\n'], ids=["empty", "comment", "docstring"])
@pytest.mark.parametrize("command", ["run", "check", "dump", "graph"])
def test_a_file_without_functions_says_so(command: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = ["--out", str(tmp_path / "d.safetensors")] if command == "dump" else []
    assert main([command, _program(tmp_path, text), *extra]) == 2
    err = capsys.readouterr().err
    assert "defines no function; a program is a `def name(x: f32[N]) -> f32[N]: ... return ...` (see docs/text-form.md)" in err
    assert "several functions" not in err and "()" not in err.split("def name")[0]
    _one_clean_line(err)


def test_several_functions_and_no_entry_lists_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _program(tmp_path, "def a(x: f32[2]) -> f32[2]:\n    return x\n\ndef b(x: f32[2]) -> f32[2]:\n    return neg(x)\n")
    assert main(["run", path]) == 2
    assert "2 functions and no @entry; pick one with --function (a, b)" in capsys.readouterr().err
    assert main(["run", path, "--function", "b"]) == 0


@pytest.mark.parametrize("command", ["run", "check", "print", "graph"])
def test_parse_errors_are_usage_errors_with_their_location(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, _program(tmp_path, "import os\n", "bad.tf.py")]) == 2
    err = capsys.readouterr().err
    assert f"tfexec {command}: ParseError: " in err and "bad.tf.py:1:1" in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["run", "check", "print", "graph"])
def test_a_directory_that_is_not_a_saved_module_is_a_usage_error(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main([command, str(tmp_path / "empty")]) == 2
    assert "ModuleLoadError" in capsys.readouterr().err
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_text("{not json")
    assert main([command, str(tmp_path / "broken")]) == 2
    err = capsys.readouterr().err
    assert "ModuleLoadError" in err and "not JSON" in err
    _one_clean_line(err)


def test_wrong_input_names_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = tmp_path / "in.safetensors"
    write_tensors({"x": torch.randn(2, 64), "weights": torch.randn(64, 256)}, inputs)
    assert main(["run", MLP, "--inputs", str(inputs)]) == 2
    assert "missing: w1, w2; unexpected: weights" in capsys.readouterr().err


# -- program failures, exit 1; no traceback for any input ------------------------------------------


def test_evaluation_failure_exits_1_and_debug_shows_the_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _program(tmp_path, SLICE_PAST, "bad.tf.py")
    assert main(["run", bad]) == 1
    err = capsys.readouterr().err
    assert "runs past axis 0 of length 4" in err
    _one_clean_line(err)
    assert main(["--debug", "run", bad]) == 1
    assert "Traceback" in capsys.readouterr().err
    assert main(["run", bad, "--debug"]) == 1  # a global flag after the subcommand
    assert "Traceback" in capsys.readouterr().err


def test_an_internal_error_is_one_line_too(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import tfexec

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("something tfexec did not expect")

    def broken_over_lines(*args: object, **kwargs: object) -> object:
        raise RuntimeError("first line\nframe #0: c10::Error\nframe #1: ...")

    monkeypatch.setattr(tfexec, "evaluate", broken_over_lines)
    assert main(["run", MLP, "--dim", "B=2"]) == 1
    err = capsys.readouterr().err
    assert err.strip().endswith("RuntimeError: first line")
    _one_clean_line(err)
    monkeypatch.setattr(tfexec, "evaluate", broken)
    assert main(["run", MLP, "--dim", "B=2"]) == 1
    err = capsys.readouterr().err
    assert "internal error (a bug in tfexec; --debug shows the traceback): RuntimeError: something tfexec did not expect" in err
    _one_clean_line(err)
    assert main(["run", MLP, "--dim", "B=2", "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_a_closed_stdout_is_no_traceback_and_keeps_the_verdict(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # `| head -1` that has already exited: every write fails with EPIPE
    try:
        ok = _subprocess("run", "examples/mlp.tf.py", "--dim", "B=64", stdout=write_end)
        failing = _subprocess("check", _program(tmp_path, SLICE_PAST), stdout=write_end)
    finally:
        os.close(write_end)
    assert ok.returncode == 0 and ok.stderr == "", ok.stderr
    assert failing.returncode == 1 and "BrokenPipe" not in failing.stderr and "Traceback" not in failing.stderr
    piped = subprocess.run(
        f"{sys.executable} -W ignore -m tfexec ops | head -1", shell=True, capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert piped.stdout.count("\n") == 1 and piped.stderr == ""


def test_torch_logs_are_quiet_unless_asked(tmp_path: Path) -> None:
    done = _subprocess("import", f"{MODELS}:tiny_mlp", "--example-shape", "2,31", "--out", str(tmp_path / "o"))
    assert done.returncode == 1
    assert done.stderr.startswith("tfexec import: TorchImportError: torch.export could not export the program")
    _one_clean_line(done.stderr)


# -- the command line itself ------------------------------------------------------------------------


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_subcommand_and_flag_has_help_text() -> None:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helped = {c.dest for c in action._choices_actions}
    subs = _subparsers()
    assert set(subs) == helped == {"run", "check", "validate", "dump", "diff", "reduce", "fuzz", "mesh", "print", "graph", "explain", "import", "docs", "ops"}
    assert len(SUBCOMMANDS) == len(subs)
    for name, sub in [("tfexec", parser), *subs.items()]:
        for a in sub._actions:
            assert a.help and a.help is not argparse.SUPPRESS, f"{name} {a.option_strings or a.dest} has no help"


@pytest.mark.parametrize("command", ["run", "check", "dump", "diff", "print", "graph", "import", "docs", "ops"])
def test_help_states_the_exit_status_rule(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert " ".join(EXIT_STATUS.split()) in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("flag", ["--debug", "--no-progress"])
def test_global_flags_work_before_and_after_the_subcommand(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([flag, "run", MLP, "--dim", "B=2"]) == 0
    assert main(["run", MLP, "--dim", "B=2", flag]) == 0
    assert main(["run", flag, MLP, "--dim", "B=2"]) == 0
    args = build_parser().parse_args(["run", MLP, flag])
    assert getattr(args, flag.lstrip("-").replace("-", "_")) is True
    args = build_parser().parse_args(["run", MLP])
    assert args.debug is False and args.no_progress is False


def test_module_entry_point_and_help() -> None:
    done = _subprocess("--help")
    assert done.returncode == 0 and "run" in done.stdout and "check" in done.stdout
    assert "Exit status: 0 ok; 1 the program failed" in " ".join(done.stdout.split())
    usage = _subprocess("frobnicate")
    assert usage.returncode == 2
