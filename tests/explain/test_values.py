"""What the page records of a value (tfexec.explain.values): numbers over the finite
elements, special-value counts, an exact float32 sample, and bitwise comparison."""

import base64
import math
import struct

import torch

from tfexec.explain.values import MAX_COLS, MAX_ROWS, difference, summary


def _cells(s: dict[str, object]) -> list[float]:
    raw = base64.b64decode(str(s["data"]))
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def test_numbers_count_special_values_apart() -> None:
    t = torch.tensor([[1.0, float("nan"), 3.0], [float("inf"), -float("inf"), -1.0]])
    s = summary(t)
    assert (s["shape"], s["dtype"], s["n"]) == ([2, 3], "f32", 6)
    assert (s["min"], s["max"], s["mean"]) == (-1.0, 3.0, 1.0)
    assert (s["nan"], s["posinf"], s["neginf"]) == (1, 1, 1)


def test_the_sample_is_exact_float32_of_every_kth_row_and_column() -> None:
    t = torch.randn(3, 4, 70)  # 12 rows of 70 columns: every row, every 3rd column
    s = summary(t)
    assert (s["rows"], s["cols"], s["row_step"], s["col_step"]) == (12, 70, 1, 3)
    assert s["sample_shape"] == [12, 24] and len(_cells(s)) == 12 * 24
    assert _cells(s) == t.reshape(12, 70)[:, ::3].flatten().tolist()
    big = summary(torch.zeros(1000, 1000))
    assert big["sample_shape"][0] <= MAX_ROWS and big["sample_shape"][1] <= MAX_COLS  # type: ignore[index]


def test_scalars_bools_tuples_and_empty_tensors() -> None:
    assert summary(torch.tensor(2.5))["scalar"] == 2.5
    b = summary(torch.tensor([True, False, True]))
    assert b["true"] == 2 and b["dtype"] == "b1"
    t = summary((torch.zeros(2), (torch.ones(1),)))
    assert [f.get("n") for f in t["fields"]] == [2, None]  # type: ignore[union-attr]
    assert summary(torch.zeros(0, 3)) == {"shape": [0, 3], "dtype": "f32", "n": 0}
    assert "min" not in summary(torch.full((2,), math.nan))


def test_difference_is_bitwise() -> None:
    a = torch.tensor([1.0, float("nan"), 0.0])
    assert difference(a, a.clone()) is None  # NaN equals itself bit for bit
    d = difference(a, torch.tensor([1.0, float("nan"), -0.0]))  # -0.0 == 0.0, but not bitwise
    assert d is not None and d["count"] == 1 and d["first"] == [2]
    d = difference(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]))
    assert d is not None and d["max_abs"] == 0.5 and d["first_values"] == ["2", "2.5"]
    assert "dtypes differ" in str(difference(torch.zeros(2), torch.zeros(2, dtype=torch.float64)))
    assert "shapes differ" in str(difference(torch.zeros(2), torch.zeros(3)))
    assert difference((torch.zeros(1),), (torch.ones(1),)) is not None
    assert difference(torch.tensor(3), torch.tensor(3)) is None  # rank 0, eight bytes an element
