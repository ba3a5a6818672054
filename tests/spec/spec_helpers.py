"""Test-only ops and helpers for the evaluator-spec tests (tests/spec/).

``SpecCount(tag)`` is the identity on its one operand and counts its handler invocations
per tag; ``SpecProbe(tag)`` is the identity and records what its handler saw (the
``EvaluateContext``). Both are registered once, here, through the public
``register_eval``: the tests use them to prove how often, in which order and with which
context the evaluator dispatches.
"""

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

import torch
from shared_helpers import SameTypeOp

from tfexec import EvaluateContext, TensorValue, Value, f32, register_eval

COUNTS: Counter[str] = Counter()
PROBES: dict[str, list[EvaluateContext]] = {}
ORDER: list[str] = []
_SCALAR = f32[()]


@dataclass(frozen=True, slots=True)
class SpecCount(SameTypeOp):
    """Identity on one operand; each handler call adds one to ``COUNTS[tag]``."""

    name: ClassVar[str] = "spec_count"
    tag: str = ""


@dataclass(frozen=True, slots=True)
class SpecProbe(SameTypeOp):
    """Identity on its first operand (any number of operands); records the context it saw."""

    name: ClassVar[str] = "spec_probe"
    min_args: ClassVar[int] = 0
    max_args: ClassVar[int | None] = None
    tag: str = ""


@register_eval(SpecCount)
def _count(ctx: EvaluateContext) -> Value:
    op = ctx.op
    assert isinstance(op, SpecCount)
    COUNTS[op.tag] += 1
    ORDER.append(op.tag)
    return ctx.args[0]


@register_eval(SpecProbe)
def _probe(ctx: EvaluateContext) -> Value:
    op = ctx.op
    assert isinstance(op, SpecProbe)
    PROBES.setdefault(op.tag, []).append(ctx)
    ORDER.append(op.tag)
    if ctx.args:
        return ctx.args[0]
    return TensorValue(torch.zeros((), device=ctx.device), _SCALAR)


def reset() -> None:
    """Clear every counter and record (call at the start of a test)."""
    COUNTS.clear()
    PROBES.clear()
    ORDER.clear()


def tensor(out: object) -> torch.Tensor:
    """``out`` (an ``evaluate`` result) as the single tensor it must be."""
    assert isinstance(out, torch.Tensor), f"expected a tensor, got {type(out).__name__}"
    return out


def tensors(out: object) -> tuple[torch.Tensor, ...]:
    """``out`` (an ``evaluate`` result) as the flat tuple of tensors it must be."""
    assert isinstance(out, tuple), f"expected a tuple, got {type(out).__name__}"
    assert all(isinstance(t, torch.Tensor) for t in out), [type(t).__name__ for t in out]
    return out
