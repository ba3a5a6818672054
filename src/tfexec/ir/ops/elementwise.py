"""Elementwise ops: binary (broadcasting), comparisons, logical, unary, ``cast``, ``where``.

Dtype rules are torch's (CPU kernels). The binary and unary ops share their rules through
the ``kind`` of their base class (``BinaryOp``, ``UnaryOp``); each class's docstring (and
its base's, for what it does not restate) is its reference entry. Where a rule is kept
stricter than torch (never looser), the op's docstring says so.
"""

from dataclasses import dataclass
from typing import ClassVar, Literal

from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.operands import DTypeLike, Operand as ExprLike, apply, as_dtype, binary_builder, unary_builder
from tfexec.ir.ops.base import Op, Operand, TypeRuleError, cite
from tfexec.ir.ops.promotion import broadcast_shapes, default_float, promote, tensor_args
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, Type

BinaryKind = Literal["arith", "no_bool_operand", "no_bool_result", "div", "compare", "logical"]


def _shown(arg: Operand) -> str:
    """An operand's type as an error shows it (a weak Python scalar says so)."""
    return f"Python scalar {arg.type}" if arg.weak else str(arg.type)


@dataclass(frozen=True, slots=True)
class BinaryOp(Op):
    """Base of the broadcasting binary ops; ``kind`` picks the dtype rule.

    Type rule: the shape is the broadcast of ``a``'s and ``b``'s shapes (C1); the dtype is
    torch's promotion of the two (``torch.result_type``: a Python-scalar operand promotes as
    a Python scalar, a rank-0 tensor ranks below a dimensioned one).
    Type rule [compare]: the broadcast shape (C1), dtype ``b1``.
    Type rule [logical]: the broadcast shape (C1), dtype ``b1``; operands of any dtype
    (nonzero is true).
    Value rule: ``torch.{op}(a, b)`` on the run's device, with torch's promotion; a
    Python-scalar operand reaches torch as a Python scalar where torch takes one.
    Constraints:
        (C1) the shapes broadcast: aligned from the right, each pair of sizes is equal or
        one of them is 1.
    Example: def example(a: f32[2, 3], b: f32[3]): return {op}(a, b)
    Example: def example(a: i32[2, 2]): return {op}(a, 2)
    Refused (C1): def example(a: f32[2, 3], b: f32[2]): return {op}(a, b)
    """

    kind: ClassVar[BinaryKind] = "arith"
    min_args: ClassVar[int] = 2
    max_args: ClassVar[int | None] = 2

    def infer(self, args: tuple[Operand, ...]) -> Type:
        a, b = tensor_args(self.name, args)
        shape = broadcast_shapes(self.name, a.shape, b.shape, label="C1")
        if self.kind in ("compare", "logical"):
            return TensorType(shape, DType.bool)
        dtype = promote((a, args[0].weak), (b, args[1].weak))
        bool_operand = self.kind == "no_bool_operand" and DType.bool in (a.dtype, b.dtype)
        if bool_operand or (self.kind == "no_bool_result" and dtype is DType.bool):
            raise TypeRuleError(
                f"{self.name} is not defined for bool operands (torch rejects it), found {_shown(args[0])} and "
                f"{_shown(args[1])}; cast to an integer or floating dtype first{cite(self.name, 'C2')}"
            )
        if self.kind == "div" and not dtype.is_floating:
            dtype = default_float()
        return TensorType(shape, dtype)


@dataclass(frozen=True, slots=True)
class Add(BinaryOp):
    """Elementwise sum ``a + b``."""

    name: ClassVar[str] = "add"


@dataclass(frozen=True, slots=True)
class Sub(BinaryOp):
    """Elementwise difference ``a - b``.

    Constraints:
        (C2) neither operand is ``b1`` (a Python ``True`` included), as torch refuses.
    Refused (C2): def example(a: b1[3], b: i32[3]): return sub(a, b)
    """

    name: ClassVar[str] = "sub"
    kind: ClassVar[BinaryKind] = "no_bool_operand"


@dataclass(frozen=True, slots=True)
class Mul(BinaryOp):
    """Elementwise product ``a * b``."""

    name: ClassVar[str] = "mul"


@dataclass(frozen=True, slots=True)
class Div(BinaryOp):
    """Elementwise true division ``a / b``.

    Type rule: the broadcast shape (C1); the promoted dtype when it is floating, else torch's
    default float (integer operands give ``f32``).
    """

    name: ClassVar[str] = "div"
    kind: ClassVar[BinaryKind] = "div"


@dataclass(frozen=True, slots=True)
class Pow(BinaryOp):
    """Elementwise power ``a ** b``.

    Integers to a negative integer power are torch's error at run time (an ``EvalError``).

    Constraints:
        (C2) the promoted dtype is not ``b1``. Kept stricter than torch, whose scalar fast
        paths accept ``bool ** True`` and ``bool ** False``.
    Refused (C2): def example(a: b1[3], b: b1[3]): return pow(a, b)
    """

    name: ClassVar[str] = "pow"
    kind: ClassVar[BinaryKind] = "no_bool_result"


@dataclass(frozen=True, slots=True)
class Maximum(BinaryOp):
    """Elementwise maximum of ``a`` and ``b`` (NaN propagates)."""

    name: ClassVar[str] = "maximum"


@dataclass(frozen=True, slots=True)
class Minimum(BinaryOp):
    """Elementwise minimum of ``a`` and ``b`` (NaN propagates)."""

    name: ClassVar[str] = "minimum"


@dataclass(frozen=True, slots=True)
class Eq(BinaryOp):
    """Elementwise ``a == b``."""

    name: ClassVar[str] = "eq"
    kind: ClassVar[BinaryKind] = "compare"


@dataclass(frozen=True, slots=True)
class Ne(BinaryOp):
    """Elementwise ``a != b``."""

    name: ClassVar[str] = "ne"
    kind: ClassVar[BinaryKind] = "compare"


@dataclass(frozen=True, slots=True)
class Lt(BinaryOp):
    """Elementwise ``a < b``."""

    name: ClassVar[str] = "lt"
    kind: ClassVar[BinaryKind] = "compare"


@dataclass(frozen=True, slots=True)
class Le(BinaryOp):
    """Elementwise ``a <= b``."""

    name: ClassVar[str] = "le"
    kind: ClassVar[BinaryKind] = "compare"


@dataclass(frozen=True, slots=True)
class Gt(BinaryOp):
    """Elementwise ``a > b``."""

    name: ClassVar[str] = "gt"
    kind: ClassVar[BinaryKind] = "compare"


@dataclass(frozen=True, slots=True)
class Ge(BinaryOp):
    """Elementwise ``a >= b``."""

    name: ClassVar[str] = "ge"
    kind: ClassVar[BinaryKind] = "compare"


@dataclass(frozen=True, slots=True)
class LogicalAnd(BinaryOp):
    """Elementwise logical and of ``a`` and ``b``."""

    name: ClassVar[str] = "logical_and"
    kind: ClassVar[BinaryKind] = "logical"


@dataclass(frozen=True, slots=True)
class LogicalOr(BinaryOp):
    """Elementwise logical or of ``a`` and ``b``."""

    name: ClassVar[str] = "logical_or"
    kind: ClassVar[BinaryKind] = "logical"


UnaryKind = Literal["same", "no_bool", "to_float", "float_only"]


@dataclass(frozen=True, slots=True)
class UnaryOp(Op):
    """Base of the elementwise unary ops; ``kind`` picks the dtype rule.

    Type rule: the shape and dtype of ``x``.
    Type rule [to_float]: the shape of ``x``; its dtype when floating, else torch's default
    float (integer and ``b1`` input give ``f32``).
    Value rule: ``torch.{op}(x)`` on the run's device.
    Constraints: none.
    Constraints [no_bool]:
        (C1) ``x`` is not ``b1`` (torch refuses it).
    Constraints [float_only]:
        (C1) ``x`` is floating.
    Example: def example(x: f32[2, 3]): return {op}(x)
    Example [to_float]: def example(x: i64[4]): return {op}(x)
    Refused (C1) [no_bool]: def example(x: b1[3]): return {op}(x)
    Refused (C1) [float_only]: def example(x: i64[3]): return {op}(x)
    """

    kind: ClassVar[UnaryKind] = "same"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1

    def infer(self, args: tuple[Operand, ...]) -> Type:
        (x,) = tensor_args(self.name, args)
        dtype = x.dtype
        if self.kind == "no_bool" and dtype is DType.bool:
            raise TypeRuleError(
                f"{self.name} is not defined for bool (torch rejects it), found {x}; cast first{cite(self.name, 'C1')}"
            )
        if self.kind == "float_only" and not dtype.is_floating:
            raise TypeRuleError(f"{self.name} needs a floating operand, found {x} (cast it first){cite(self.name, 'C1')}")
        if self.kind == "to_float" and not dtype.is_floating:
            dtype = default_float()
        return TensorType(x.shape, dtype)


@dataclass(frozen=True, slots=True)
class Neg(UnaryOp):
    """Elementwise negation ``-x``."""

    name: ClassVar[str] = "neg"
    kind: ClassVar[UnaryKind] = "no_bool"


@dataclass(frozen=True, slots=True)
class Abs(UnaryOp):
    """Elementwise absolute value."""

    name: ClassVar[str] = "abs"
    kind: ClassVar[UnaryKind] = "no_bool"


@dataclass(frozen=True, slots=True)
class Relu(UnaryOp):
    """Elementwise ``max(x, 0)``."""

    name: ClassVar[str] = "relu"
    kind: ClassVar[UnaryKind] = "no_bool"


@dataclass(frozen=True, slots=True)
class Exp(UnaryOp):
    """Elementwise exponential."""

    name: ClassVar[str] = "exp"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Log(UnaryOp):
    """Elementwise natural logarithm (NaN below 0, ``-inf`` at 0)."""

    name: ClassVar[str] = "log"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Sqrt(UnaryOp):
    """Elementwise square root (NaN below 0)."""

    name: ClassVar[str] = "sqrt"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Rsqrt(UnaryOp):
    """Elementwise ``1 / sqrt(x)``."""

    name: ClassVar[str] = "rsqrt"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Tanh(UnaryOp):
    """Elementwise hyperbolic tangent."""

    name: ClassVar[str] = "tanh"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Sigmoid(UnaryOp):
    """Elementwise logistic sigmoid ``1 / (1 + exp(-x))``."""

    name: ClassVar[str] = "sigmoid"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Erf(UnaryOp):
    """Elementwise error function."""

    name: ClassVar[str] = "erf"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Sin(UnaryOp):
    """Elementwise sine."""

    name: ClassVar[str] = "sin"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Cos(UnaryOp):
    """Elementwise cosine."""

    name: ClassVar[str] = "cos"
    kind: ClassVar[UnaryKind] = "to_float"


@dataclass(frozen=True, slots=True)
class Silu(UnaryOp):
    """Elementwise SiLU ``x * sigmoid(x)``.

    Value rule: ``torch.nn.functional.silu(x)`` on the run's device.
    """

    name: ClassVar[str] = "silu"
    kind: ClassVar[UnaryKind] = "float_only"


@dataclass(frozen=True, slots=True)
class Gelu(UnaryOp):
    """Elementwise GELU: exact (``approximate="none"``, the default) or its tanh approximation.

    Value rule: ``torch.nn.functional.gelu(x, approximate=approximate)`` on the run's device.
    Example: def example(x: f32[2, 3]): return gelu(x)
    Example: def example(x: f32[2, 3]): return gelu(x, approximate="tanh")
    """

    name: ClassVar[str] = "gelu"
    kind: ClassVar[UnaryKind] = "float_only"
    approximate: Literal["none", "tanh"] = "none"

    def __post_init__(self) -> None:
        if self.approximate not in ("none", "tanh"):
            raise TypeError(f"gelu approximate must be 'none' or 'tanh', got {self.approximate!r}")


@dataclass(frozen=True, slots=True)
class Cast(Op):
    """Convert ``x`` to ``dtype``.

    Type rule: the shape of ``x``, dtype ``dtype``.
    Value rule: ``x.to(dtype)`` (``Tensor.to``): floating to integer truncates toward zero,
    nonzero to ``b1`` is ``True``.
    Constraints: none.
    Example: def example(x: f32[2, 3]): return cast(x, dtype=i32)
    Example: def example(x: i64[4]): return cast(x, dtype=b1)
    """

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
    """Select elementwise: ``a`` where ``cond`` is true, else ``b``.

    Type rule: the broadcast shape of ``cond``, ``a`` and ``b`` (C2); the dtype is torch's
    promotion of ``a`` and ``b``.
    Value rule: ``torch.where(cond, a, b)`` on the run's device.
    Constraints:
        (C1) ``cond`` is ``b1``. Kept stricter than torch, which still accepts a deprecated
        ``u8`` condition.
        (C2) the three shapes broadcast (as for ``add``).
    Example: def example(c: b1[2, 3], a: f32[2, 3]): return where(c, a, 0.0)
    Refused (C1): def example(c: i64[3], a: f32[3]): return where(c, a, a)
    Refused (C2): def example(c: b1[3], a: f32[4]): return where(c, a, 0.0)
    """

    name: ClassVar[str] = "where"
    min_args: ClassVar[int] = 3
    max_args: ClassVar[int | None] = 3

    def infer(self, args: tuple[Operand, ...]) -> Type:
        cond, a, b = tensor_args(self.name, args)
        if cond.dtype is not DType.bool:
            raise TypeRuleError(f"where condition must be bool, found {cond} (compare or cast it first){cite(self.name, 'C1')}")
        shape = broadcast_shapes(self.name, cond.shape, a.shape, b.shape, label="C2")
        return TensorType(shape, promote((a, args[1].weak), (b, args[2].weak)))


BINARY_OPS: tuple[type[BinaryOp], ...] = (Add, Sub, Mul, Div, Pow, Maximum, Minimum, Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr)
UNARY_OPS: tuple[type[UnaryOp], ...] = (Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Relu, Silu, Gelu, Erf, Sin, Cos)


# -- builders (re-exported by ``tfexec.ops``) ----------------------------------------


add = binary_builder(Add, "``torch.add``: ``a + b`` with broadcasting and torch promotion.")
sub = binary_builder(Sub, "``torch.sub``: ``a - b``; not defined for bool operands.")
mul = binary_builder(Mul, "``torch.mul``: ``a * b``.")
div = binary_builder(Div, "``torch.div``: true division (integers give a float).")
pow = binary_builder(Pow, "``torch.pow``: ``a ** b``.")
maximum = binary_builder(Maximum, "``torch.maximum``: elementwise maximum (NaN propagates).")
minimum = binary_builder(Minimum, "``torch.minimum``: elementwise minimum (NaN propagates).")
eq = binary_builder(Eq, "``torch.eq``: ``a == b`` as bool.")
ne = binary_builder(Ne, "``torch.ne``: ``a != b`` as bool.")
lt = binary_builder(Lt, "``torch.lt``: ``a < b`` as bool.")
le = binary_builder(Le, "``torch.le``: ``a <= b`` as bool.")
gt = binary_builder(Gt, "``torch.gt``: ``a > b`` as bool.")
ge = binary_builder(Ge, "``torch.ge``: ``a >= b`` as bool.")
logical_and = binary_builder(LogicalAnd, "``torch.logical_and`` (nonzero is true) as bool.")
logical_or = binary_builder(LogicalOr, "``torch.logical_or`` (nonzero is true) as bool.")
neg = unary_builder(Neg, "``torch.neg``: ``-x``; not defined for bool.")
abs = unary_builder(Abs, "``torch.abs``; not defined for bool.")
exp = unary_builder(Exp, "``torch.exp``.")
log = unary_builder(Log, "``torch.log``.")
sqrt = unary_builder(Sqrt, "``torch.sqrt``.")
rsqrt = unary_builder(Rsqrt, "``torch.rsqrt``: ``1 / sqrt(x)``.")
tanh = unary_builder(Tanh, "``torch.tanh``.")
sigmoid = unary_builder(Sigmoid, "``torch.sigmoid``.")
relu = unary_builder(Relu, "``torch.relu``; not defined for bool.")
silu = unary_builder(Silu, "``F.silu``; floating input only.")
erf = unary_builder(Erf, "``torch.erf``.")
sin = unary_builder(Sin, "``torch.sin``.")
cos = unary_builder(Cos, "``torch.cos``.")


def gelu(x: ExprLike, *, approximate: Literal["none", "tanh"] = "none", span: Span | None = None) -> Call:
    """``F.gelu(x, approximate=...)``; floating input only."""
    return apply(Gelu(approximate), x, span=span)


def cast(x: ExprLike, *, dtype: DTypeLike, span: Span | None = None) -> Call:
    """``x.to(dtype)``: float→int truncates toward zero."""
    return apply(Cast(as_dtype(dtype, "cast dtype")), x, span=span)


def where(cond: ExprLike, a: ExprLike, b: ExprLike, *, span: Span | None = None) -> Call:
    """``torch.where(cond, a, b)``: ``cond`` bool; all three broadcast; ``a`` and ``b`` promote."""
    return apply(Where(), cond, a, b, span=span)
