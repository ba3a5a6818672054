"""The evaluator's internal names the mesh evaluator builds on, imported here and nowhere
else in ``tfexec.mesh``, so that a move of the evaluator's internals is one edit.

The evaluator's names live in ``tfexec.semantics`` and ``tfexec.evaluator``. The participants run the single-participant evaluator unchanged (``evaluate_value``) on
DTensor values; the caller binds and checks inputs as ``evaluate`` does (``bind_inputs``,
``resolve_target``); the mesh rules wrap the registered value rules (``eval_registry``,
``Handler``) and build values as the handlers do (``as_tensor``, ``kernel_arg``,
``type_of_data``); ``reason_of`` words an exception as the evaluator does.
"""

from tfexec.evaluator.visitor import evaluate_value as evaluate_value
from tfexec.semantics.binding import bind_inputs as bind_inputs
from tfexec.semantics.context import EvaluateContext as EvaluateContext
from tfexec.semantics.messages import reason_of as reason_of
from tfexec.semantics.registry import Handler as Handler, eval_registry as eval_registry
from tfexec.semantics.registry import kernel_operand as kernel_arg
from tfexec.semantics.rules.common import as_tensor as as_tensor
from tfexec.semantics.targets import resolve_target as resolve_target
from tfexec.semantics.values import (
    TensorValue as TensorValue,
    TupleValue as TupleValue,
    Value as Value,
    type_of_data as type_of_data,
)

__all__ = [
    "EvaluateContext", "Handler", "TensorValue", "TupleValue", "Value", "as_tensor", "bind_inputs", "eval_registry",
    "evaluate_value", "kernel_arg", "reason_of", "resolve_target", "type_of_data",
]
