"""What a run evaluates: a ``Function``, or a ``LoadedModule``'s selected function with the
module that supplies its constants (evaluator spec §2)."""

from tfexec.errors import EvalError
from tfexec.ir.describe import describe_expr
from tfexec.ir.expr import Function
from tfexec.loading import LoadedModule


def resolve_target(target: "Function | LoadedModule") -> "tuple[Function, LoadedModule | None]":
    """The function a target runs and the loaded module supplying its constants."""
    if isinstance(target, Function):
        return target, None
    if isinstance(target, LoadedModule):
        entry = target.entry
        if entry is None:
            raise EvalError(
                f"loaded module {target.name!r} has no entry, so it has no default step; select one with "
                ".function(name) or .child(name)"
            )
        return entry, target
    raise TypeError(f"evaluate() takes a Function or a LoadedModule, got {type(target).__name__}")


def target_name(target: object) -> str:
    """A short name of an evaluation target for messages that concern the whole run."""
    if isinstance(target, Function):
        return describe_expr(target)
    name = getattr(target, "name", None)
    return f"loaded module {name}" if isinstance(name, str) else type(target).__name__
