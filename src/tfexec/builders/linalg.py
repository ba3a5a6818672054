"""The builder of ``linear`` (re-exported by ``tfexec.ops``)."""

from tfexec.builders.operands import Operand, apply
from tfexec.ir.expr import Call
from tfexec.ir.ops.linalg import Linear
from tfexec.ir.span import Span


def linear(x: Operand, weight: Operand, bias: Operand | None = None, *, span: Span | None = None) -> Call:
    """``F.linear(x, weight, bias)``: ``x [..., in]`` times ``weight [out, in]`` transposed, plus
    ``bias [out]``, in torch's one fused call."""
    operands = (x, weight) if bias is None else (x, weight, bias)
    return apply(Linear(), *operands, span=span)


__all__ = ["linear"]
