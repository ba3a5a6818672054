"""Import PyTorch programs into HIR through ``torch.export``.

``import_module(model, example_inputs, dynamic_shapes=None)`` exports ``model`` (an
``nn.Module`` or a function of tensors), translates the exported ATen graph into an HIR
function and returns it as a loaded module whose constants are the model's parameters and
buffers under their ``state_dict`` names::

    from tfexec.frontends.torch import import_module
    loaded = import_module(model.eval(), (x,), {"x": {0: Dim("B")}})
    tfexec.evaluate(loaded, x)          # what model(x) computes
    loaded.save("model_dir")            # a module directory, load_module reads it back

    # a transformers model: tensors positionally, fixed flags as kwargs
    llm = import_module(llama.eval(), (ids,), {"input_ids": {1: Dim("S")}}, kwargs={"use_cache": False})

Main definitions
----------------
* ``import_module`` — the program as an ``ImportedModule`` (a ``LoadedModule`` that keeps
  its weights); ``import_program`` — the ``IRModule`` and the weights, unbound.
* ``TorchImportError`` — torch.export refused the program, or ops have no translation
  (every such node is listed with its source line).
* ``check_against_torch`` — import, then compare every imported node's value with
  PyTorch's own value of the FX node it came from (``docs/against-torch.md``);
  ``check_imported_against_torch`` does it for a module imported already.
* ``SUPPORTED_OPS`` — the ATen overloads with a translation rule.
* ``jaxtyping_annotations`` / ``jaxtyping_types`` — an imported program's types spelled as
  jaxtyping annotations; ``forward``'s own jaxtyping annotations name the import's dims
  (``AnnotationError`` when they cannot be read or the examples contradict them).

Implementation notes
--------------------
* Each HIR node's ``Span`` is the user's source line that made its FX node (the innermost
  stack frame outside torch, a helper function's own line included), bound to the FX node's
  name: ``describe_expr`` reads ``model.py:31:9 linear_1 = linear(...)``.
* An input or output that is not a tensor (``None``, a cache object) is refused with what to
  pass instead: tensors positionally, fixed non-tensor arguments in ``kwargs``.
* A ``torch.export.Dim`` named ``S`` becomes ``DimVar("S")``; other symbolic sizes keep
  torch's symbol names (``s0``).
* This package is ``tfexec.frontends.torch``; it imports the real ``torch`` by absolute
  import, never itself.
"""

from tfexec.frontends.torch._against import (
    TorchCheckError as TorchCheckError,
)
from tfexec.frontends.torch._against import (
    check_against_torch as check_against_torch,
)
from tfexec.frontends.torch._against import (
    check_imported_against_torch as check_imported_against_torch,
)
from tfexec.frontends.torch._against_report import (
    TorchCheckReport as TorchCheckReport,
)
from tfexec.frontends.torch._api import (
    DynamicShapes as DynamicShapes,
)
from tfexec.frontends.torch._api import (
    ImportedModule as ImportedModule,
)
from tfexec.frontends.torch._api import (
    TorchProgram as TorchProgram,
)
from tfexec.frontends.torch._api import (
    import_module as import_module,
)
from tfexec.frontends.torch._api import (
    import_program as import_program,
)
from tfexec.frontends.torch._jaxtyping import (
    AnnotationError as AnnotationError,
)
from tfexec.frontends.torch._jaxtyping import (
    jaxtyping_annotations as jaxtyping_annotations,
)
from tfexec.frontends.torch._jaxtyping import (
    jaxtyping_types as jaxtyping_types,
)
from tfexec.frontends.torch._registry import RULES as _RULES
from tfexec.frontends.torch._report import TorchImportError as TorchImportError

SUPPORTED_OPS: frozenset[str] = frozenset(str(op) for op in _RULES)
"""The ATen overloads (``aten.linear.default``…) ``import_module`` translates."""

__all__ = [
    "SUPPORTED_OPS", "DynamicShapes", "ImportedModule", "TorchCheckError", "TorchCheckReport", "TorchImportError", "TorchProgram",
    "check_against_torch", "check_imported_against_torch", "import_module", "import_program",
    "AnnotationError", "jaxtyping_annotations", "jaxtyping_types",
]
