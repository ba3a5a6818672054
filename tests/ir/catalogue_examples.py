"""The catalogue's own examples, for tests that must cover every op without listing it: each
op class's docstring examples (``Example: def example(...)``, the programs docs/ops.md runs),
with the fixed inputs the docs use. Import as ``from ir.catalogue_examples import ...``."""

from tfexec import Function, infer_types
from tfexec.docs._docstring import op_doc
from tfexec.docs._examples import example_input
from tfexec.ir.ops.base import Op
from tfexec.ir.ops.catalogue import ALL_OPS
from tfexec.text import parse


def op_examples() -> list[tuple[type[Op], str]]:
    """Every (op class, example program) of the catalogue, in catalogue order."""
    return [(cls, program) for cls in ALL_OPS for program in op_doc(cls).examples]


def example_ids(examples: list[tuple[type[Op], str]]) -> list[str]:
    counts: dict[str, int] = {}
    ids = []
    for cls, _ in examples:
        counts[cls.name] = counts.get(cls.name, 0) + 1
        ids.append(f"{cls.name}-{counts[cls.name]}")
    return ids


def example_function(program: str) -> tuple[Function, list[object]]:
    """The example's one function, type-checked, and the inputs the docs run it on."""
    (fn,) = parse(program, filename="example").functions.values()
    infer_types(fn)
    return fn, [example_input(p.type, "example") for p in fn.params]
