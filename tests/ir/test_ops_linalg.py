"""Type rule of ``matmul``, checked against ``torch.matmul`` on CPU: every dtype pair,
1-D operands, batch broadcasting, and the errors the rule raises."""

from itertools import product

import pytest
import torch

from tfexec import DimVar, DType, Function, TensorType, TypeInferenceError, Var, infer_types, ops

from ir.op_helpers import DTYPES, infer, ones, rule_outcome, torch_outcome

B, M, K = DimVar("B"), DimVar("M"), DimVar("K")
F32 = DType.float32


def test_matmul_dtype_matrix_matches_torch() -> None:
    mismatches = []
    for da, db in product(DTYPES, DTYPES):
        want = torch_outcome(lambda: torch.matmul(ones((2, 3), da), ones((3, 4), db)), errors=(RuntimeError,))
        got = rule_outcome(ops.matmul, TensorType((2, 3), da), TensorType((3, 4), db))
        if want != got:
            mismatches.append(f"matmul {da} {db}: torch {want}, rule {got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 4)),
        ((5, 2, 3), (3,)),
        ((3,), (5, 3, 4)),
        ((5, 2, 3), (3, 4)),
        ((5, 1, 2, 3), (7, 3, 4)),
        ((1, 2, 3), (6, 3, 4)),
        ((2, 0), (0, 4)),
        ((2, 3), (4, 3)),
        ((5, 2, 3), (4, 3, 2)),
        ((3,), (4,)),
        ((), (3,)),
        ((3,), ()),
    ],
)
def test_matmul_shapes_match_torch(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    want = torch_outcome(lambda: torch.matmul(torch.ones(a), torch.ones(b)), errors=(RuntimeError,))
    assert rule_outcome(ops.matmul, TensorType(a, F32), TensorType(b, F32)) == want


def test_matmul_symbolic_shapes() -> None:
    assert infer(ops.matmul, TensorType((B, M, K), F32), TensorType((K, 8), F32)) == TensorType((B, M, 8), F32)
    assert infer(ops.matmul, TensorType((K,), F32), TensorType((K,), F32)) == TensorType((), F32)
    assert infer(ops.matmul, TensorType((1, M, K), F32), TensorType((B, K, 2), F32)) == TensorType((B, M, 2), F32)


def test_matmul_errors_say_expected_and_found() -> None:
    with pytest.raises(TypeInferenceError, match=r"^matmul\(x0, x1\): matmul \(C1\): contracted sizes differ: f32\[2, 3\] @ f32\[4, 2\] \(3 vs 4\)$"):
        infer(ops.matmul, TensorType((2, 3), F32), TensorType((4, 2), F32))
    with pytest.raises(TypeInferenceError, match=r"matmul operands must share a dtype, found f32\[2, 3\] and f16\[3, 2\] \(cast one\)"):
        infer(ops.matmul, TensorType((2, 3), F32), TensorType((3, 2), DType.float16))
    with pytest.raises(TypeInferenceError, match=r"matmul is not defined for bool operands \(torch rejects it\), found b1\[2, 3\] and b1\[3, 2\]"):
        infer(ops.matmul, TensorType((2, 3), DType.bool), TensorType((3, 2), DType.bool))
    with pytest.raises(TypeInferenceError, match=r"matmul operands must have rank >= 1, found f32\[\(\)\] and f32\[3\]"):
        infer(ops.matmul, TensorType((), F32), TensorType((3,), F32))
    with pytest.raises(TypeInferenceError, match=r"contracted sizes differ: f32\[K\] @ f32\[M\] \(K vs M\)"):
        infer(ops.matmul, TensorType((K,), F32), TensorType((M,), F32))
    with pytest.raises(TypeInferenceError, match=r"matmul: shapes \[5\] and \[4\] do not broadcast"):
        infer(ops.matmul, TensorType((5, 2, 3), F32), TensorType((4, 3, 2), F32))


def test_matmul_weak_scalar_operand_is_rank0_and_refused() -> None:
    x = Var("x", TensorType((3,), F32))
    call = ops.matmul(x, 2.0)
    with pytest.raises(TypeInferenceError, match=r"matmul operands must have rank >= 1"):
        infer_types(Function("f", (x,), call))
