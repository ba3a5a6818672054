"""Type rules of ``full`` and ``arange``, checked against ``torch.full`` and
``torch.arange`` on CPU, including which fill values torch accepts for which dtype."""

import math

import pytest
import torch

from tfexec import DimVar, DType, TensorType, TypeInferenceError, ops

from ir.op_helpers import DTYPES, infer_call

B = DimVar("B")


VALUES: list[bool | int | float] = [0, 1, -1, 255, 300, -129, 2**31, 2**63 - 1, 1.5, -2.7, 1e10, 70000.0, 1e40,
                                    math.inf, -math.inf, math.nan, True, False]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_full_accepts_exactly_the_values_torch_accepts(dtype: DType) -> None:
    mismatches = []
    for value in VALUES:
        try:
            torch.full((2,), value, dtype=dtype.torch)
            torch_ok = True
        except (RuntimeError, OverflowError):
            torch_ok = False
        try:
            t = infer_call(ops.full(shape=(2, B), value=value, dtype=dtype))
            assert t == TensorType((2, B), dtype)
            rule_ok = True
        except TypeInferenceError as err:
            assert f"full (C1): value {value!r} does not fit dtype {dtype}" in str(err)
            rule_ok = False
        if torch_ok != rule_ok:
            mismatches.append(f"full {value!r} as {dtype}: torch {'ok' if torch_ok else 'error'}, rule {'ok' if rule_ok else 'error'}")
    assert not mismatches, "\n".join(mismatches)


def test_full_examples() -> None:
    assert infer_call(ops.full(shape=(), value=1.5, dtype=DType.int32)) == TensorType((), DType.int32)  # truncates, as torch
    assert infer_call(ops.full(shape=(0, 3), value=True, dtype=DType.float16)) == TensorType((0, 3), DType.float16)
    with pytest.raises(TypeInferenceError, match=r"^full\(shape=\(2,\), value=300, dtype=i8\): full \(C1\): value 300 does not fit dtype i8"):
        infer_call(ops.full(shape=(2,), value=300, dtype=DType.int8))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_arange_matches_torch(dtype: DType) -> None:
    try:
        want: TensorType | None = TensorType((5,), DType.from_torch(torch.arange(5, dtype=dtype.torch).dtype))
    except RuntimeError:
        want = None
    if want is None:
        with pytest.raises(TypeInferenceError, match=r"arange needs an integer or floating dtype, found b1"):
            infer_call(ops.arange(extent=5, dtype=dtype))
    else:
        assert infer_call(ops.arange(extent=5, dtype=dtype)) == want
        assert infer_call(ops.arange(extent=B * 2, dtype=dtype)) == TensorType((B * 2,), dtype)


def test_arange_default_dtype_is_int64() -> None:
    assert infer_call(ops.arange(extent=0)) == TensorType((0,), DType.int64)
    assert torch.arange(0).dtype == torch.int64
