"""The tfexec error hierarchy.

Every documented kind of bad input ends in one of these, never a raw torch, Python or
safetensors exception; the original exception, when there is one, is kept as ``__cause__``.
"""


class TfexecError(Exception):
    """Base of every error tfexec raises on purpose."""


class ParseError(TfexecError):
    """The text form could not be parsed (message carries file:line:col and a caret)."""


class TypeInferenceError(TfexecError):
    """A program is ill-typed; the message starts with ``describe_expr`` of the node."""


class LoweringError(TfexecError):
    """A program could not be lowered to a ``ForwardGraph``."""


class EvalError(TfexecError):
    """Evaluation failed; the message starts with ``describe_expr`` of the node."""


class ModuleLoadError(TfexecError):
    """A saved module or weight reading is missing, malformed or inconsistent."""


class EquivalenceError(TfexecError):
    """The two evaluation routes disagree (raised by ``assert_equivalent``)."""


class IRConstructionError(TfexecError, TypeError):
    """A node or type was built from the wrong kind of field.

    It is also a ``TypeError`` so that callers catching the usual Python error for a
    wrong argument kind still catch it.
    """


class ArgumentTypeError(TfexecError, TypeError):
    """A public function was called with the wrong kind of argument (checked with beartype)."""


class TypeRuleError(TfexecError):
    """Raised by an op's type rule (``Op.infer``); ``infer_types`` turns it into a
    ``TypeInferenceError`` prefixed by ``describe_expr`` of the call."""


class DimError(TfexecError, ValueError):
    """A dim could not be resolved (an unbound ``DimVar``) or its arithmetic failed."""


class RegistryError(TfexecError):
    """A registry key was registered twice without ``override=True``, or is not a class."""


class TypeCheckError(EvalError):
    """A lowered value does not have its declared type under the runtime checks
    (``check="full"`` or ``"boundary"``): an op's type rule and value rule disagree."""
