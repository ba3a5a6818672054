"""The mesh evaluator on a (2, 2) mesh — two mesh axes, four participants — against the
single-participant one: locals follow mesh coordinates, two-axis layouts give blocks, and
an op DTensor cannot compute for its placements is an error naming the node. One batch
(one launch of four processes) for the module; its last job fails on purpose.
"""

from collections.abc import Callable

import pytest
import torch
from mesh_cases import Case, Outcomes, assert_same, data, ok, run_batch

import tfexec
from tfexec import Function, Mesh, Replicate, ShardLayout, Split, Var, describe_expr, f32, ops

GRID = Mesh((2, 2), ("dp", "tp"))


def grid(*attrs: Replicate | Split) -> ShardLayout:
    return ShardLayout(GRID, attrs)


# -- the (2, 2) programs -----------------------------------------------------------------------------------


def grid_matmul() -> Case:
    x, w = Var("x", f32[8, 16] @ grid(Split(0), Replicate())), Var("w", f32[16, 12] @ grid(Replicate(), Split(1)))
    body = ops.reshard(ops.matmul(x, w), layout=grid(Split(0), Split(1)))
    return Case(Function("grid_matmul", (x, w), body), (data(8, 16), data(16, 12)), exact=False, return_locals=True)


def grid_mlp() -> Case:
    x = Var("x", f32[8, 16] @ grid(Split(0), Replicate()))
    w1, w2 = Var("w1", f32[16, 32] @ grid(Replicate(), Split(1))), Var("w2", f32[32, 16] @ grid(Replicate(), Split(0)))
    body = ops.matmul(ops.relu(ops.matmul(x, w1)), w2)
    return Case(Function("grid_mlp", (x, w1, w2), body), (data(8, 16), data(16, 32), data(32, 16)), exact=False)


def grid_nested_local() -> Case:
    x = Var("x", f32[8, 6] @ grid(Split(0), Split(0)))
    return Case(Function("nested_local", (x,), ops.local(x)), (data(8, 6),), return_locals=True)


def grid_local_tp() -> Case:
    x = Var("x", f32[4, 6] @ grid(Replicate(), Split(1)))
    return Case(Function("local_tp", (x,), ops.local(x)), (data(4, 6),), return_locals=True)


def grid_reshard() -> Case:
    x = Var("x", f32[4, 8] @ grid(Split(0), Split(1)))
    return Case(Function("grid_reshard", (x,), ops.reshard(x, layout=grid(Split(1), Replicate()))), (data(4, 8),),
                return_locals=True)


RMS_CALL = ops.rms_norm(Var("x", f32[4, 6] @ grid(Replicate(), Split(1))), axes=(-1,))


def grid_refused() -> Case:
    x = RMS_CALL.args[0]
    assert isinstance(x, Var)
    return Case(Function("refused", (x,), RMS_CALL), (data(4, 6),))


FOUR: dict[str, Callable[[], Case]] = {
    "grid_matmul": grid_matmul, "grid_mlp": grid_mlp, "grid_nested_local": grid_nested_local,
    "grid_local_tp": grid_local_tp, "grid_reshard": grid_reshard, "grid_refused": grid_refused,
}


@pytest.fixture(scope="module")
def four() -> Outcomes:
    return run_batch(FOUR, GRID)


@pytest.mark.parametrize("name", ["grid_matmul", "grid_mlp", "grid_reshard"])
def test_a_two_by_two_mesh_computes_the_single_participant_value(four: Outcomes, name: str) -> None:
    case, result = ok(four, name)
    assert_same(result.logical, tfexec.evaluate(case.fn, *case.inputs), case.exact)


def test_local_on_a_two_axis_mesh_follows_mesh_coordinates(four: Outcomes) -> None:
    case, result = ok(four, "grid_nested_local")
    (x,) = case.inputs
    assert isinstance(x, torch.Tensor) and result.locals is not None
    for dp in range(2):
        for tp in range(2):  # Split(0) on both axes: dp outermost, so rows 2*(2*dp+tp) ...
            block = 2 * dp + tp
            assert torch.equal(result.local(dp, tp), x[2 * block : 2 * block + 2])
    case, result = ok(four, "grid_local_tp")
    (x,) = case.inputs
    assert isinstance(x, torch.Tensor)
    for dp in range(2):
        for tp in range(2):
            assert torch.equal(result.local(dp, tp), x[:, 3 * tp : 3 * tp + 3])


def test_locals_of_a_two_axis_layout_are_blocks(four: Outcomes) -> None:
    case, result = ok(four, "grid_matmul")
    assert isinstance(result.logical, torch.Tensor)
    for dp in range(2):
        for tp in range(2):
            block = result.logical[4 * dp : 4 * dp + 4, 6 * tp : 6 * tp + 6]
            assert torch.equal(result.local(dp, tp), block)
    case, result = ok(four, "grid_reshard")
    (x,) = case.inputs
    assert isinstance(x, torch.Tensor)
    for dp in range(2):
        for tp in range(2):  # Split(1) over dp, replicated over tp
            assert torch.equal(result.local(dp, tp), x[:, 4 * dp : 4 * dp + 4])


def test_an_op_dtensor_cannot_compute_is_an_error_naming_the_node(four: Outcomes) -> None:
    _, outcome = four["grid_refused"]
    assert outcome.error is not None
    message = str(outcome.error)
    assert message.startswith(describe_expr(RMS_CALL) + ": on mesh participant rank ")
    assert "with DTensor on operands placed [(Replicate(), Shard(dim=1))]" in message
    assert "reshard the operands" in message
