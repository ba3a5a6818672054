"""Type rules of the rounding, more-math, activation and integer families — rounding,
``clamp``, more math, the predicates, the activations, integer division and bitwise ops —
checked against the torch function each op class names (``reference``):
result dtype and shape on meta tensors, refusals confirmed on CPU, across every dtype,
broadcasting shapes, weak Python scalars and symbolic dims."""

from collections.abc import Callable
from itertools import product

import pytest
import torch

from tfexec import DimVar, DType, TensorType, TypeInferenceError, ops
from tfexec.ir.ops.activation import ACTIVATION_OPS
from tfexec.ir.ops.integer import INTEGER_OPS
from tfexec.ir.ops.rounding import ROUNDING_OPS
from tfexec.ir.ops.unary_math import UNARY_MATH_OPS

from ir.op_helpers import DTYPES, infer, rule_outcome, torch_outcome, torch_verdict

B = DimVar("B")
F32 = DType.float32

FAMILIES = (*ROUNDING_OPS, *UNARY_MATH_OPS, *ACTIVATION_OPS, *INTEGER_OPS)
"""The ops checked here; each names its torch function on its class (``Op.reference``)."""


def _references(arity: int) -> dict[str, Callable[..., torch.Tensor]]:
    return {cls.name: cls.reference for cls in FAMILIES
            if cls.reference is not None and cls.min_args == cls.max_args == arity}


UNARY = _references(1)
BINARY = _references(2)


def test_every_op_of_these_families_names_its_torch_reference() -> None:
    assert [cls.name for cls in FAMILIES if cls.reference is None] == []
    assert {cls.name for cls in FAMILIES} == set(UNARY) | set(BINARY) | {"clamp"}  # clamp: three operands, below


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", [(3,), (), (2, 0)], ids=["vector", "rank0", "empty"])
def test_unary_dtype_and_shape_match_torch(name: str, shape: tuple[int, ...]) -> None:
    mismatches = []
    for dtype in DTYPES:
        want = torch_verdict(UNARY[name], (shape, dtype))
        got = rule_outcome(getattr(ops, name), TensorType(shape, dtype))
        if want != got:
            mismatches.append(f"{name}({dtype}{list(shape)}): torch {want}, rule {got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 1), (3,)), ((), (3,))], ids=["same", "broadcast", "rank0"])
def test_binary_dtype_and_shape_match_torch(name: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    mismatches = []
    for da, db in product(DTYPES, DTYPES):
        want = torch_verdict(BINARY[name], (shapes[0], da), (shapes[1], db))
        got = rule_outcome(getattr(ops, name), TensorType(shapes[0], da), TensorType(shapes[1], db))
        if want != got:
            mismatches.append(f"{da} {name} {db}: torch {want}, rule {got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("name", sorted(set(BINARY) - {"logical_xor"}))
@pytest.mark.parametrize("scalar", [True, 3, 2.5], ids=["bool", "int", "float"])
def test_binary_weak_scalar_promotes_as_torch_python_scalar(name: str, scalar: bool | int | float) -> None:
    mismatches = []
    for dtype in DTYPES:
        want = torch_outcome(lambda: BINARY[name](torch.ones(3, dtype=dtype.torch), scalar))
        got = rule_outcome(lambda x: getattr(ops, name)(x, scalar), TensorType((3,), dtype))
        if want != got:
            mismatches.append(f"{dtype} {name} {scalar!r}: torch {want}, rule {got}")
    assert not mismatches, "\n".join(mismatches)


def test_binary_refusals_cite_their_constraints() -> None:
    with pytest.raises(TypeInferenceError, match=r"floor_divide: shapes \[2, 3\] and \[2\] do not broadcast.*\[floor_divide \(C1\)\]"):
        infer(ops.floor_divide, TensorType((2, 3), DType.int32), TensorType((2,), DType.int32))
    with pytest.raises(TypeInferenceError, match=r"remainder is not defined for bool operands.*\[remainder \(C2\)\]"):
        infer(ops.remainder, TensorType((3,), DType.bool), TensorType((3,), DType.bool))
    with pytest.raises(TypeInferenceError, match=r"bitwise_or needs integer or bool operands, found f16\[3\] and b1\[3\] \(promoted to f16\) \[bitwise_or \(C2\)\]"):
        infer(ops.bitwise_or, TensorType((3,), DType.float16), TensorType((3,), DType.bool))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_round_with_decimals_is_floating_only_like_torch(dtype: DType) -> None:
    want = torch_verdict(lambda x: torch.round(x, decimals=2), ((3,), dtype))
    assert rule_outcome(lambda x: ops.round(x, decimals=2), TensorType((3,), dtype)) == want


def test_symbolic_dims_pass_through_elementwise_rules() -> None:
    t = TensorType((B, 4), DType.int32)
    assert infer(ops.floor, t) == t
    assert infer(ops.isnan, t) == TensorType((B, 4), DType.bool)
    assert infer(ops.log1p, t) == TensorType((B, 4), F32)
    assert infer(ops.remainder, t, TensorType((1, 4), DType.int64)) == TensorType((B, 4), DType.int64)


# -- clamp --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shapes", [((3,), (), ()), ((3,), (2, 3), (1,)), ((2, 1), (3,), (2, 3))], ids=["scalar-bounds", "bcast-low", "bcast-x"])
def test_clamp_with_tensor_bounds_matches_torch(shapes: tuple[tuple[int, ...], ...]) -> None:
    mismatches = []
    for dx, dl in product(DTYPES, DTYPES):
        operands = ((shapes[0], dx), (shapes[1], dl), (shapes[2], dx))
        want = torch_verdict(torch.clamp, *operands)
        got = rule_outcome(ops.clamp, *(TensorType(s, d) for s, d in operands))
        if want != got:
            mismatches.append(f"clamp({dx}, {dl}, {dx}): torch {want}, rule {got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize(("low", "high"), [(0, 1), (0.5, 1.5), (True, True), (-1, 2.5)])
def test_clamp_with_scalar_bounds_matches_torch(low: bool | int | float, high: bool | int | float) -> None:
    for dtype in DTYPES:
        want = torch_outcome(lambda: torch.clamp(torch.ones(3, dtype=dtype.torch), low, high))
        assert rule_outcome(lambda x: ops.clamp(x, low, high), TensorType((3,), dtype)) == want, dtype


def test_clamp_refusals_cite_their_constraints() -> None:
    with pytest.raises(TypeInferenceError, match=r"clamp: shapes \[3\] and \[2\] and \[\(\)\] do not broadcast.*\[clamp \(C1\)\]"):
        infer(lambda x, lo: ops.clamp(x, lo, 1.0), TensorType((3,), F32), TensorType((2,), F32))
    with pytest.raises(TypeInferenceError, match=r"clamp is not defined for bool.*\[clamp \(C2\)\]"):
        infer(lambda x: ops.clamp(x, False, True), TensorType((3,), DType.bool))


# -- attributes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ops.round(ops.as_expr(1.0), decimals=1.5), r"round decimals must be an int, got 1.5"),  # type: ignore[arg-type]
        (lambda: ops.elu(ops.as_expr(1.0), alpha=float("nan")), r"elu alpha must be finite, got nan"),
        (lambda: ops.celu(ops.as_expr(1.0), alpha=0.0), r"celu alpha must not be 0"),
        (lambda: ops.softplus(ops.as_expr(1.0), beta=0.0), r"softplus beta must not be 0"),
        (lambda: ops.leaky_relu(ops.as_expr(1.0), negative_slope="x"), r"leaky_relu negative_slope must be a number, got 'x'"),  # type: ignore[arg-type]
    ],
)
def test_malformed_attributes_are_refused_when_built(build: Callable[[], object], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        build()
