"""torchrun as the launcher of a mesh run, on one machine, on loopback (127.0.0.1) only:
``torchrun --nnodes 1 --nproc-per-node 2 ... -m tfexec mesh MODULE_DIR`` and the Python entry
point ``evaluate_distributed`` (``torchrun_case.py``). Each launch costs seconds, so the
default suite runs one success (the command) and one failure (the entry point); the other
failures — a participant that exits, one killed by a signal, one that hangs — are slow.

Every failure is reported once, by rank 0, naming the participant and the node; no process
is left behind.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from mesh_cases import data

import tfexec
from tfexec import ConstTensor, EvalError, Function, IRModule, Mesh, ShardLayout, Split, Var, f32, load_module, ops, save_module
from tfexec.loading import write_tensors
from tfexec.mesh import evaluate_distributed

HERE = Path(__file__).resolve().parent
SECRET = "a-test-secret-" + os.urandom(8).hex()
TP = Mesh((2,), ("tp",))
pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to find processes")


def _torchrun(args: list[str], nproc: int = 2, cwd: Path | None = None, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """``torchrun --nnodes 1 --nproc-per-node N`` on loopback: the rendezvous, the store and gloo on 127.0.0.1."""
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
               TFEXEC_MESH_SECRET=SECRET)
    env.pop("TFEXEC_MESH_SECRET_FILE", None)
    command = [
        sys.executable, "-W", "ignore", "-m", "torch.distributed.run", "--nnodes", "1", "--nproc-per-node", str(nproc),
        "--rdzv-backend", "c10d", "--rdzv-endpoint", "127.0.0.1:0", "--local-addr", "127.0.0.1", "--monitor-interval", "0.1",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)


def _left_behind(marker: str) -> list[int]:
    """Pids of live processes whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _mlp(root: Path) -> Path:
    x = Var("x", f32[4, 8])
    w1 = ConstTensor("w1", f32[8, 16] @ ShardLayout(TP, (Split(1),)))
    w2 = ConstTensor("w2", f32[16, 8] @ ShardLayout(TP, (Split(0),)))
    body = ops.add(ops.matmul(ops.gelu(ops.matmul(x, w1)), w2), ConstTensor("b", f32[8]))
    module = IRModule({"mlp": Function("mlp", (x,), body)}, {"w1": w1.type, "w2": w2.type, "b": f32[8]}, entry="mlp")
    weights = {"w1": data(8, 16), "w2": data(16, 8, seed=1), "b": data(8, seed=2)}
    return save_module(module, weights, root / "mlp")


def test_the_mesh_command_under_torchrun_writes_the_logical_result_once(tmp_path: Path) -> None:
    saved = _mlp(tmp_path)
    x = data(4, 8, seed=3)
    write_tensors({"x": x}, tmp_path / "in.safetensors")
    out = tmp_path / "out.safetensors"
    done = _torchrun(["-m", "tfexec", "mesh", str(saved), "--mesh", "2", "--inputs", str(tmp_path / "in.safetensors"),
                      "--out", str(out)])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("wrote 1 tensor(s) to") == 1  # rank 0 alone writes and says so
    from safetensors.torch import load_file

    single = tfexec.evaluate(load_module(saved), x)
    assert isinstance(single, torch.Tensor)
    torch.testing.assert_close(load_file(out)["output"], single)
    assert _left_behind(str(saved)) == []


def _case(name: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run ``torchrun_case.py NAME``; its output, and the failing node as the case printed it."""
    done = _torchrun([str(HERE / "torchrun_case.py"), name])
    nodes = {line.split(": node ", 1)[1] for line in done.stdout.splitlines() if ": node " in line}
    assert len(nodes) == 1, done.stdout + done.stderr
    assert _left_behind(str(HERE / "torchrun_case.py")) == []  # no participant outlives the launch
    return done, nodes.pop()


def _the_one_error(done: subprocess.CompletedProcess[str]) -> str:
    """The run's error: reported by rank 0 and by no other rank, once."""
    output = done.stdout + done.stderr
    errors = [line for line in output.splitlines() if "EvalError: " in line]
    assert len(errors) == 1, output
    assert done.returncode != 0
    return errors[0]


def test_an_error_in_one_participant_is_reported_once_by_rank_0_under_torchrun() -> None:
    done, node = _case("fail")
    error = _the_one_error(done)
    assert error.startswith("rank 0: EvalError: " + node + ": on mesh participant rank 1 at coordinate (1,) of Mesh((2,), ('tp',)): ")
    assert error.endswith("ValueError: boom on rank 1")


def test_outside_a_launcher_evaluate_distributed_says_what_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    x = Var("x", f32[4] @ ShardLayout(TP, (Split(0),)))
    with pytest.raises(EvalError, match=r"needs the environment a torch.distributed launcher sets .*RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT.* are not set: start every participant with torchrun, or call evaluate_mesh"):
        evaluate_distributed(Function("f", (x,), ops.exp(x)), torch.zeros(4))


@pytest.mark.slow
def test_a_participant_that_exits_is_named_with_its_node_under_torchrun() -> None:
    done, node = _case("exit")
    error = _the_one_error(done)
    assert error.startswith(f"rank 0: EvalError: {node}: mesh participant rank 1 at coordinate (1,) of Mesh((2,), ('tp',)) died")
    assert error.endswith("in this op")


@pytest.mark.slow
def test_a_participant_killed_by_a_signal_is_named_with_its_node_under_torchrun() -> None:
    done, node = _case("kill")
    error = _the_one_error(done)
    assert error.startswith(f"rank 0: EvalError: {node}: mesh participant rank 1 at coordinate (1,) of Mesh((2,), ('tp',)) died")
    assert "exitcode  : -9" in done.stdout + done.stderr  # torchrun's own summary gives the signal


@pytest.mark.slow
@pytest.mark.parametrize("name, rank, other", [("hang", 1, 0), ("hang0", 0, 1)])
def test_a_hung_participant_is_named_as_stalled_under_torchrun(name: str, rank: int, other: int) -> None:
    done, node = _case(name)
    error = _the_one_error(done)
    assert f"{node}: mesh participant rank {rank} at coordinate ({rank},) of Mesh((2,), ('tp',)) made no progress in {node} for " in error
    assert f"while rank {other} at ({other},) (in " in error
    assert "timeout 10 s" in error


@pytest.mark.slow
@pytest.mark.parametrize("name, rank, other", [("stop", 1, 0), ("stop0", 0, 1)])
def test_a_participant_stopped_by_sigstop_is_named_once_under_torchrun(name: str, rank: int, other: int) -> None:
    """A frozen rank 0 cannot decide: rank 1 decides in its place and prints the one error.
    The stopped process cannot end by itself: the rank that decided kills it (same host),
    so nothing is left and torchrun need not wait for it."""
    done, node = _case(name)
    error = _the_one_error(done)
    assert f"{node}: mesh participant rank {rank} at coordinate ({rank},) of Mesh((2,), ('tp',)) stopped answering (no heartbeat" in error
    assert f"while rank {other} at ({other},) (in " in error


@pytest.mark.slow
def test_rank_0_killed_is_named_by_rank_1_under_torchrun() -> None:
    done, node = _case("kill0")
    error = _the_one_error(done)
    assert error.startswith(f"tfexec mesh: EvalError: {node}: mesh participant rank 0 at coordinate (0,) of Mesh((2,), ('tp',)) died")


@pytest.mark.slow
def test_a_forged_store_record_is_refused_and_named_under_torchrun() -> None:
    """A store client without the secret writes rank 1's failure report: the run is stopped
    with the refusal, naming the key and the rank it claims to come from, never with the
    forged message."""
    done, _ = _case("forge")
    error = _the_one_error(done)
    assert "INJECTED" not in done.stdout + done.stderr
    assert "key tfexec-mesh/0/fail/1 (claimed to be written by rank 1) is not signed" in error


@pytest.mark.slow
def test_the_entry_point_returns_the_same_result_on_every_participant_twice_in_one_launch() -> None:
    done = _torchrun([str(HERE / "torchrun_case.py"), "twice"])
    assert done.returncode == 0, done.stdout + done.stderr
    # the two processes share one pipe, so their lines may interleave: count, do not split
    assert done.stdout.count("rank 0: ok (4, 4)") == 2 and done.stdout.count("rank 1: ok (4, 4)") == 2, done.stdout


@pytest.mark.slow
def test_a_2x2_mesh_of_four_torchrun_processes_computes_the_single_participant_value(tmp_path: Path) -> None:
    mesh = Mesh((2, 2), ("dp", "tp"))
    x = Var("x", f32[4, 8] @ ShardLayout(mesh, (Split(0), Split(1))))
    w = ConstTensor("w", f32[8, 6] @ ShardLayout(mesh, (Split(0), Split(0))))  # one axis split by both mesh axes
    module = IRModule({"f": Function("f", (x,), ops.matmul(ops.exp(x), w))}, {"w": w.type}, entry="f")
    saved = save_module(module, {"w": data(8, 6)}, tmp_path / "m")
    out = tmp_path / "out.safetensors"
    done = _torchrun(["-m", "tfexec", "mesh", str(saved), "--mesh", "2x2", "--seed", "5", "--out", str(out), "--locals"], nproc=4)
    assert done.returncode == 0, done.stdout + done.stderr
    from safetensors.torch import load_file

    written = load_file(out)
    xs = torch.randn(4, 8, generator=torch.Generator().manual_seed(5))  # the command's random input for --seed 5
    single = tfexec.evaluate(load_module(saved), xs)
    assert isinstance(single, torch.Tensor)
    torch.testing.assert_close(written["output"], single)
    assert sorted(k for k in written if k.startswith("rank")) == [f"rank{r}.output" for r in range(4)]


@pytest.mark.slow
def test_the_mesh_command_refuses_a_launch_of_the_wrong_size_once(tmp_path: Path) -> None:
    saved = _mlp(tmp_path)
    done = _torchrun(["-m", "tfexec", "mesh", str(saved), "--out", str(tmp_path / "o.safetensors")], nproc=3)
    errors = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("tfexec mesh: ")]
    assert len(errors) == 1 and done.returncode != 0, done.stdout + done.stderr
    assert "Mesh((2,), ('tp',)) has 2 participants, but the launcher started 3 processes: start 2" in errors[0]


def test_mesh_command_usage_errors_need_no_launch(tmp_path: Path) -> None:
    from tfexec.cli import main

    assert main(["mesh", str(tmp_path / "nope")]) == 2
    assert main(["mesh", str(tmp_path), "--mesh", "2y2"]) == 2
    manifest = json.dumps({"format": "other"})
    (tmp_path / "manifest.json").write_text(manifest)
    assert main(["mesh", str(tmp_path)]) == 2  # not a saved module: the command line names no program (as for run)


def test_mesh_command_invents_no_dim_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tfexec.cli import main

    program = tmp_path / "split.tf.py"
    program.write_text(
        "@entry\n"
        "def f(x: f32[B, 8] @ ShardLayout(Mesh((2,), ('tp',)), (Split(0),))) -> f32[B, 8]:\n"
        "    return exp(x)\n"
    )
    assert main(["mesh", str(program)]) == 2  # random inputs, and nothing says how big B is
    assert "f uses dim(s) B and random inputs need a size for every dim: give --dim B=SIZE" in capsys.readouterr().err
    assert main(["mesh", str(program), "--dim", "C=4"]) == 2
    assert "f uses no dim C (its dims are B)" in capsys.readouterr().err


@pytest.mark.slow
def test_the_mesh_command_without_a_launcher_starts_the_participants_itself(tmp_path: Path) -> None:
    saved = _mlp(tmp_path)
    out = tmp_path / "out.safetensors"
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    done = subprocess.run([sys.executable, "-W", "ignore", "-m", "tfexec", "mesh", str(saved), "--seed", "2", "--out", str(out)],
                          capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote 1 tensor(s) to {out} (2 participants of Mesh((2,), ('tp',)))")
    from safetensors.torch import load_file

    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(2))
    single = tfexec.evaluate(load_module(saved), x)
    assert isinstance(single, torch.Tensor)
    torch.testing.assert_close(load_file(out)["output"], single)


def test_a_distributed_run_puts_back_the_evaluator_handlers_it_wrapped() -> None:
    """evaluate_distributed runs in the user's own process: the mesh rules it installs over
    ``eval_registry`` are undone when it returns (no process is needed to check that)."""
    from tfexec import eval_registry
    from tfexec.mesh import _rules

    keys = eval_registry.keys()
    originals = {key: eval_registry.lookup(key) for key in keys}
    state = _rules.MeshState(None, TP, None)  # type: ignore[arg-type]  # wrapping reads neither
    replaced = _rules.install(state)
    assert all(eval_registry.lookup(key) is not originals[key] for key in keys)
    _rules.restore(replaced)
    assert all(eval_registry.lookup(key) is originals[key] for key in keys)


def _truncated_module(root: Path) -> Path:
    saved = _mlp(root)
    weights = saved / "weights.safetensors"
    weights.write_bytes(weights.read_bytes()[:-16])
    return saved


def test_a_truncated_weights_file_is_a_module_load_error_exit_2_with_tfexec_s_own_launcher(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tfexec.cli import main

    saved = _truncated_module(tmp_path)
    assert main(["mesh", str(saved), "--seed", "1", "--out", str(tmp_path / "o.safetensors")]) == 2
    (line,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("tfexec mesh: ")]
    assert line.startswith("tfexec mesh: ModuleLoadError: ") and "truncated" in line


@pytest.mark.slow
def test_a_truncated_weights_file_reads_the_same_under_torchrun(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same failure, the same report: one line, the same class and words as without a
    launcher, and exit status 2 from every participant (torchrun's summary lists them)."""
    from tfexec.cli import main

    saved = _truncated_module(tmp_path)
    assert main(["mesh", str(saved), "--seed", "1", "--out", str(tmp_path / "o.safetensors")]) == 2
    (own,) = [line for line in capsys.readouterr().err.splitlines() if line.startswith("tfexec mesh: ")]
    done = _torchrun(["-m", "tfexec", "mesh", str(saved), "--seed", "1", "--out", str(tmp_path / "o.safetensors")])
    output = done.stdout + done.stderr
    lines = [line for line in output.splitlines() if line.startswith("tfexec mesh: ")]
    assert lines == [own], output
    assert done.returncode != 0 and "exitcode  : 2" in output and "exitcode  : 1" not in output, output
