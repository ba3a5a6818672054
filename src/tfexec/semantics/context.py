"""``EvaluateContext`` (evaluator spec §3): what one op dispatch sees."""

from collections.abc import Mapping
from dataclasses import dataclass, field

from tfexec.ir.ops.base import Op
from tfexec.ir.types import Type
from tfexec.loading import LoadedModule
from tfexec.semantics.values import Value


@dataclass(slots=True)
class EvaluateContext:
    """One evaluation's context for a dispatch (evaluator spec §3).

    ``op`` is the op being dispatched, ``args`` its evaluated operands (``Value``s, in call
    order; a weak Python-scalar operand is a ``TensorValue`` whose ``scalar`` is set),
    ``result_type`` the call's inferred type — ``None`` when type inference has not run, so
    a handler must never need it — ``loaded_module`` the module supplying ``ConstTensor``s,
    ``device`` where the run happens (``None``: torch's default) and ``dim_bindings`` the
    concrete size of every ``DimVar`` of the function scope being evaluated.
    """

    op: Op | None = None
    args: tuple[Value, ...] = ()
    result_type: Type | None = None
    loaded_module: "LoadedModule | None" = None
    device: str | None = None
    dim_bindings: Mapping[str, int] = field(default_factory=dict)

    def for_op(self, op: Op, args: tuple[Value, ...], result_type: Type | None) -> "EvaluateContext":
        """A context for dispatching ``op`` on ``args``, sharing this run's device and bindings."""
        return EvaluateContext(op, args, result_type, self.loaded_module, self.device, self.dim_bindings)

    def scoped(self, dim_bindings: Mapping[str, int]) -> "EvaluateContext":
        """The context of a callee's scope: the same run, the callee's own dim bindings."""
        return EvaluateContext(loaded_module=self.loaded_module, device=self.device, dim_bindings=dim_bindings)
