"""A kernel's operands are assembled from a call site's weak scalars and run-time holes by
``assembler`` — the one definition both routes use (the direct route on the operands'
run-time parts, the lowered graph on a node's read values)."""

import pytest

from tfexec.ir.weak import Weak
from tfexec.semantics.dispatch import Fill, assembler


@pytest.mark.parametrize(
    ("fills", "holes", "expected"),
    [
        ((None, Weak(2.5)), ("x",), ("x", 2.5)),
        ((Weak(1), None, Weak(True)), ("x",), (1, "x", True)),
        ((None, (Weak(0), None)), ("x", "t"), ("x", (0, "t"))),
        ((None, (None, Weak(0))), ("x", "t"), ("x", ("t", 0))),
        (((None,),), ("a",), (("a",),)),
        (((Weak(3),),), (), ((3,),)),
        ((None, ()), ("x",), ("x", ())),
        ((None, ((Weak(1), None), None), Weak(-2)), ("a", "b", "c"), ("a", ((1, "b"), "c"), -2)),
        (((None, None), Weak(0)), ("a", "b"), (("a", "b"), 0)),
    ],
)
def test_assembled_operands_fill_each_hole_in_order(fills: tuple[Fill, ...], holes: tuple[object, ...], expected: tuple[object, ...]) -> None:
    assemble = assembler(fills)
    assert tuple(assemble(holes)) == expected
    assert tuple(assemble(list(holes))) == expected  # the holes may come as a list (the direct route's)
    again = tuple(assemble(tuple(f"{h}'" for h in holes)))  # made once, used at every run
    assert again == tuple(_renamed(e) for e in expected)


def _renamed(x: object) -> object:
    if isinstance(x, tuple):
        return tuple(_renamed(e) for e in x)
    return f"{x}'" if isinstance(x, str) else x
