"""Reducing a failing program: delta debugging over its nodes, with golden values at the cuts.

Main definitions
----------------
* ``reduce_failing(program, *inputs, fails=...) -> Reduced`` — the smallest program derived
  from ``program`` on which the predicate ``fails(function, inputs)`` still holds; cut
  nodes become parameters fed with tfexec's own values for them.
* ``Reduced`` — the reduced program's text, function and inputs; ``write(dir)`` saves
  ``program.tf.py`` and ``inputs.safetensors``, ``load_repro(dir)`` reads them back.
* ``output_mismatch(backend)``, ``raises(backend, match=...)`` — predicates for a backend
  that computes a wrong value, or raises a particular exception.
* ``tfexec reduce FILE --check "COMMAND {program} {inputs}" [--fail-regex R]`` — the same
  search with a command's exit status (and output) as the predicate.

Implementation notes
--------------------
* ``_flatten`` inlines calls and turns weights into parameters; ``_surgery`` builds the
  program keeping a set of nodes; ``_search`` is the delta debugging (bisect, then linear);
  ``_command`` and ``_cli`` are the command line.
"""

from tfexec.reduce._api import (
    INPUTS_FILE as INPUTS_FILE,
    PROGRAM_FILE as PROGRAM_FILE,
    Reduced as Reduced,
    load_repro as load_repro,
    reduce_failing as reduce_failing,
)
from tfexec.reduce._flatten import ReductionError as ReductionError
from tfexec.reduce._search import Step as Step
from tfexec.reduce.predicates import output_mismatch as output_mismatch, raises as raises

__all__ = [
    "INPUTS_FILE", "PROGRAM_FILE", "Reduced", "ReductionError", "Step", "load_repro", "output_mismatch", "raises",
    "reduce_failing",
]
