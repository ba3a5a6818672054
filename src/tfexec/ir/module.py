"""``IRModule``: named functions, declared constants, an optional entry, named children."""

from collections.abc import Mapping
from dataclasses import dataclass, field

from tfexec.errors import IRConstructionError
from tfexec.ir.expr import Function
from tfexec.ir.types import TensorType


@dataclass(frozen=True, eq=False)
class IRModule:
    """A module of HIR functions.

    ``constants`` declares each module constant's type (``ConstTensor`` nodes reference them
    by name); ``entry`` names the function ``evaluate`` runs; ``children`` are named
    sub-modules whose constants are addressed with dotted, state_dict-style paths.
    """

    functions: Mapping[str, Function]
    constants: Mapping[str, TensorType] = field(default_factory=dict)
    entry: str | None = None
    children: Mapping[str, "IRModule"] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, fn in self.functions.items():
            if not isinstance(fn, Function):
                raise IRConstructionError(f"IRModule.functions[{name!r}] must be a Function, got {type(fn).__name__}")
        for name, t in self.constants.items():
            if not isinstance(t, TensorType):
                raise IRConstructionError(f"IRModule.constants[{name!r}] must be a TensorType, got {t!r}")
        for name, child in self.children.items():
            if not isinstance(child, IRModule):
                raise IRConstructionError(f"IRModule.children[{name!r}] must be an IRModule, got {type(child).__name__}")
            if "." in name:
                raise IRConstructionError(f"child module name {name!r} must not contain '.'; nest children instead")
        if self.entry is not None and self.entry not in self.functions:
            known = ", ".join(sorted(self.functions)) or "none"
            raise IRConstructionError(f"IRModule.entry {self.entry!r} is not one of its functions ({known})")

    def function(self, name: str) -> Function:
        """The function called ``name``; a ``KeyError`` lists the known names."""
        try:
            return self.functions[name]
        except KeyError:
            known = ", ".join(sorted(self.functions)) or "none"
            raise KeyError(f"no function {name!r} in this module (functions: {known})") from None

    def child(self, path: str) -> "IRModule":
        """The child module at dotted ``path`` (``block.attn``)."""
        module = self
        for part in path.split("."):
            if part not in module.children:
                known = ", ".join(sorted(module.children)) or "none"
                raise KeyError(f"no child module {part!r} in {path!r} (children: {known})")
            module = module.children[part]
        return module

    def all_constants(self, prefix: str = "") -> dict[str, TensorType]:
        """Every declared constant of this module and its children, by dotted name."""
        out = {f"{prefix}{k}": v for k, v in self.constants.items()}
        for name, child in self.children.items():
            out.update(child.all_constants(f"{prefix}{name}."))
        return out
