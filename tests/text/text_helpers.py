"""Helpers of the text-form tests: the round-trip check and bitwise value comparison."""

import torch

from tfexec import Function, IRModule, evaluate
from tfexec.text import parse, print_ir, structural_difference


def round_trip(text: str, filename: str = "<test>") -> tuple[IRModule, IRModule, str]:
    """Parse ``text``, print it, parse the print: the reparse is structurally equal and
    printing it again gives the same text. Returns (first parse, reparse, printed text)."""
    first = parse(text, filename)
    printed = print_ir(first)
    second = parse(printed, "<printed>")
    why = structural_difference(first, second)
    assert why is None, f"{why}\n--- printed ---\n{printed}"
    again = print_ir(second)
    assert again == printed, f"not a fixed point:\n--- first ---\n{printed}\n--- second ---\n{again}"
    return first, second, printed


def function_round_trip(fn: Function) -> tuple[Function, str]:
    """Print a (builder-made) function, parse it back: structurally equal, and a fixed point."""
    printed = print_ir(fn)
    module = parse(printed, "<printed>")
    back = module.functions[module.entry] if module.entry is not None else list(module.functions.values())[-1]
    why = structural_difference(fn, back)
    assert why is None, f"{why}\n--- printed ---\n{printed}"
    again = print_ir(back)
    assert again == printed, f"not a fixed point:\n--- first ---\n{printed}\n--- second ---\n{again}"
    return back, printed


def same_values(a: object, b: object) -> bool:
    """Bitwise equality of evaluation results (tensors or nested tuples), NaN equal to NaN."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.is_floating_point:
            return bool(torch.equal(a.isnan(), b.isnan())) and bool(torch.equal(a.nan_to_num(), b.nan_to_num()))
        return bool(torch.equal(a, b))
    return False


def evaluates_identically(a: Function, b: Function, *inputs: object) -> None:
    """``evaluate`` gives bitwise the same result for both functions."""
    x, y = evaluate(a, *inputs), evaluate(b, *inputs)
    assert same_values(x, y), f"{x!r}\n!=\n{y!r}"
