"""The text form of the families' programs (tests/ir/programs_families.py): they parse, print
back to a fixed point, type-check, and both parses evaluate bitwise identically on both routes
(hir.md §text). That every op's own examples do is tests/text/test_text_roundtrip.py's."""

import pytest
import torch

import tfexec
from tfexec import infer_types
from tfexec.text import parse, print_ir, structural_difference

from ir.programs_families import FAMILY_PROGRAMS, family_program_inputs
from ir.value_helpers import assert_same


@pytest.mark.parametrize("name", sorted(family_program_inputs()))
def test_round_trip_evaluates_identically(name: str) -> None:
    first = parse(FAMILY_PROGRAMS, "families.tf.py")
    printed = print_ir(first)
    second = parse(printed, "<printed>")
    assert structural_difference(first, second) is None
    assert print_ir(second) == printed
    inputs = family_program_inputs()[name]
    a, b = first.functions[name], second.functions[name]
    infer_types(a)
    got, again = tfexec.evaluate(a, *inputs), tfexec.evaluate(b, *inputs)
    for x, y in zip(got, again):  # type: ignore[arg-type]
        assert_same(x, y)
    assert tfexec.check_equivalence(b, *inputs).ok


def test_attributes_print_as_the_text_form_spells_them() -> None:
    """Given attributes print in the text spelling; defaults (mode="nearest", mode="constant") are left out."""
    printed = print_ir(parse(FAMILY_PROGRAMS, "families.tf.py"))
    for text in ("interpolate(gn, size=(4, 6))", "pads=(1, 1), value=0.5", "dtype=f32", "axes=(0, 1)", "vector_norm(tu, axes=(1,))", "decimals=1"):
        assert text in printed, text


def test_a_misspelt_op_suggests_the_right_one() -> None:
    with pytest.raises(tfexec.ParseError, match=r"unknown op `cumsun`; did you mean cumsum"):
        parse("def f(x: f32[3]):\n    return cumsun(x, axis=0)\n")
    with pytest.raises(tfexec.ParseError, match=r"cumsum needs attribute\(s\) axis"):
        parse("def f(x: f32[3]):\n    return cumsum(x)\n")
    with pytest.raises(tfexec.ParseError, match=r"cannot bind 'index': `index` is an op name"):
        parse("def f(x: f32[3]):\n    index = neg(x)\n    return index\n")
