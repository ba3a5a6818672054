"""types §1: ``DType`` ↔ ``torch.dtype`` both ways, and the short spellings that build types."""

import ast

import pytest
import torch

import tfexec
from tfexec import DimVar, DType, TensorType
from tfexec.ir.types import DTypeSpelling

_PAIRS = [
    (DType.bool, torch.bool, "b1"),
    (DType.int8, torch.int8, "i8"),
    (DType.int16, torch.int16, "i16"),
    (DType.int32, torch.int32, "i32"),
    (DType.int64, torch.int64, "i64"),
    (DType.uint8, torch.uint8, "u8"),
    (DType.float16, torch.float16, "f16"),
    (DType.bfloat16, torch.bfloat16, "bf16"),
    (DType.float32, torch.float32, "f32"),
    (DType.float64, torch.float64, "f64"),
]


@pytest.mark.parametrize(("dtype", "torch_dtype", "short"), _PAIRS)
def test_dtype_maps_to_torch_both_ways(dtype: DType, torch_dtype: torch.dtype, short: str) -> None:
    assert dtype.torch is torch_dtype
    assert DType.from_torch(torch_dtype) is dtype
    assert DType.from_short(short) is dtype
    assert dtype.short == short == str(dtype)
    assert repr(dtype) == f"DType.{dtype.name}"


def test_every_member_is_covered_and_the_mapping_is_one_to_one() -> None:
    assert {d for d, _, _ in _PAIRS} == set(DType)
    assert len({d.torch for d in DType}) == len(DType)


@pytest.mark.parametrize(("dtype", "torch_dtype", "short"), _PAIRS)
def test_short_spelling_is_exported_and_builds_a_tensor_type(dtype: DType, torch_dtype: torch.dtype, short: str) -> None:
    spelling = getattr(tfexec, short)
    assert isinstance(spelling, DTypeSpelling)
    assert spelling.dtype is dtype
    assert repr(spelling) == short
    assert spelling[4] == TensorType((4,), dtype)
    assert str(spelling[2, 3]) == f"{short}[2, 3]"


def test_short_spelling_with_symbolic_and_scalar_shapes() -> None:
    b = DimVar("B")
    assert tfexec.f32[b, 64] == TensorType((b, 64), DType.float32)
    scalar = tfexec.i64[()]
    assert scalar == TensorType((), DType.int64)
    assert scalar.rank == 0
    assert str(scalar) == "i64[()]"
    ast.parse(str(scalar), mode="eval")


def test_unsupported_torch_dtype_is_refused_with_the_supported_list() -> None:
    with pytest.raises(TypeError, match=r"torch dtype torch.complex64 has no HIR DType; supported: .*torch.float32"):
        DType.from_torch(torch.complex64)


def test_unknown_short_spelling_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown dtype 'f8'; expected one of b1, i8, .*f64"):
        DType.from_short("f8")


def test_floating_and_integral_classification() -> None:
    assert {d for d in DType if d.is_floating} == {DType.float16, DType.bfloat16, DType.float32, DType.float64}
    assert {d for d in DType if d.is_integral} == {DType.int8, DType.int16, DType.int32, DType.int64, DType.uint8}
    assert not DType.bool.is_floating and not DType.bool.is_integral


def test_spelling_with_a_bad_dim_is_a_construction_error() -> None:
    with pytest.raises(tfexec.IRConstructionError, match=r"TensorType.shape entries must be int, DimVar or DimExpr, got 'B'"):
        tfexec.f32["B"]  # type: ignore[index]
    with pytest.raises(tfexec.IRConstructionError, match=r"TensorType.shape has a negative size -1"):
        tfexec.f32[-1]
