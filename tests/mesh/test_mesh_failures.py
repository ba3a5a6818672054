"""A participant that dies or hangs: one ``EvalError`` naming it and the node, and no
process (nor temporary directory) left behind. One mesh launch per test."""

import os
import tempfile
from pathlib import Path

import pytest
import torch
from mesh_ops import ExitOnRank, HangOnRank

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


def test_a_participant_that_hangs_is_stopped_by_the_timeout() -> None:
    x = Var("x", f32[4, 6] @ S0)
    hang = Call(HangOnRank(rank=1), (ops.exp(x),))
    fn = Function("hangs", (x,), ops.reduce(hang, kind="sum", axes=(0,)))
    before = _run_dirs()
    with pytest.raises(EvalError) as info:
        evaluate_mesh(fn, torch.randn(4, 6), timeout=4)
    message = str(info.value)
    assert message.startswith(describe_expr(hang) + ": mesh participant rank 1 at coordinate (1,)")
    assert "made no progress in " + describe_expr(hang) + " within the 4 s timeout, and the run was stopped" in message
    assert "rank 0 at (0,):" in message  # where the other participant was
    assert _participants() == [] and _run_dirs() == before
