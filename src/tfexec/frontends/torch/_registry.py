"""The table of ATen translation rules, keyed by ``OpOverload`` (``aten.add.Tensor``).

``register("add.Tensor", "add.Scalar")`` registers a rule for those overloads of
``torch.ops.aten``; an overload this torch does not have is skipped (the table only
lists what exists). An overload that writes in place (``copy_``) cannot be registered: the
import functionalizes such writes away (``_mutation``) and refuses any left. ``RULES`` is read by the translator; a node whose target has no rule
is an unsupported op.
"""

from collections.abc import Callable
from typing import TypeAlias

import torch

from tfexec.frontends.torch._context import NodeContext, Result

Rule: TypeAlias = Callable[[NodeContext], Result]

RULES: dict[object, Rule] = {}
"""``OpOverload -> rule``; filled by ``register`` when the rule modules are imported."""


def aten(name: str) -> object | None:
    """``torch.ops.aten.<packet>.<overload>`` for ``"packet.overload"``, or None if absent."""
    packet_name, _, overload = name.partition(".")
    try:
        packet = getattr(torch.ops.aten, packet_name)
        found: object = getattr(packet, overload or "default")
        return found
    except (AttributeError, RuntimeError):
        return None


def register(*names: str) -> Callable[[Rule], Rule]:
    """Register the decorated rule for each ATen overload in ``names``."""

    def decorate(rule: Rule) -> Rule:
        for name in names:
            target = aten(name)
            if target is not None:
                if getattr(target, "_schema").is_mutable:
                    raise RuntimeError(f"aten.{name} writes in place: functionalization removes it, no rule may translate it")
                if target in RULES:
                    raise RuntimeError(f"two translation rules for aten.{name}")
                RULES[target] = rule
        return rule

    return decorate


def op_name(target: object) -> str:
    """How an FX call target is named in messages: ``aten.cumsum.default``, ``operator.add``."""
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    module = getattr(target, "__module__", None)
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or repr(target)
    if module in ("_operator", "operator"):
        module = "operator"
    return f"{module}.{name}" if module else str(name)
