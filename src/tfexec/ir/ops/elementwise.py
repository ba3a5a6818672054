"""Elementwise ops: binary (broadcasting), comparisons, logical, unary, ``cast``, ``where``.

Dtype rules are torch's (CPU kernels): arithmetic promotes as ``torch.result_type``;
``div`` is true division (integers give the default float); comparisons and logical ops
give ``bool``; the float unary ops give the default float for integer input; ``silu`` and
``gelu`` accept floating input only; ``neg``, ``abs`` and ``relu`` reject ``bool``; ``sub``
rejects a ``bool`` operand on either side (a Python ``True`` included), as torch does.

Kept differences from torch (the rule is stricter, never looser): ``pow`` with a ``bool``
result is refused, though torch's scalar fast paths accept ``bool ** True`` and
``bool ** False``; ``where`` needs a ``bool`` condition, where torch still accepts a
deprecated ``uint8`` one.
"""

from dataclasses import dataclass
from typing import ClassVar, Literal

from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Op, Operand, TypeRuleError
from tfexec.ir.ops.promotion import broadcast_shapes, default_float, promote, tensor_args
from tfexec.ir.types import TensorType, Type

BinaryKind = Literal["arith", "no_bool_operand", "no_bool_result", "div", "compare", "logical"]


def _shown(arg: Operand) -> str:
    """An operand's type as an error shows it (a weak Python scalar says so)."""
    return f"Python scalar {arg.type}" if arg.weak else str(arg.type)


@dataclass(frozen=True, slots=True)
class BinaryOp(Op):
    """Base of broadcasting binary ops; ``kind`` picks the dtype rule."""

    kind: ClassVar[BinaryKind] = "arith"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2

    def infer(self, args: tuple[Operand, ...]) -> Type:
        a, b = tensor_args(self.name, args)
        shape = broadcast_shapes(self.name, a.shape, b.shape)
        if self.kind in ("compare", "logical"):
            return TensorType(shape, DType.bool)
        dtype = promote((a, args[0].weak), (b, args[1].weak))
        bool_operand = self.kind == "no_bool_operand" and DType.bool in (a.dtype, b.dtype)
        if bool_operand or (self.kind == "no_bool_result" and dtype is DType.bool):
            raise TypeRuleError(
                f"{self.name} is not defined for bool operands (torch rejects it), found {_shown(args[0])} and "
                f"{_shown(args[1])}; cast to an integer or floating dtype first"
            )
        if self.kind == "div" and not dtype.is_floating:
            dtype = default_float()
        return TensorType(shape, dtype)


@dataclass(frozen=True, slots=True)
class Add(BinaryOp):
    """``torch.add``: elementwise sum with broadcasting and torch promotion."""

    name: ClassVar[str] = "add"


@dataclass(frozen=True, slots=True)
class Sub(BinaryOp):
    """``torch.sub``: elementwise difference; not defined when either operand is bool."""

    name: ClassVar[str] = "sub"
    kind: ClassVar[BinaryKind] = "no_bool_operand"


@dataclass(frozen=True, slots=True)
class Mul(BinaryOp):
    """``torch.mul``: elementwise product."""

    name: ClassVar[str] = "mul"


@dataclass(frozen=True, slots=True)
class Div(BinaryOp):
    """``torch.div``: true division; integer operands give the default float dtype."""

    name: ClassVar[str] = "div"
    kind: ClassVar[BinaryKind] = "div"


@dataclass(frozen=True, slots=True)
class Pow(BinaryOp):
    """``torch.pow``: elementwise power; not defined for a bool result. Integers to a
    negative Python-integer power are an error at run time (torch's)."""

    name: ClassVar[str] = "pow"
    kind: ClassVar[BinaryKind] = "no_bool_result"


@dataclass(frozen=True, slots=True)
class Maximum(BinaryOp):
    """``torch.maximum``: elementwise maximum (NaN propagates)."""

    name: ClassVar[str] = "maximum"


@dataclass(frozen=True, slots=True)
class Minimum(BinaryOp):
    """``torch.minimum``: elementwise minimum (NaN propagates)."""

    name: ClassVar[str] = "minimum"


@dataclass(frozen=True, slots=True)
class Eq(BinaryOp):
    """``torch.eq`` → bool."""

    name: ClassVar[str] = "eq"
    kind: ClassVar[BinaryKind] = "compare"


@dataclass(frozen=True, slots=True)
class Ne(BinaryOp):
    """``torch.ne`` → bool."""

    name: ClassVar[str] = "ne"
    kind: ClassVar[BinaryKind] = "compare"


@dataclass(frozen=True, slots=True)
class Lt(BinaryOp):
    """``torch.lt`` → bool."""

    name: ClassVar[str] = "lt"
    kind: ClassVar[BinaryKind] = "compare"


@dataclass(frozen=True, slots=True)
class Le(BinaryOp):
    """``torch.le`` → bool."""

    name: ClassVar[str] = "le"
    kind: ClassVar[BinaryKind] = "compare"


@dataclass(frozen=True, slots=True)
class Gt(BinaryOp):
    """``torch.gt`` → bool."""

    name: ClassVar[str] = "gt"
    kind: ClassVar[BinaryKind] = "compare"


@dataclass(frozen=True, slots=True)
class Ge(BinaryOp):
    """``torch.ge`` → bool."""

    name: ClassVar[str] = "ge"
    kind: ClassVar[BinaryKind] = "compare"


@dataclass(frozen=True, slots=True)
class LogicalAnd(BinaryOp):
    """``torch.logical_and`` → bool (nonzero is true)."""

    name: ClassVar[str] = "logical_and"
    kind: ClassVar[BinaryKind] = "logical"


@dataclass(frozen=True, slots=True)
class LogicalOr(BinaryOp):
    """``torch.logical_or`` → bool (nonzero is true)."""

    name: ClassVar[str] = "logical_or"
    kind: ClassVar[BinaryKind] = "logical"


UnaryKind = Literal["same", "no_bool", "to_float", "float_only"]


@dataclass(frozen=True, slots=True)
class UnaryOp(Op):
    """Base of elementwise unary ops; ``kind`` picks the dtype rule."""

    kind: ClassVar[UnaryKind] = "same"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        dtype = x.dtype
        if self.kind == "no_bool" and dtype is DType.bool:
            raise TypeRuleError(f"{self.name} is not defined for bool (torch rejects it), found {x}; cast first")
        if self.kind == "float_only" and not dtype.is_floating:
            raise TypeRuleError(f"{self.name} needs a floating operand, found {x} (cast it first)")
        if self.kind == "to_float" and not dtype.is_floating:
            dtype = default_float()
        return TensorType(x.shape, dtype)


@dataclass(frozen=True, slots=True)
class Neg(UnaryOp):
    """``torch.neg``; not defined for bool."""

    name: ClassVar[str] = "neg"
    kind: ClassVar[UnaryKind] = "no_bool"


@dataclass(frozen=True, slots=True)
class Abs(UnaryOp):
    """``torch.abs``; not defined for bool."""

    name: ClassVar[str] = "abs"
    kind: ClassVar[UnaryKind] = "no_bool"


@dataclass(frozen=True, slots=True)
class Relu(UnaryOp):
    """``torch.relu``; not defined for bool."""

    name: ClassVar[str] = "relu"
    kind: ClassVar[UnaryKind] = "no_bool"


@dataclass(frozen=True, slots=True)
class Exp(UnaryOp):
    """``torch.exp``; integer input gives the default float."""

    name: ClassVar[str] = "exp"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Log(UnaryOp):
    """``torch.log``; integer input gives the default float."""

    name: ClassVar[str] = "log"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Sqrt(UnaryOp):
    """``torch.sqrt``; integer input gives the default float."""

    name: ClassVar[str] = "sqrt"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Rsqrt(UnaryOp):
    """``torch.rsqrt``; integer input gives the default float."""

    name: ClassVar[str] = "rsqrt"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Tanh(UnaryOp):
    """``torch.tanh``; integer input gives the default float."""

    name: ClassVar[str] = "tanh"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Sigmoid(UnaryOp):
    """``torch.sigmoid``; integer input gives the default float."""

    name: ClassVar[str] = "sigmoid"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Erf(UnaryOp):
    """``torch.erf``; integer input gives the default float."""

    name: ClassVar[str] = "erf"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Sin(UnaryOp):
    """``torch.sin``; integer input gives the default float."""

    name: ClassVar[str] = "sin"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Cos(UnaryOp):
    """``torch.cos``; integer input gives the default float."""

    name: ClassVar[str] = "cos"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Silu(UnaryOp):
    """``torch.nn.functional.silu``; floating input only."""

    name: ClassVar[str] = "silu"
    kind: ClassVar[UnaryKind] = "float_only"


@dataclass(frozen=True, slots=True)
class Gelu(UnaryOp):
    """``torch.nn.functional.gelu`` with ``approximate`` ``"none"`` or ``"tanh"``; floating input only."""

    name: ClassVar[str] = "gelu"
    kind: ClassVar[UnaryKind] = "float_only"
    approximate: Literal["none", "tanh"] = "none"

    def __post_init__(self) -> None:
        if self.approximate not in ("none", "tanh"):
            raise TypeError(f"gelu approximate must be 'none' or 'tanh', got {self.approximate!r}")


@dataclass(frozen=True, slots=True)
class Cast(Op):
    """``Tensor.to(dtype)``: float→int truncates toward zero; nonzero→bool is true."""

    name: ClassVar[str] = "cast"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    dtype: DType = DType.float32

    def __post_init__(self) -> None:
        if not isinstance(self.dtype, DType):
            raise TypeError(f"cast dtype must be a DType (f32, i64, ...), got {self.dtype!r}")

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        return TensorType(x.shape, self.dtype)


@dataclass(frozen=True, slots=True)
class Where(Op):
    """``torch.where(cond, a, b)``: ``cond`` is bool; all three broadcast; ``a``/``b`` promote."""

    name: ClassVar[str] = "where"
    min_args: ClassVar[int] = 3
    max_args: ClassVar[int | None] = 3

    def infer(self, args: tuple[Operand, ...]) -> Type:
        cond, a, b = tensor_args(self.name, args)
        if cond.dtype is not DType.bool:
            raise TypeRuleError(f"where condition must be bool, found {cond} (compare or cast it first)")
        shape = broadcast_shapes(self.name, cond.shape, a.shape, b.shape)
        return TensorType(shape, promote((a, args[1].weak), (b, args[2].weak)))


BINARY_OPS: tuple[type[BinaryOp], ...] = (Add, Sub, Mul, Div, Pow, Maximum, Minimum, Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr)
UNARY_OPS: tuple[type[UnaryOp], ...] = (Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Relu, Silu, Gelu, Erf, Sin, Cos)
