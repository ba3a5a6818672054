"""The op's own type rule, applied by a value rule to the operands it receives.

Catalogue v2's kernels call ``TypeRule.check`` before computing: a constraint the type rule
checks (an index of the wrong dtype, an axis out of range) is then refused on the direct
route with the very message ``infer_types`` gives on the lowering route — one check,
written once, in the op class. The answer is cached per operand signature (shapes,
dtypes, weakness), so a kernel called again on operands like the last ones pays a tuple
comparison, not the rule.
"""

import torch

from tfexec.errors import EvalError
from tfexec.ir.dtypes import DType
from tfexec.ir.ops.base import Op, Operand, TypeRuleError
from tfexec.ir.types import TensorType

_WEAK = {bool: DType.bool, int: DType.int64, float: DType.float32}
_MAX_SIGNATURES = 32


def _operand(arg: object) -> Operand:
    if isinstance(arg, torch.Tensor):
        return Operand(TensorType(tuple(arg.shape), DType.from_torch(arg.dtype)))
    weak = _WEAK.get(type(arg))
    if weak is None:
        raise EvalError(f"an operand must be a tensor or a Python bool/int/float, found {type(arg).__name__}")
    return Operand(TensorType((), weak), weak=True)


class TypeRule:
    """``op``'s type rule on concrete operands: ``check(*args)`` returns the result type, or
    raises ``EvalError`` with the type rule's message (citing its constraint)."""

    __slots__ = ("op", "_known")

    def __init__(self, op: Op) -> None:
        self.op = op
        self._known: dict[tuple[object, ...], TensorType] = {}

    def check(self, *args: object) -> TensorType:
        """The result type for operands ``args`` (tensors, or weak Python scalars)."""
        # A tensor's signature is its shape and dtype (a torch.Size hashes and compares as the
        # tuple it is), a weak scalar's its Python type.
        key = tuple([(a.shape, a.dtype) if isinstance(a, torch.Tensor) else type(a) for a in args])
        found = self._known.get(key)
        if found is not None:
            return found
        try:
            result = self.op.infer(tuple(_operand(a) for a in args))
        except TypeRuleError as exc:
            raise EvalError(str(exc)) from None
        if not isinstance(result, TensorType):
            raise EvalError(f"{self.op.name}: the type rule gave {result}, not a tensor type")
        if len(self._known) < _MAX_SIGNATURES:
            self._known[key] = result
        return result

