"""The public API refuses wrong kinds of arguments at the boundary (beartype), as a TypeError
naming the function, the parameter, what it expects and what it got."""

import pytest
import torch

import tfexec
from tfexec import ArgumentTypeError, DimVar, Function, IRModule, Var, f32, ops


def fn() -> Function:
    x = Var("x", f32[DimVar("B")])
    return Function("f", (x,), ops.neg(x))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: tfexec.evaluate("f", torch.ones(2)), r"evaluate\(\): argument target must be Function \| LoadedModule, got str"),
        (lambda: tfexec.lower(None), r"lower\(\): argument target must be Function \| LoadedModule, got NoneType"),
        (lambda: tfexec.lower(fn(), check="ful"), r"lower\(\): argument check must be Literal\['full', 'boundary', 'off'\], got str 'ful'"),
        (lambda: tfexec.check_equivalence(fn(), torch.ones(2), loops="all"), r"argument loops must be Literal\['collapse', 'expand'\]"),
        (lambda: tfexec.parse(b"def f(): ..."), r"parse\(\): argument text must be str, got bytes"),
        (lambda: tfexec.infer_types("f"), r"infer_types\(\): argument fn must be Function, got str"),
        (lambda: tfexec.lower(fn()).run(torch.ones(2), check="none"), r"run\(\): argument check must be"),
        (lambda: tfexec.evaluate(IRModule({"f": fn()}), torch.ones(2)), r"got IRModule .*select a function with module\.entry_function or module\.functions\[name\]"),
    ],
    ids=["evaluate", "lower", "lower-mode", "check-loops", "parse", "infer", "run-mode", "irmodule-hint"],
)
def test_wrong_argument_kinds_are_type_errors(call: object, message: str) -> None:
    with pytest.raises(ArgumentTypeError, match=message) as info:
        call()  # type: ignore[operator]
    assert isinstance(info.value, TypeError) and isinstance(info.value, tfexec.TfexecError)
