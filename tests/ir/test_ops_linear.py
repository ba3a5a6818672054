"""Type rule of the linear family's ``linear``, checked against ``torch.nn.functional.linear``:
output shapes on meta tensors (batched, 1-D and empty ``x``, with and without a bias), every
dtype pair (meta kernels skip dtype checks, so a refusal is confirmed on CPU), symbolic
sizes, and the decisions kept stricter than torch (a 1-D weight, integer operands, a bias
that only broadcasts), each refusal citing its constraint."""

from itertools import product

import pytest
import torch
import torch.nn.functional as F

from tfexec import DimVar, DType, TensorType, TypeInferenceError, ops

from ir.op_helpers import DTYPES, infer, rule_outcome, torch_verdict

B, S, K, N = DimVar("B"), DimVar("S"), DimVar("K"), DimVar("N")
F32, F16 = DType.float32, DType.float16


def _operands(x: tuple[int, ...], w: tuple[int, ...], b: tuple[int, ...] | None, dtype: DType = F32) -> list[tuple[tuple[int, ...], DType]]:
    return [(x, dtype), (w, dtype)] + ([] if b is None else [(b, dtype)])


@pytest.mark.parametrize(
    ("x", "w", "b"),
    [((3, 4), (5, 4), None), ((3, 4), (5, 4), (5,)), ((2, 3, 4), (5, 4), (5,)), ((2, 1, 3, 4), (5, 4), None),
     ((4,), (5, 4), (5,)), ((4,), (5, 4), None), ((3, 0), (5, 0), (5,)), ((3, 4), (0, 4), None), ((0, 4), (5, 4), (5,)),
     ((3, 4), (5, 3), None), ((4,), (5, 3), (5,)), ((3, 4), (5, 4), (6,))],
)
def test_linear_shapes_match_torch(x: tuple[int, ...], w: tuple[int, ...], b: tuple[int, ...] | None) -> None:
    operands = _operands(x, w, b)
    want = torch_verdict(F.linear, *operands)
    got = rule_outcome(ops.linear, *(TensorType(s, d) for s, d in operands))
    assert got == want, f"{operands}: torch {want}, rule {got}"


@pytest.mark.parametrize(("dx", "dw"), list(product(DTYPES, repeat=2)), ids=lambda d: str(d))
def test_linear_dtypes_are_one_floating_dtype(dx: DType, dw: DType) -> None:
    """Torch refuses a mix of dtypes (on CPU; its meta kernel does not check) and bool; it
    takes integers on CPU but not on CUDA, where the rule refuses them (C4)."""
    got = rule_outcome(ops.linear, TensorType((3, 4), dx), TensorType((5, 4), dw))
    want = torch_verdict(F.linear, ((3, 4), dx), ((5, 4), dw))
    if dx == dw and not dx.is_floating and dx is not DType.bool:
        assert got == "error" and want == (dx, (3, 5))  # kept stricter than torch's CPU kernels
    else:
        assert got == want, f"{dx} {dw}: torch {want}, rule {got}"


@pytest.mark.parametrize("db", [F16, DType.float64, DType.bfloat16])
def test_a_bias_of_another_dtype_is_refused_as_torch_does(db: DType) -> None:
    assert torch_verdict(F.linear, ((3, 4), F32), ((5, 4), F32), ((5,), db)) == "error"
    with pytest.raises(TypeInferenceError, match=r"linear operands must share a dtype, .* \[linear \(C3\)\]"):
        infer(ops.linear, TensorType((3, 4), F32), TensorType((5, 4), F32), TensorType((5,), db))


@pytest.mark.parametrize(("b", "torch_result"), [((), (3, 5)), ((1,), (3, 5)), ((3, 5), (3, 5)), ((3, 1), (3, 5))])
def test_a_bias_that_only_broadcasts_is_refused(b: tuple[int, ...], torch_result: tuple[int, ...]) -> None:
    """Torch adds any bias that broadcasts to the result without growing it (on CPU; its meta
    kernel even lets one grow the result); the rule takes exactly ``[out]`` (C5): ``add`` says
    the rest."""
    assert torch_verdict(F.linear, ((3, 4), F32), ((5, 4), F32), (b, F32)) == (F32, torch_result)
    with pytest.raises(TypeInferenceError, match=r"linear bias f32\[.*\] must be \[5\], one element per output feature of f32\[5, 4\] \[linear \(C5\)\]"):
        infer(ops.linear, TensorType((3, 4), F32), TensorType((5, 4), F32), TensorType(b, F32))


def test_weights_of_other_ranks_and_a_rank_0_x_are_refused() -> None:
    """Torch refuses a rank-0 operand and a weight of rank 3; its 1-D weight (``matmul(x, w)``)
    is refused here (C2): write ``matmul``."""
    for x, w in [((), (5, 4)), ((3, 4), ()), ((3, 4), (2, 5, 4))]:
        assert torch_verdict(F.linear, (x, F32), (w, F32)) == "error"
    assert torch_verdict(F.linear, ((3, 4), F32), ((4,), F32)) == (F32, (3,))
    for x, w in [((), (5, 4)), ((3, 4), ()), ((3, 4), (2, 5, 4)), ((3, 4), (4,))]:
        with pytest.raises(TypeInferenceError, match=r"linear needs x of rank >= 1 and a weight \[out, in\] of rank 2, .* \[linear \(C2\)\]"):
            infer(ops.linear, TensorType(x, F32), TensorType(w, F32))
    with pytest.raises(TypeInferenceError, match=r"\[linear \(C2\)\]"):
        infer(lambda w: ops.linear(2.0, w), TensorType((5, 4), F32))


def test_linear_over_symbolic_sizes() -> None:
    """The contracted sizes agree as matmul's do: the same DimVar (or size) on both sides."""
    assert infer(ops.linear, TensorType((B, S, K), F32), TensorType((N, K), F32), TensorType((N,), F32)) == TensorType((B, S, N), F32)
    assert infer(ops.linear, TensorType((K,), F16), TensorType((8, K), F16)) == TensorType((8,), F16)
    with pytest.raises(TypeInferenceError, match=r"\(K vs N\) \[linear \(C1\)\]"):
        infer(ops.linear, TensorType((B, K), F32), TensorType((8, N), F32))
    with pytest.raises(TypeInferenceError, match=r"linear bias f32\[K\] must be \[N\].* \[linear \(C5\)\]"):
        infer(ops.linear, TensorType((B, K), F32), TensorType((N, K), F32), TensorType((K,), F32))


def test_linear_errors_say_expected_and_found() -> None:
    with pytest.raises(
        TypeInferenceError,
        match=r"^linear\(x0, x1\): linear contracts x's last axis with the weight's in axis: f32\[2, 3\] and f32\[2, 4\] \(3 vs 4\) \[linear \(C1\)\]$",
    ):
        infer(ops.linear, TensorType((2, 3), F32), TensorType((2, 4), F32))
    with pytest.raises(TypeInferenceError, match=r"linear needs floating operands, found i64\[2, 3\], i64\[2, 3\] \(use matmul for an integer product\) \[linear \(C4\)\]"):
        infer(ops.linear, TensorType((2, 3), DType.int64), TensorType((2, 3), DType.int64))

