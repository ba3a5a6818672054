"""``IRModule``: named functions, declared constants, an optional entry, named children.

Constants are addressed with dotted, ``state_dict``-style names: ``w`` is a constant of
the module itself, ``block.attn.wq`` is constant ``wq`` of child ``block``'s child ``attn``.
A module's own constant names may contain dots (a flat module bound to a ``state_dict``),
but never one that also names a child's constant.
"""

from collections.abc import Iterator, Mapping
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
            if fn.name != name:
                raise IRConstructionError(
                    f"IRModule.functions[{name!r}] is a Function named {fn.name!r}; a function is listed under its own name"
                )
        for name, t in self.constants.items():
            if not isinstance(t, TensorType):
                raise IRConstructionError(f"IRModule.constants[{name!r}] must be a TensorType, got {t!r}")
        for name, child in self.children.items():
            if not isinstance(child, IRModule):
                raise IRConstructionError(f"IRModule.children[{name!r}] must be an IRModule, got {type(child).__name__}")
            if "." in name:
                raise IRConstructionError(f"child module name {name!r} must not contain '.'; nest children instead")
        for name in self.constants:
            head, dot, rest = name.partition(".")
            if dot and head in self.children and self.children[head].constant_type(rest) is not None:
                raise IRConstructionError(
                    f"constant {name!r} is declared both by this module and by its child {head!r}; rename one"
                )
        if self.entry is not None and self.entry not in self.functions:
            known = ", ".join(sorted(self.functions)) or "none"
            raise IRConstructionError(f"IRModule.entry {self.entry!r} is not one of its functions ({known})")

    @property
    def entry_function(self) -> Function:
        """The function to run: the ``@entry`` one, else the module's only function.

        A ``LookupError`` says what to do instead when there is neither (no functions, or
        several and no entry): pick one with ``function(name)``.
        """
        if self.entry is not None:
            return self.functions[self.entry]
        if len(self.functions) == 1:
            return next(iter(self.functions.values()))
        if not self.functions:
            raise LookupError("this module has no functions, so no entry function")
        names = ", ".join(sorted(self.functions))
        raise LookupError(
            f"this module has {len(self.functions)} functions ({names}) and no entry: "
            "mark one @entry, or pick one with module.function(name)"
        )

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

    def constant_type(self, name: str) -> TensorType | None:
        """The declared type of constant ``name`` (a dotted name reaches into children), or None."""
        module = self
        while True:
            t = module.constants.get(name)
            if t is not None:
                return t
            head, dot, rest = name.partition(".")
            if not dot or head not in module.children:
                return None
            module, name = module.children[head], rest

    def walk(self, prefix: str = "") -> Iterator[tuple[str, "IRModule"]]:
        """This module and every descendant, as ``(dotted path, module)``; the root's path is ``""``."""
        yield prefix, self
        for name, child in self.children.items():
            yield from child.walk(f"{prefix}.{name}" if prefix else name)
