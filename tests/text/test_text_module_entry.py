"""What the text form gives a newcomer in one step: a module's entry function
(``IRModule.entry_function``), and tuple types in Python's spelling (``tuple[...]``)."""

import pytest
import torch

import tfexec
from tfexec import DimVar, ParseError, TupleType, f32
from tfexec.text import parse, print_ir

PAIR = "def f(x: f32[R, 4]) -> tuple[f32[R, 1], f32[R, 1]]:\n    return (reduce(x, kind='max', axes=(-1,), keepdims=True), reduce(x, kind='sum', axes=(-1,), keepdims=True))\n"


def test_entry_function_is_the_entry_or_the_only_function() -> None:
    layer = parse("@entry\ndef layer(x: f32[2]) -> f32[2]:\n    return neg(x)\n\ndef other(x: f32[2]) -> f32[2]:\n    return x\n")
    assert layer.entry_function is layer.functions["layer"]
    only = parse("def f(x: f32[2]) -> f32[2]:\n    return neg(x)\n")
    assert only.entry is None and only.entry_function is only.functions["f"]
    assert torch.equal(tfexec.evaluate(only.entry_function, torch.ones(2)), -torch.ones(2))  # type: ignore[arg-type]


def test_entry_function_says_what_to_do_when_there_is_none() -> None:
    several = parse("def b(x: f32[2]) -> f32[2]:\n    return x\n\ndef a(x: f32[2]) -> f32[2]:\n    return x\n")
    with pytest.raises(LookupError, match=r"2 functions \(a, b\) and no entry: mark one @entry, or pick one with module.function\(name\)"):
        several.entry_function
    with pytest.raises(LookupError, match="no functions"):
        parse("# nothing here\n").entry_function


def test_a_tuple_return_type_in_pythons_spelling_parses_and_prints_as_the_parenthesised_one() -> None:
    module = parse(PAIR)
    fn = module.entry_function
    R = DimVar("R")
    assert fn.ret_type == TupleType((f32[R, 1], f32[R, 1]))
    printed = print_ir(module)
    assert "-> (f32[R, 1], f32[R, 1]):" in printed and "tuple[" not in printed
    assert print_ir(parse(printed)) == printed
    top, total = tfexec.evaluate(fn, torch.arange(8.0).reshape(2, 4))
    assert isinstance(top, torch.Tensor) and isinstance(total, torch.Tensor)
    assert top.tolist() == [[3.0], [7.0]] and total.tolist() == [[6.0], [22.0]]


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [("tuple[f32[4]]", TupleType((f32[4],))), ("tuple[()]", TupleType(())), ("tuple[f32[2], tuple[f32[3], f32[4]]]",
     TupleType((f32[2], TupleType((f32[3], f32[4])))))],
)
def test_tuple_spellings(annotation: str, expected: TupleType) -> None:
    fn = parse(f"def f(x: {annotation}) -> {annotation}:\n    return x\n").entry_function
    assert fn.params[0].type == expected and fn.ret_type == expected


def test_an_unknown_dtype_shows_the_accepted_tuple_spellings() -> None:
    with pytest.raises(ParseError, match=r"unknown dtype `list`; expected one of b1, .* \(a tuple type is written \(f32\[4\], i64\[\(\)\]\) or tuple\[f32\[4\], i64\[\(\)\]\]\)"):
        parse("def f(x: f32[2]) -> list[f32[2]]:\n    return x\n")
