"""What a fuzz run draws: programs() restricted to some ops, dtypes and sizes, drawn the
same way for a seed; options a run cannot start with are refused."""

import itertools

import pytest
from hypothesis import given, settings

from tfexec.fuzz import FuzzOptions, FuzzUsageError
from tfexec.fuzz._options import draw_programs
from tfexec.ir.dims import resolve_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Function
from tfexec.ir.types import TensorType
from tfexec.semantics.keys import node_sources
from tfexec.testing import Program, programs
from tfexec.text import print_ir

ALLOWED = frozenset({"gelu", "add", "mul", "slice", "dim_add", "dim_mod"})


def _ops(fn: Function) -> set[str]:
    return {n.target.name for n in node_sources(fn).values() if isinstance(n, Call) and not isinstance(n.target, Function)}


@settings(max_examples=20)
@given(programs(ops=ALLOWED, handlers=False, weights=False, layouts=False))
def test_programs_call_only_the_ops_asked_for(program: Program) -> None:
    assert _ops(program.function) <= ALLOWED


@settings(max_examples=20)
@given(programs(max_size=3, dtypes=(DType.float16,), handlers=False, cast_inputs=False))
def test_sizes_stay_under_max_size(program: Program) -> None:
    for p in program.function.params:
        if isinstance(p.type, TensorType):
            assert all(resolve_dim(d, program.dims) <= 3 for d in p.type.shape)


def test_a_larger_max_size_draws_larger_axes() -> None:
    drawn = list(itertools.islice(draw_programs(FuzzOptions(max_size=40, layouts=False)), 40))
    sizes = {resolve_dim(d, p.dims) for p in drawn for q in p.function.params if isinstance(q.type, TensorType)  # type: ignore[attr-defined]
             for d in q.type.shape}
    assert max(sizes) > 6


def test_the_same_seed_draws_the_same_programs() -> None:
    def texts(seed: int) -> list[str]:
        return [print_ir(p.function) for p in itertools.islice(draw_programs(FuzzOptions(seed=seed)), 25)]  # type: ignore[attr-defined]

    assert texts(5) == texts(5)
    assert texts(5) != texts(6)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"count": None, "seconds": None}, "needs a budget"),
    ({"count": 0}, "--count must be at least 1"),
    ({"seconds": 0.0}, "--seconds must be a positive number"),
    ({"ops": frozenset({"gelu", "gleu"})}, "unknown op name(s) gleu"),
    ({"max_size": 0}, "--max-size must be at least 1"),
    ({"max_checks": 0}, "--max-checks must be at least 1"),
])
def test_options_a_run_cannot_start_with(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(FuzzUsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        FuzzOptions(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"ops": "gelu"}, "collection of op names"),
    ({"ops": ("nosuch",)}, "unknown op name"),
    ({"max_size": 0}, "max_size must be at least 1"),
    ({"dtypes": ("f32",)}, "DType values"),
])
def test_programs_refuses_bad_options(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        programs(**kwargs)  # type: ignore[arg-type]
