"""Run-time checks of index tensors shared by the indexing value rules: every index in
``0 .. size - 1``, never a wrap-around (hir.md §ops)."""

import torch

from tfexec.errors import EvalError


def check_in_range(op_name: str, label: str, index: torch.Tensor, size: int, what: str) -> None:
    """Every element of ``index`` lies in ``0 .. size - 1``, else an ``EvalError`` citing ``label``."""
    if index.numel() == 0:
        return
    if index.device.type == "meta":
        raise EvalError(f"{op_name} indices are on device meta, which holds no data: they cannot be checked")
    bounds = torch.aminmax(index)  # one pass for both ends
    low, high = int(bounds.min.item()), int(bounds.max.item())
    if low < 0 or high >= size:
        bad = low if low < 0 else high
        raise EvalError(
            f"{op_name}: index {bad} is out of range for {what} of length {size}"
            f" (expected 0..{size - 1}; indices never wrap around) [{op_name} ({label})]"
        )
