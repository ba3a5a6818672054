"""Programs the import refuses by kind, with the reason: data-dependent values and complex numbers.

* ``.item()``, ``.tolist()``, ``int(t)``: a tensor's value read as a Python number. An HIR
  program's sizes and control flow are fixed by its inputs' shapes, so a number that
  depends on the data cannot steer them; torch.export either fails on it (a guard on a
  data-dependent value) or keeps it as an unbacked symbol (``aten.item``,
  ``_local_scalar_dense``) that everything after it depends on. Refused once, at the line
  that reads the value; the nodes that depend on it are not listed again.
* complex numbers (``view_as_complex``, ``polar``, a complex tensor anywhere): HIR's dtypes
  are real, and modelling a complex value as pairs of reals would be a different program.
"""

import traceback
from typing import Any

import torch

from tfexec.frontends.torch._provenance import user_frame

DATA_DEPENDENT_OPS = frozenset({"aten.item.default", "aten._local_scalar_dense.default"})
"""The ops that read a tensor's value as a Python number."""

DATA_DEPENDENT = (
    "it reads a tensor's value as a Python number or truth value (.item(), .tolist(), int(t), if t: ...): "
    "data-dependent, and an "
    "HIR program's sizes and control flow depend only on its inputs' shapes; compute with tensors instead "
    "(torch.where, masks, clamp)"
)

COMPLEX_OPS = frozenset({
    "aten.view_as_complex.default", "aten.view_as_real.default", "aten.polar.default", "aten.complex.default",
    "aten.real.default", "aten.imag.default", "aten.angle.default", "aten.conj.default", "aten._conj.default",
    "aten.conj_physical.default", "aten.resolve_conj.default",
})

COMPLEX = (
    "complex numbers have no HIR dtype (HIR's dtypes are real; a complex value modelled as pairs of reals would be "
    "another program): refused (see docs/against-torch.md); write the rotation with real cos/sin (rotate_half)"
)


def refusal(name: str, val: object) -> str | None:
    """The reason a node of op ``name`` whose value is ``val`` is refused by kind, or None."""
    if name in DATA_DEPENDENT_OPS:
        return DATA_DEPENDENT
    if name in COMPLEX_OPS or _is_complex(val):
        return COMPLEX
    return None


def _is_complex(val: object) -> bool:
    if isinstance(val, torch.Tensor):
        return val.dtype.is_complex
    if isinstance(val, (list, tuple)):
        return any(_is_complex(v) for v in val)
    return False


def data_dependent_export(exc: BaseException) -> str | None:
    """For torch.export failing on a guard over a data-dependent value, the one-line refusal
    naming the user's line; None for any other failure."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if "DataDependent" not in type(exc).__name__ and "data-dependent expression" not in first:
        return None
    frame = user_frame("".join(traceback.format_tb(exc.__traceback__)))
    where = f"{frame[0]}:{frame[1]}: " if frame is not None else ""
    text = f"    # {frame[2].strip()}" if frame is not None and frame[2].strip() else ""
    return f"cannot import the program: {where}{DATA_DEPENDENT}{text}"


def reads_any(node: Any, nodes: set[Any]) -> bool:
    """Whether FX ``node`` takes any of ``nodes`` as an argument."""
    found: list[Any] = []
    torch.fx.node.map_arg((node.args, node.kwargs), found.append)
    return any(n in nodes for n in found)
