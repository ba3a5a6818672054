"""The ``Op`` base class (core-ir §3) and what type rules receive.

An ``Op`` subclass is one operation kind; an instance holds one call's static attributes
as frozen dataclass fields. Each subclass states its text spelling (``name``), its operand
count (``arity``) and its type rule (``infer``). Value rules live apart, in
``tfexec.semantics.rules``, registered against the class.

An op class's docstring is its reference entry (``docs/ops.md``, ``tfexec ops NAME``): a
summary, then ``Type rule:``, ``Value rule:``, ``Constraints:`` with labelled items
``(C1)``…, ``Example:`` and ``Refused (Cn):`` programs. The convention is described in
``tfexec.docs``. A check of constraint ``Cn`` cites it in its message as ``op (Cn)``:
``matmul (C1): contracted sizes differ …``, or, where a message's older wording is kept,
at its end: ``… [softmax (C2)]`` (``cite``).
"""

from dataclasses import dataclass, fields
from collections.abc import Callable
from typing import ClassVar, NamedTuple, TypeAlias

import torch

from tfexec.errors import TypeRuleError as TypeRuleError
from tfexec.ir.types import Layout, ShardLayout, TensorType, Type

Reference: TypeAlias = Callable[..., torch.Tensor] | None
"""A torch function an op computes: operands positional, the op's attributes as keywords."""




class Operand(NamedTuple):
    """What a type rule knows of one operand: its type, whether it is a weak Python scalar,
    and its static integer value when it is a constant (slice starts, dim arithmetic)."""

    type: Type
    weak: bool = False
    static_int: int | None = None


@dataclass(frozen=True, slots=True)
class Op:
    """Base of every operation kind. Subclasses are frozen dataclasses of static attributes.

    A subclass that declares nothing gets its class name as ``name`` and takes any number of
    operands; declare ``min_args``/``max_args`` to have the count checked (by inference and
    by both evaluation routes, before any value rule runs).
    """

    name: ClassVar[str] = "Op"
    """The text-format spelling and builder name (``add``, ``reduce``); the class name when
    a subclass does not declare one."""
    min_args: ClassVar[int] = 0
    max_args: ClassVar[int | None] = None
    """Operand count bounds (``max_args=None``: any number)."""
    reference: ClassVar[Reference] = None
    """The torch function the op is, when it is one (``torch.floor``, ``F.elu``): called with the
    operands and the op's attributes as keywords, it gives the value. Read it from the class.
    Nothing computes with it; the tests check the value and type rules against it on the
    docstring's examples, so an op that names one needs no test entry of its own."""

    def __init_subclass__(cls) -> None:
        # (no super() call: dataclass(slots=True) rebuilds the class, which breaks super()'s cell)
        if "name" not in cls.__dict__:
            cls.name = cls.__name__

    def infer(self, args: tuple[Operand, ...]) -> Type:
        """Return the result type for operands of these types, or raise ``TypeRuleError``."""
        raise TypeRuleError(f"op {self.name or type(self).__name__} has no type rule")

    def value_layout(self, operands: "tuple[Layout | ShardLayout | None, ...]") -> "Layout | ShardLayout | None":
        """The layout of this op's evaluated value, from its operands' layouts (default: none)."""
        return None

    def attributes(self) -> dict[str, object]:
        """The static attributes as ``name -> value`` (for printing and errors)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def arity_error(self, count: int) -> str | None:
        """A message when ``count`` operands do not fit this op, else None."""
        lo, hi = self.min_args, self.max_args
        if count < lo or (hi is not None and count > hi):
            want = f"{lo}" if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
            return f"{self.name} takes {want} operand(s), got {count}"
        return None


def tensor_operand(op: Op, args: tuple[Operand, ...], index: int, what: str = "operand") -> TensorType:
    """The tensor type of operand ``index``, or a ``TypeRuleError`` if it is a tuple."""
    t = args[index].type
    if not isinstance(t, TensorType):
        raise TypeRuleError(f"{op.name} {what} {index} must be a tensor, found tuple {t}")
    return t


def cite(op_name: str, label: str | None) -> str:
    """The suffix by which a message cites constraint ``label`` of ``op_name``: `` [softmax (C2)]``
    (empty without a label)."""
    return f" [{op_name} ({label})]" if label else ""


def normalize_axis(op: Op, axis: int, rank: int, label: str | None = None) -> int:
    """Map a possibly negative axis into ``[0, rank)`` or raise a ``TypeRuleError`` (citing
    constraint ``label`` of ``op`` when given)."""
    if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
        raise TypeRuleError(
            f"{op.name}: axis {axis} is out of range for rank {rank} (valid: {-rank}..{rank - 1}){cite(op.name, label)}"
        )
    return axis % rank
