"""``EvaluateContext`` (evaluator spec §3): what one op dispatch sees."""

from collections.abc import Mapping
from dataclasses import dataclass, field

from tfexec.evaluator.value import Value
from tfexec.ir.ops.base import Op
from tfexec.ir.types import Type
from tfexec.loading import LoadedModule


@dataclass(slots=True)
class EvaluateContext:
    """Carry one evaluation: the op being dispatched, its evaluated operands, its result type
    (``None`` when type inference has not run), the loaded module, the run's device
    (``None`` leaves it to torch's default) and the concrete dim bindings."""

    op: Op | None = None
    args: tuple[Value, ...] = ()
    result_type: Type | None = None
    loaded_module: "LoadedModule | None" = None
    device: str | None = None
    dim_bindings: Mapping[str, int] = field(default_factory=dict)

    def for_op(self, op: Op, args: tuple[Value, ...], result_type: Type | None) -> "EvaluateContext":
        """A context for dispatching ``op`` on ``args``, sharing this run's device and bindings."""
        return EvaluateContext(op, args, result_type, self.loaded_module, self.device, self.dim_bindings)
