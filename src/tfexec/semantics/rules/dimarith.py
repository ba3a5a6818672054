"""Value rules of the ``dim_*`` ops: the integer arithmetic of ``resolve_dim``
(``apply_dim_op``), on rank-0 integer operands read as Python ints."""

import torch

from tfexec.errors import EvalError
from tfexec.ir.dims import DimError, apply_dim_op
from tfexec.ir.ops.dimarith import DIM_OPS, DimOp
from tfexec.semantics.values import I64_MAX, I64_MIN, host_indices, index_tensor
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.registry import Arg, Kernel, value_rule
from tfexec.semantics.rules.common import read_index


_OVERFLOW_LABEL = {"floordiv": "C3"}
"""The label of the 'result fits in i64' constraint where it is not C2 (only add, sub, mul and
floordiv can overflow; min, max and mod never leave their operands' range)."""
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}


def _register(cls: type[DimOp]) -> None:
    @value_rule(cls)
    def _rule(op: DimOp, args: tuple[Arg, ...]) -> Kernel:
        name, dim_op = op.name, op.dim_op

        def compute(a: object, b: object) -> int:
            lhs = a if type(a) is int else read_index(a, f"{name} operand 0")  # a host-int index: as it is
            rhs = b if type(b) is int else read_index(b, f"{name} operand 1")
            try:
                result = apply_dim_op(dim_op, lhs, rhs)
            except DimError as exc:
                raise EvalError(f"{name}: {exc} [{name} (C2)]") from None
            if not I64_MIN <= result <= I64_MAX:
                raise EvalError(
                    f"{name}: the result {result} of {lhs} {_SYMBOL.get(dim_op, dim_op)} {rhs} does not fit in i64 "
                    f"({I64_MIN} .. {I64_MAX}); tfexec refuses an index that overflows rather than wrap it "
                    f"[{name} ({_OVERFLOW_LABEL.get(dim_op, 'C2')})]"
                )
            return result

        if not all(arg.weak for arg in args):
            # An operand read as a tensor is on the run's device, and reading it fails on meta,
            # so a result reached here is on a device that keeps index values as host ints.
            return Kernel(compute, host_index=True)  # type: ignore[arg-type]  # an index value (Kernel.host_index)

        def on_device(ctx: EvaluateContext, a: object, b: object) -> torch.Tensor:
            result = compute(a, b)
            return result if host_indices(ctx.device) else index_tensor(result, ctx.device)  # type: ignore[return-value]  # an index value

        return Kernel(on_device, needs_ctx=True, host_index=True)


for _cls in DIM_OPS:
    _register(_cls)
