"""Running the example and refusal programs of op docstrings, with fixed inputs.

An example is a text-form function (``def example(x: f32[2, 3]): return softmax(x)``). It
is parsed, printed canonically (the doc shows what ``print_ir`` prints, so it round-trips),
type-checked and evaluated on the inputs ``example_input`` makes from each parameter's
type. A refusal is the same kind of program, expected to fail: when the op is built, by
the type rule, or at run time.
"""

import math
from dataclasses import dataclass

import torch

from tfexec.errors import EvalError, ParseError, TfexecError, TypeInferenceError
from tfexec.evaluator.visitor import evaluate
from tfexec.infer import infer_types
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Function
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.text import parse, print_ir

FILENAME = "example"
"""The file name example programs are parsed under (it starts every error's location)."""
SIGNIFICANT_DIGITS = 4


class ExampleError(Exception):
    """An example did not run, or a refusal did not refuse (the message shows the program)."""


@dataclass(frozen=True, slots=True)
class ExampleRun:
    """An example program as printed, its inputs and its result, each ``type value``."""

    program: str
    inputs: tuple[tuple[str, str], ...]
    result: str


@dataclass(frozen=True, slots=True)
class RefusalRun:
    """A refusal program as printed, where it failed (``stage``) and the error it raised."""

    label: str
    program: str
    stage: str
    error: str


def example_input(t: Type, where: str) -> object:
    """The fixed input for a parameter of type ``t``: ``n`` elements counting up from
    ``-(n // 2)`` (halved for floating dtypes, from 0 for ``u8``; ``b1`` alternates from True),
    in row-major order. Tuple types give a tuple of such inputs."""
    if isinstance(t, TupleType):
        return tuple(example_input(f, where) for f in t.fields)
    shape: list[int] = []
    for d in t.shape:
        if not isinstance(d, int):
            raise ExampleError(f"{where}: example parameters need static shapes, found {t}")
        shape.append(d)
    n = math.prod(shape)
    counting = torch.arange(n, dtype=torch.int64)
    if t.dtype is DType.bool:
        data = counting % 2 == 0
    elif t.dtype is DType.uint8:
        data = counting.to(torch.uint8)
    elif t.dtype.is_floating:
        data = ((counting - n // 2).to(torch.float64) / 2).to(t.dtype.torch)
    else:
        data = (counting - n // 2).to(t.dtype.torch)
    return data.reshape(shape)


def format_number(value: object) -> str:
    """One element as the docs print it: ``True``, ``-3``, ``0.5``, ``1.234e+04``, ``nan``."""
    if isinstance(value, bool) or isinstance(value, int):
        return str(value)
    assert isinstance(value, float)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:.{SIGNIFICANT_DIGITS}g}"
    return text if any(c in text for c in ".en") else text + ".0"


def _nested(data: object) -> str:
    if isinstance(data, list):
        return "[" + ", ".join(_nested(d) for d in data) + "]"
    return format_number(data)


def format_value(value: object, t: Type) -> str:
    """A value of HIR type ``t`` as ``type data``: ``f32[2] [0.5, 1.0]``; tuples field by field.
    An ``ExampleError`` if the value's dtype or shape is not the type's."""
    if isinstance(t, TupleType):
        if not isinstance(value, tuple) or len(value) != len(t.fields):
            raise ExampleError(f"a value of type {t} is {type(value).__name__}, not a tuple of {len(t.fields)}")
        return "(" + ", ".join(format_value(v, f) for v, f in zip(value, t.fields)) + ")"
    if not isinstance(value, torch.Tensor):
        raise ExampleError(f"a value of type {t} is {type(value).__name__}, not a tensor")
    found = TensorType(tuple(value.shape), DType.from_torch(value.dtype))
    if found != TensorType(t.shape, t.dtype):
        raise ExampleError(f"a value of type {t} is {found}")
    return f"{t} {_nested(value.detach().cpu().tolist())}"


def _canonical(program: str, where: str) -> tuple[str, Function]:
    """The program as ``print_ir`` prints it, and its one function parsed from that text."""
    module = parse(program, filename=FILENAME)
    if len(module.functions) != 1:
        raise ExampleError(f"{where}: an example defines one function, found {len(module.functions)}")
    printed = print_ir(module).strip("\n")
    (fn,) = parse(printed, filename=FILENAME).functions.values()
    return printed, fn


def run_example(program: str, where: str) -> ExampleRun:
    """Parse, print, type-check and evaluate an example; an ``ExampleError`` if any step fails."""
    try:
        printed, fn = _canonical(program, where)
        typed = infer_types(fn)
        inputs = [example_input(p.type, where) for p in fn.params]
        result = evaluate(fn, *inputs)
    except TfexecError as exc:
        raise ExampleError(f"{where}: the example\n{program}\nfails: {type(exc).__name__}: {exc}") from None
    body_type = typed.body.checked_type
    if body_type is None:
        raise ExampleError(f"{where}: type inference left the example's result untyped")
    try:
        shown = format_value(result, body_type)
    except ExampleError as exc:
        raise ExampleError(f"{where}: the example\n{program}\ndisagrees with its type: {exc}") from None
    return ExampleRun(
        program=printed,
        inputs=tuple((p.name, format_value(x, p.type)) for p, x in zip(fn.params, inputs)),
        result=shown,
    )


def run_refusal(label: str, program: str, where: str) -> RefusalRun:
    """Run a refusal program; it must fail with a ``TfexecError`` (not before being parsed)."""
    stage: str
    try:
        printed, fn = _canonical(program, where)
        stage = "by the type rule"
        infer_types(fn)
        stage = "at run time"
        evaluate(fn, *(example_input(p.type, where) for p in fn.params))
    except ParseError as exc:
        return RefusalRun(label, program, "when built", f"{type(exc).__name__}: {exc}")
    except (TypeInferenceError, EvalError) as exc:
        return RefusalRun(label, printed, stage, f"{type(exc).__name__}: {exc}")
    except TfexecError as exc:
        raise ExampleError(f"{where}: refusal ({label})\n{program}\nraised {type(exc).__name__}: {exc}") from None
    raise ExampleError(f"{where}: refusal ({label})\n{program}\nran without an error")
