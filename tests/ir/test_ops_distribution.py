"""Type rules of ``reshard`` and ``local`` (hir §1.3): the layout type they give, the
local shard's shape, and the layouts they refuse."""

from collections.abc import Callable

import pytest

from tfexec import (
    DimExpr,
    DimVar,
    DType,
    Layout,
    Mesh,
    Replicate,
    ShardLayout,
    Split,
    TensorType,
    TypeInferenceError,
    Var,
    ops,
)
from tfexec.ir.expr import Call

from ir.op_helpers import infer_call

F32 = DType.float32
S = DimVar("S")
MESH = Mesh((2, 4), ("dp", "tp"))


def infer(x_type: TensorType, build: Callable[[Var], Call]) -> TensorType:
    x = Var("x", x_type)
    return infer_call(build(x), x)


def test_reshard_changes_only_the_layout_type() -> None:
    tiles = Layout((8, 16, 64))
    assert infer(TensorType((128, 64), F32), lambda x: ops.reshard(x, layout=tiles)) == TensorType((128, 64), F32, tiles)
    shard = ShardLayout(MESH, (Replicate(), Split(1)))
    assert infer(TensorType((S, 64), F32), lambda x: ops.reshard(x, layout=shard)) == TensorType((S, 64), F32, shard)
    back = TensorType((128, 64), F32, tiles)
    assert infer(back, lambda x: ops.reshard(x, layout=None)) == TensorType((128, 64), F32)


@pytest.mark.parametrize(
    ("shape", "layout", "message"),
    [
        ((128, 64), Layout((8, 16, 32)), r"reshard \(C3\): Layout\(\(8, 16, 32\)\) must hold the 8192 elements of shape \[128, 64\] of f32\[128, 64\], found 4096"),
        ((S, 64), Layout((S, 32)), r"must hold the 64\*S elements .*, found 32\*S"),
        ((8, 6), ShardLayout(MESH, (Replicate(), Split(2))), r"reshard \(C1\): Split\(2\) names no axis of f32\[8, 6\] \(valid: -2..1\)"),
        ((8, 6), ShardLayout(MESH, (Replicate(), Split(1))), r"reshard \(C2\): axis 1 of f32\[8, 6\] \(size 6\) does not split into 4 equal parts"),
        ((8, 8), ShardLayout(MESH, (Split(0), Split(1)), Layout((2, 3))), r"reshard \(C3\): Layout\(\(2, 3\)\) must hold the 8 elements of shape \[4, 2\]"),
    ],
)
def test_reshard_refuses_layouts_that_do_not_fit(shape: tuple[object, ...], layout: object, message: str) -> None:
    with pytest.raises(TypeInferenceError, match=message):
        infer(TensorType(shape, F32), lambda x: ops.reshard(x, layout=layout))  # type: ignore[arg-type]


def test_reshard_with_a_per_participant_layout_that_fits() -> None:
    layout = ShardLayout(MESH, (Split(0), Split(1)), Layout((4, 2)))
    assert infer(TensorType((8, 8), F32), lambda x: ops.reshard(x, layout=layout)).layout == layout


def test_local_of_an_unsharded_value_is_the_value() -> None:
    for t in (TensorType((4,), F32), TensorType((4,), F32, Layout((2, 2)))):
        assert infer(t, ops.local) == t


def test_local_of_a_replicated_value_drops_the_shard_layout() -> None:
    t = TensorType((S, 8), DType.bfloat16, ShardLayout(MESH, (Replicate(), Replicate()), Layout((S, 2, 4))))
    assert infer(t, ops.local) == TensorType((S, 8), DType.bfloat16, Layout((S, 2, 4)))


def test_local_of_a_split_value_is_the_shard_type() -> None:
    t = TensorType((S, 8), F32, ShardLayout(MESH, (Split(0), Split(-1))))
    assert infer(t, ops.local) == TensorType((DimExpr("floordiv", S, 2), 2), F32)


def test_local_errors() -> None:
    with pytest.raises(TypeInferenceError, match=r"local \(C2\): axis 1 of .* \(size 6\) does not split into 4 equal parts"):
        infer(TensorType((8, 6), F32, ShardLayout(MESH, (Replicate(), Split(1)))), ops.local)
    with pytest.raises(TypeInferenceError, match=r"local \(C1\): Split\(-3\) names no axis of"):
        infer(TensorType((8, 6), F32, ShardLayout(MESH, (Split(-3), Replicate()))), ops.local)


def test_reshard_layout_counts_over_different_dims_are_left_to_run_time() -> None:
    t = infer(TensorType((S, 4), F32), lambda x: ops.reshard(x, layout=Layout((8, 2))))
    assert t.layout == Layout((8, 2))
