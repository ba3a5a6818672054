"""The evaluator's internal names the mesh evaluator builds on, imported here and nowhere
else in ``tfexec.mesh``, so that a move of the evaluator's internals is one edit.

The participants run the single-participant evaluator unchanged (``evaluate_value``) on
DTensor values; the caller binds and checks inputs as ``evaluate`` does (``bind_inputs``,
``resolve_target``); the mesh rules wrap the registered value rules (``eval_registry``,
``Handler``) and build values as the handlers do (``as_tensor``, ``kernel_arg``,
``type_of_data``); ``reason_of`` words an exception as the evaluator does.
"""

from tfexec.evaluator.context import EvaluateContext as EvaluateContext
from tfexec.evaluator.handlers.common import as_tensor as as_tensor
from tfexec.evaluator.registry import Handler as Handler, eval_registry as eval_registry, reason_of as reason_of
from tfexec.evaluator.runtime import bind_inputs as bind_inputs
from tfexec.evaluator.value import (
    TensorValue as TensorValue,
    TupleValue as TupleValue,
    Value as Value,
    kernel_arg as kernel_arg,
    type_of_data as type_of_data,
)
from tfexec.evaluator.visitor import evaluate_value as evaluate_value, resolve_target as resolve_target

__all__ = [
    "EvaluateContext", "Handler", "TensorValue", "TupleValue", "Value", "as_tensor", "bind_inputs", "eval_registry",
    "evaluate_value", "kernel_arg", "reason_of", "resolve_target", "type_of_data",
]
