"""Type rule of the ``dim_*`` ops: two rank-0 integer operands give a rank-0 int64; the
builders never fold (hir.md §ops, dim arithmetic)."""

import pytest

from tfexec import Call, Constant, DType, TensorType, TypeInferenceError, Var, ops
from tfexec.ir.ops.dimarith import DIM_OPS

from ir.op_helpers import infer_call

NAMES = [cls.name for cls in DIM_OPS]
I64 = TensorType((), DType.int64)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [DType.int8, DType.int16, DType.int32, DType.int64, DType.uint8], ids=str)
def test_dim_ops_take_any_rank0_integer_and_give_i64(name: str, dtype: DType) -> None:
    k = Var("k", TensorType((), dtype))
    assert infer_call(getattr(ops, name)(k, 3), k) == I64
    assert infer_call(getattr(ops, name)(7, k), k) == I64


@pytest.mark.parametrize("name", NAMES)
def test_dim_builders_never_fold(name: str) -> None:
    call = getattr(ops, name)(6, 3)
    assert isinstance(call, Call) and type(call.target).name == name
    assert all(isinstance(a, Constant) and a.weak and a.type == I64 for a in call.args)
    assert infer_call(call) == I64


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("operand", "shown"),
    [
        (TensorType((), DType.float32), r"f32\[\(\)\]"),
        (TensorType((), DType.bool), r"b1\[\(\)\]"),
        (TensorType((1,), DType.int64), r"i64\[1\]"),
    ],
)
def test_dim_ops_refuse_what_is_not_a_rank0_integer(name: str, operand: TensorType, shown: str) -> None:
    k = Var("k", operand)
    with pytest.raises(TypeInferenceError, match=rf"{name} operand 1 must be a rank-0 integer, found {shown}"):
        infer_call(getattr(ops, name)(2, k), k)


def test_dim_ops_refuse_python_floats_and_bools() -> None:
    with pytest.raises(TypeInferenceError, match=r"dim_add operand 0 must be a rank-0 integer, found f32\[\(\)\]"):
        infer_call(ops.dim_add(0.5, 1))
    with pytest.raises(TypeInferenceError, match=r"dim_mul operand 1 must be a rank-0 integer, found b1\[\(\)\]"):
        infer_call(ops.dim_mul(2, True))
