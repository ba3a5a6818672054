"""Property: a random well-typed program (``tfexec.testing.programs``) prints, parses back
structurally equal, prints again identically, and evaluates bitwise the same."""

from hypothesis import given

from text_helpers import evaluates_identically, function_round_trip
from tfexec.testing import Program, programs


@given(programs(weights=False, handlers=False))
def test_random_programs_round_trip(program: Program) -> None:
    back, _ = function_round_trip(program.function)
    evaluates_identically(program.function, back, *program.inputs)


@given(programs(max_ops=4, loops=True, calls=True, tuples=True, names=False, weights=False, handlers=False))
def test_random_programs_without_names_round_trip(program: Program) -> None:
    back, _ = function_round_trip(program.function)
    evaluates_identically(program.function, back, *program.inputs)
