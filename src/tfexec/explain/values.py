"""Values as the explorer shows them: a few numbers and a small picture of the data.

``summary(value)`` is what the page stores for one tensor — shape, dtype, element count,
min/max/mean over the finite elements, NaN and ±Inf counts (true count for ``b1``) and a
*sample*: the tensor viewed as a matrix (every axis but the last flattened into rows; a
1-D tensor is one row), every ``row_step``-th row and ``col_step``-th column of it, at most
``MAX_ROWS`` × ``MAX_COLS`` cells, as little-endian float32 in base64 (exact for f32, and
about a third the size of decimal text). A tuple is a list of its fields' summaries.

``difference(a, b)`` compares the two routes' values of one node: bitwise equal (NaN
payloads included), or how they differ.
"""

import base64
import math
import struct

import torch

from tfexec.ir.dtypes import DType

MAX_ROWS = 24
MAX_COLS = 32

Summary = dict[str, object]


def as_data(value: object) -> object:
    """A route's value as plain data: a tensor, or a (nested) tuple of tensors."""
    elements = getattr(value, "elements", None)
    if isinstance(elements, tuple):
        return tuple(as_data(v) for v in elements)
    data = getattr(value, "data", None)
    if isinstance(data, torch.Tensor):
        return data
    if isinstance(value, tuple):
        return tuple(as_data(v) for v in value)
    return value


def summary(value: object, *, sample: bool = True) -> Summary:
    """The page's record of one value (see the module docstring)."""
    value = as_data(value)
    if isinstance(value, tuple):
        return {"fields": [summary(v, sample=sample) for v in value]}
    if not isinstance(value, torch.Tensor):
        return {"text": repr(value)}
    t = value.detach().cpu()
    out: Summary = {"shape": list(t.shape), "dtype": _dtype_name(t.dtype), "n": t.numel()}
    if t.numel() == 0:
        return out
    if t.dtype == torch.bool:
        out["true"] = int(t.sum().item())
        x = t.to(torch.float32)
    elif t.is_complex():
        return out
    else:
        x = t.to(torch.float64)
    finite = torch.isfinite(x)
    out["nan"] = int(torch.isnan(x).sum().item())
    out["posinf"] = int((x == math.inf).sum().item())
    out["neginf"] = int((x == -math.inf).sum().item())
    if bool(finite.any()):
        kept = x[finite]
        out["min"] = _number(kept.min().item())
        out["max"] = _number(kept.max().item())
        out["mean"] = _number(kept.mean().item())
    if t.dim() == 0:
        out["scalar"] = _number(x.item())
    elif sample:
        out.update(_sample(x))
    return out


def _sample(x: torch.Tensor) -> Summary:
    matrix = x.reshape(-1, x.shape[-1]) if x.dim() > 1 else x.reshape(1, -1)
    rows, cols = matrix.shape
    row_step, col_step = -(-rows // MAX_ROWS), -(-cols // MAX_COLS)
    cells = matrix[::row_step, ::col_step].to(torch.float32)
    flat = cells.flatten().tolist()
    raw = struct.pack(f"<{len(flat)}f", *flat)
    return {
        "rows": rows, "cols": cols, "row_step": row_step, "col_step": col_step,
        "sample_shape": list(cells.shape), "data": base64.b64encode(raw).decode("ascii"),
    }


def difference(a: object, b: object) -> Summary | None:
    """``None`` when ``a`` and ``b`` are bitwise equal, else how they differ."""
    a, b = as_data(a), as_data(b)
    if isinstance(a, tuple) or isinstance(b, tuple):
        if not (isinstance(a, tuple) and isinstance(b, tuple)) or len(a) != len(b):
            return {"reason": "one route's value is a tuple and the other's is not, or their lengths differ"}
        fields = [difference(x, y) for x, y in zip(a, b)]
        if all(f is None for f in fields):
            return None
        return {"reason": "fields differ: " + ", ".join(str(i) for i, f in enumerate(fields) if f is not None),
                "fields": fields}
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return None if repr(a) == repr(b) else {"reason": f"{a!r} vs {b!r}"}
    if a.dtype != b.dtype:
        return {"reason": f"dtypes differ: {_dtype_name(a.dtype)} vs {_dtype_name(b.dtype)}"}
    if a.shape != b.shape:
        return {"reason": f"shapes differ: {list(a.shape)} vs {list(b.shape)}"}
    if a.numel() == 0 or _bits(a).equal(_bits(b)):
        return None
    differs = _bits(a) != _bits(b)
    if differs.dim() > a.dim():  # several bytes per element: an element differs if any byte does
        differs = differs.any(dim=-1)
    count = int(differs.sum().item())
    first = [int(i) for i in differs.nonzero()[0].tolist()]
    out: Summary = {"reason": f"{count} of {a.numel()} element(s) differ", "count": count, "first": first,
                    "first_values": [_text(a[tuple(first)]), _text(b[tuple(first)])]}
    if a.is_floating_point():
        delta = (a.to(torch.float64) - b.to(torch.float64)).abs()
        finite = delta[torch.isfinite(delta)]
        if finite.numel():
            out["max_abs"] = _number(finite.max().item())
    return out


def _bits(t: torch.Tensor) -> torch.Tensor:
    """The bytes of ``t``'s elements (one extra trailing axis when an element has several)."""
    c = t.detach().cpu().contiguous()
    if c.element_size() == 1:
        return c.view(torch.uint8)
    return c.reshape(-1).view(torch.uint8).reshape(*c.shape, c.element_size())


def _text(t: torch.Tensor) -> str:
    """One element as text: enough digits to tell two float32 values apart, not float64's."""
    v = t.item()
    if isinstance(v, float) and t.dtype != torch.float64:
        return f"{v:.9g}"
    return repr(v)


def _number(v: float) -> float | int | None:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _dtype_name(dtype: torch.dtype) -> str:
    try:
        return DType.from_torch(dtype).value
    except (KeyError, ValueError, TypeError):
        return str(dtype).removeprefix("torch.")


__all__ = ["MAX_COLS", "MAX_ROWS", "Summary", "as_data", "difference", "summary"]
