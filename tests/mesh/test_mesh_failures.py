"""A participant that dies or hangs: one ``EvalError`` naming it and the node, and no
process (nor temporary directory) left behind. One mesh launch per test."""

import os
import signal
import tempfile
import time
from pathlib import Path

import pytest
import torch
from mesh_ops import ExitOnRank, HangOnRank, SignalOnRank

from tfexec import Call, EvalError, Function, Mesh, ShardLayout, Split, Var, describe_expr, evaluate, evaluate_mesh, f32, ops

TP = Mesh((2,), ("tp",))
S0 = ShardLayout(TP, (Split(0),))


def _participants() -> list[int]:
    """Pids of live mesh participants started by this process."""
    found = []
    proc = Path("/proc")
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"tfexec.mesh._participant" in cmdline:
            found.append(int(entry.name))
    return found


def _run_dirs() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("tfexec-mesh-*")}


@pytest.fixture(autouse=True)
def _own_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run directories go to this test's own temporary directory: other mesh runs on the
    machine (other test sessions) come and go in the shared one."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to find processes")


def test_a_participant_that_dies_is_named_with_its_node() -> None:
    x = Var("x", f32[4, 6] @ S0)
    crash = Call(ExitOnRank(rank=1, code=3), (ops.mul(x, 2.0),))
    fn = Function("crashes", (x,), ops.add(crash, 1.0))
    data = torch.randn(4, 6)
    assert torch.equal(evaluate(fn, data), data * 2.0 + 1.0)  # the op is the identity outside a mesh run
    before = _run_dirs()
    with pytest.raises(EvalError) as info:
        evaluate_mesh(fn, data, timeout=60)
    message = str(info.value)
    assert message.startswith(
        describe_expr(crash) + ": mesh participant rank 1 at coordinate (1,) of Mesh((2,), ('tp',)) died (exit code 3) in this op"
    )
    assert _participants() == [] and _run_dirs() == before


@pytest.mark.parametrize("rank, other", [(1, 0), (0, 1)])
def test_a_participant_that_hangs_while_the_other_waits_is_named_as_stalled(rank: int, other: int) -> None:
    """The stall check names the participant the other waits for, whichever rank it is: the
    one in the hanging op, never the lowest rank of a tie. 10 s without advancing is far
    longer than any op of this 4x6 program takes on a loaded machine."""
    x = Var("x", f32[4, 6] @ S0)
    hang = Call(HangOnRank(rank=rank), (ops.exp(x),))
    fn = Function("hangs", (x,), ops.reduce(hang, kind="sum", axes=(0,)))
    before = _run_dirs()
    with pytest.raises(EvalError) as info:
        evaluate_mesh(fn, torch.randn(4, 6), timeout=10)
    message = str(info.value)
    assert message.startswith(
        f"{describe_expr(hang)}: mesh participant rank {rank} at coordinate ({rank},) of Mesh((2,), ('tp',)) made no "
        f"progress in {describe_expr(hang)} for "
    ), message
    assert f"while rank {other} at ({other},) (in reduce(" in message  # the other waits in the sum's collective
    assert "the run was stopped (timeout 10 s: the longest a participant may go without advancing while others wait for it)" in message
    assert _participants() == [] and _run_dirs() == before


@pytest.mark.parametrize("rank, other", [(1, 0), (0, 1)])
def test_a_participant_stopped_by_sigstop_is_named_as_not_answering(rank: int, other: int) -> None:
    x = Var("x", f32[4, 6] @ S0)
    stop = Call(SignalOnRank(rank=rank, signum=int(signal.SIGSTOP)), (ops.exp(x),))
    fn = Function("stops", (x,), ops.reduce(stop, kind="sum", axes=(0,)))
    with pytest.raises(EvalError) as info:
        evaluate_mesh(fn, torch.randn(4, 6), timeout=10)
    message = str(info.value)
    assert message.startswith(
        f"{describe_expr(stop)}: mesh participant rank {rank} at coordinate ({rank},) of Mesh((2,), ('tp',)) stopped "
        f"answering (no heartbeat: its process is stopped by a signal, or frozen) in {describe_expr(stop)} for "
    ), message
    assert f"while rank {other} at ({other},) (in reduce(" in message
    assert _participants() == []  # a stopped process is killed all the same


def test_a_participant_killed_by_sigkill_is_named_with_its_node() -> None:
    x = Var("x", f32[4, 6] @ S0)
    kill = Call(SignalOnRank(rank=1, signum=int(signal.SIGKILL)), (ops.exp(x),))
    fn = Function("killed", (x,), ops.reduce(kill, kind="sum", axes=(0,)))
    with pytest.raises(EvalError) as info:
        evaluate_mesh(fn, torch.randn(4, 6), timeout=60)
    assert str(info.value).startswith(
        f"{describe_expr(kill)}: mesh participant rank 1 at coordinate (1,) of Mesh((2,), ('tp',)) died (killed by signal SIGKILL) in this op"
    )
    assert _participants() == []


def test_a_killed_caller_s_run_directory_is_swept_by_the_next_run(tmp_path: Path) -> None:
    """A caller killed mid-run cannot remove its run directory; its lock dies with it, and
    the next run removes the directory (and no live caller's, nor one without a lock)."""
    import subprocess
    import sys

    script = (
        "import sys, torch; sys.path.insert(0, sys.argv[1])\n"
        "from mesh_ops import HangOnRank\n"
        "from tfexec import Call, Function, Mesh, ShardLayout, Split, Var, f32, ops, evaluate_mesh\n"
        "x = Var('x', f32[4, 6] @ ShardLayout(Mesh((2,), ('tp',)), (Split(0),)))\n"
        "evaluate_mesh(Function('h', (x,), ops.exp(Call(HangOnRank(rank=1), (x,)))), torch.randn(4, 6), timeout=600)\n"
    )
    env = dict(os.environ, TMPDIR=str(tmp_path))
    caller = subprocess.Popen([sys.executable, "-W", "ignore", "-c", script, str(Path(__file__).parent)], env=env)
    try:
        deadline = time.monotonic() + 240  # generous: the participants import torch on a loaded machine
        while not any((d / "rank1.log").exists() for d in tmp_path.glob("tfexec-mesh-*")):
            assert caller.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        caller.kill()
        caller.wait()
    (left,) = tmp_path.glob("tfexec-mesh-*")
    (tmp_path / "tfexec-mesh-older").mkdir()  # no lock file: not this run's to judge
    x = Var("x", f32[4, 6] @ S0)
    data = torch.randn(4, 6)
    torch.testing.assert_close(evaluate_mesh(Function("ok", (x,), ops.exp(x)), data, timeout=60), data.exp())
    assert not left.exists()
    assert sorted(p.name for p in tmp_path.glob("tfexec-mesh-*")) == ["tfexec-mesh-older"]
