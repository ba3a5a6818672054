"""Test-only ops with plain ``register_eval`` handlers, drawn by ``programs()``.

The catalogue's ops all have value rules; these give random programs calls that both
routes make through ``apply_handler`` instead (the direct route at each dispatch, the
lowered graph from a ``HandlerCall`` node), each testing one part of the handler contract:

* ``testing_pass`` returns its operand object itself (a tensor, a laid-out tensor, a weak
  scalar or a tuple): the call's value is an ordinary value carrying the layout
  ``value_layout`` gives, whatever the handler returned;
* ``testing_scale`` multiplies by a second operand, usually a weak Python scalar it reads
  from ``.scalar``;
* ``testing_split`` returns a tuple (two pieces along axis 0);
* ``testing_probe`` adds what its context tells it — the operand's layout and the scope's
  dim sizes — so a route that told a handler less would compute another value;
* ``testing_fail`` raises (the failing-program mode plants it).

Importing ``tfexec.testing`` registers them, once, in the global ``eval_registry``.
"""

from dataclasses import dataclass
from typing import ClassVar

from tfexec import (
    DType,
    EvaluateContext,
    Layout,
    Op,
    Operand,
    ShardLayout,
    TensorType,
    TensorValue,
    TupleType,
    TupleValue,
    Type,
    TypeRuleError,
    Value,
    register_eval,
)
from tfexec.ir.ops.elementwise import Mul

FAIL_MESSAGE = "testing_fail: a planted failure"
"""What ``testing_fail``'s handler raises (the call's ``EvalError`` ends with it)."""


def _without_layouts(t: Type) -> Type:
    """``t`` with every layout removed (a handler's tuple result carries none)."""
    if isinstance(t, TupleType):
        return TupleType(tuple(_without_layouts(f) for f in t.fields))
    return t.with_layout(None)


def _tensor(op: Op, args: tuple[Operand, ...], index: int = 0) -> TensorType:
    t = args[index].type
    if not isinstance(t, TensorType):
        raise TypeRuleError(f"{op.name}: operand {index} must be a tensor, found tuple {t}")
    return t


@dataclass(frozen=True, slots=True)
class PassThrough(Op):
    """Returns its operand (any value) as it is.

    Type rule: the operand's type (a tuple's without layouts: a tuple operand carries none to
    the call's value). Value rule: ``ctx.args[0]``, the very operand object.
    """

    name: ClassVar[str] = "testing_pass"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1

    def infer(self, args: tuple[Operand, ...]) -> Type:
        t = args[0].type
        return t if isinstance(t, TensorType) else _without_layouts(t)

    def value_layout(self, operands: "tuple[Layout | ShardLayout | None, ...]") -> "Layout | ShardLayout | None":
        return operands[0] if operands else None


@register_eval(PassThrough)
def _pass(ctx: EvaluateContext) -> Value:
    return ctx.args[0]


@dataclass(frozen=True, slots=True)
class ScaleBy(Op):
    """``x * s``, ``s`` usually a weak Python scalar (read from ``.scalar``).

    Type rule: ``mul``'s. Value rule: ``x.data * s.scalar`` (``s.data`` when ``s`` is not weak).
    """

    name: ClassVar[str] = "testing_scale"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2

    def infer(self, args: tuple[Operand, ...]) -> Type:
        if args[0].weak:
            raise TypeRuleError(f"{self.name}: operand 0 must not be a Python scalar")
        return Mul().infer(args)


@register_eval(ScaleBy)
def _scale(ctx: EvaluateContext) -> Value:
    x, s = ctx.args
    assert isinstance(x, TensorValue) and isinstance(s, TensorValue)
    data = x.data * (s.scalar if s.scalar is not None else s.data)
    return TensorValue(data, TensorType(tuple(data.shape), DType.from_torch(data.dtype)))


@dataclass(frozen=True, slots=True)
class SplitAt(Op):
    """The two pieces ``(x[:at], x[at:])`` along axis 0.

    Type rule: axis 0 of ``x`` is static and ``0 < at < x.shape[0]``; two tensors of
    ``x``'s dtype, without layout. Value rule: two views of ``x``.
    """

    name: ClassVar[str] = "testing_split"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    at: int = 1

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x = _tensor(self, args)
        if x.rank == 0 or not isinstance(x.shape[0], int) or not 0 < self.at < x.shape[0]:
            raise TypeRuleError(f"{self.name}: needs a static axis 0 longer than {self.at}, found {x}")
        rest = x.shape[1:]
        return TupleType((TensorType((self.at, *rest), x.dtype), TensorType((x.shape[0] - self.at, *rest), x.dtype)))


@register_eval(SplitAt)
def _split(ctx: EvaluateContext) -> Value:
    (x,) = ctx.args
    op = ctx.op
    assert isinstance(x, TensorValue) and isinstance(op, SplitAt)
    pieces = (x.data[: op.at], x.data[op.at :])
    return TupleValue(tuple(TensorValue(p, TensorType(tuple(p.shape), x.type.dtype)) for p in pieces))


def layout_code(layout: "Layout | ShardLayout | None") -> int:
    """A number that tells layouts apart: 0 for none, ``10 + rank`` for a ``Layout``,
    ``20 + 2 * splits + (1 if inner layout)`` for a ``ShardLayout``."""
    if layout is None:
        return 0
    if isinstance(layout, Layout):
        return 10 + len(layout.shape)
    return 20 + 2 * len(layout.splits) + (1 if layout.layout is not None else 0)


@dataclass(frozen=True, slots=True)
class Probe(Op):
    """``x`` plus what the handler is told: ``layout_code`` of the operand's layout plus the
    sum of the scope's dim sizes.

    Type rule: ``x``'s type without layout; ``x`` is not bool. Value rule: ``x.data + n``.
    """

    name: ClassVar[str] = "testing_probe"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1

    def infer(self, args: tuple[Operand, ...]) -> Type:
        x = _tensor(self, args)
        if x.dtype is DType.bool or args[0].weak:
            raise TypeRuleError(f"{self.name}: needs a non-bool tensor, found {x}")
        return x.with_layout(None)


@register_eval(Probe)
def _probe(ctx: EvaluateContext) -> Value:
    (x,) = ctx.args
    assert isinstance(x, TensorValue)
    data = x.data + (layout_code(x.type.layout) + sum(ctx.dim_bindings.values()))
    return TensorValue(data, TensorType(tuple(data.shape), x.type.dtype))


@dataclass(frozen=True, slots=True)
class AlwaysFails(Op):
    """Raises whenever it runs.

    Type rule: the operand's type without layout. Value rule: raises ``RuntimeError(FAIL_MESSAGE)``.
    """

    name: ClassVar[str] = "testing_fail"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1

    def infer(self, args: tuple[Operand, ...]) -> Type:
        return _tensor(self, args).with_layout(None)


@register_eval(AlwaysFails)
def _fail(ctx: EvaluateContext) -> Value:
    raise RuntimeError(FAIL_MESSAGE)


HANDLER_OPS: tuple[type[Op], ...] = (PassThrough, ScaleBy, SplitAt, Probe, AlwaysFails)
"""Every op class this module registers."""
