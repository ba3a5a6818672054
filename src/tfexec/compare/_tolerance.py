"""Per-dtype tolerances and the comparison of one expected tensor with one actual tensor.

A float element agrees when ``|actual - expected| <= atol + rtol * |expected|`` (torch's
``isclose``), NaN agrees with NaN and an infinity only with the same infinity; integers
and booleans agree only when equal. The defaults are ``torch.testing.assert_close``'s, so
a comparison here and one there draw the line in the same place.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass

import torch

from tfexec.ir.dtypes import DType


@dataclass(frozen=True, slots=True)
class Tolerance:
    """How far an actual float value may be from the expected one: ``atol + rtol * |expected|``."""

    rtol: float
    atol: float

    def __post_init__(self) -> None:
        if not all(math.isfinite(v) and v >= 0 for v in (self.rtol, self.atol)):
            raise ValueError(f"tolerances must be finite numbers >= 0, got rtol={self.rtol} atol={self.atol}")

    def __str__(self) -> str:
        return "exact" if self.rtol == 0 and self.atol == 0 else f"rtol={self.rtol:g} atol={self.atol:g}"


EXACT = Tolerance(0.0, 0.0)

DEFAULT_TOLERANCES: Mapping[DType, Tolerance] = {
    DType.float64: Tolerance(1e-7, 1e-7),
    DType.float32: Tolerance(1.3e-6, 1e-5),
    DType.float16: Tolerance(1e-3, 1e-5),
    DType.bfloat16: Tolerance(1.6e-2, 1e-5),
}
"""The float tolerances ``torch.testing.assert_close`` uses; every other dtype is exact."""


def resolve_tolerances(overrides: "Mapping[DType, Tolerance] | None" = None) -> dict[DType, Tolerance]:
    """The tolerance of every dtype: the defaults, with ``overrides`` replacing them per dtype."""
    table = {d: DEFAULT_TOLERANCES.get(d, EXACT) for d in DType}
    for dtype, tol in (overrides or {}).items():
        if not isinstance(dtype, DType) or not isinstance(tol, Tolerance):
            raise TypeError(f"tolerances map a DType to a Tolerance, got {dtype!r}: {tol!r}")
        table[dtype] = tol
    return table


@dataclass(frozen=True, slots=True)
class TensorVerdict:
    """One tensor pair's outcome: ``reason`` is None when they agree; ``max_abs_diff`` is the
    largest finite ``|actual - expected|`` (None when dtype or shape already differ)."""

    reason: str | None
    max_abs_diff: float | None


def compare_tensors(expected: torch.Tensor, actual: torch.Tensor, tolerance: Tolerance) -> TensorVerdict:
    """Compare ``actual`` with ``expected``: same dtype, same shape, values within ``tolerance``."""
    if expected.dtype != actual.dtype:
        return TensorVerdict(f"dtype differs: expected {_dtype(expected)}, got {_dtype(actual)}", None)
    if tuple(expected.shape) != tuple(actual.shape):
        return TensorVerdict(f"shape differs: expected {list(expected.shape)}, got {list(actual.shape)}", None)
    if expected.device.type == "meta" or actual.device.type == "meta":
        return TensorVerdict("a tensor on the meta device has no values to compare", None)
    e, a = expected.detach().cpu(), actual.detach().cpu()
    if e.numel() == 0:
        return TensorVerdict(None, 0.0)
    if e.dtype.is_floating_point:
        e64, a64 = e.double(), a.double()
        close = torch.isclose(a64, e64, rtol=tolerance.rtol, atol=tolerance.atol, equal_nan=True)
        diff = (a64 - e64).abs()
    else:
        close = torch.eq(a, e)
        diff = (a.long() - e.long()).abs().double() if e.dtype != torch.bool else (a != e).double()
    finite = diff[torch.isfinite(diff)]
    worst = float(finite.max()) if finite.numel() else 0.0
    if bool(close.all()):
        return TensorVerdict(None, worst)
    bad = ~close
    first = [int(i) for i in bad.nonzero()[0]]
    where = tuple(first)
    n_bad, n = int(bad.sum()), e.numel()
    limit = str(tolerance) if e.dtype.is_floating_point else "exact"
    reason = (
        f"{n_bad} of {n} element(s) beyond {limit}; first at {list(where)}: "
        f"expected {e[where].item()!r}, got {a[where].item()!r} (max |Δ| {worst:.3g})"
    )
    return TensorVerdict(reason, worst)


def _dtype(t: torch.Tensor) -> str:
    try:
        return DType.from_torch(t.dtype).short
    except TypeError:
        return str(t.dtype).removeprefix("torch.")
