"""Differential testing of a backend against tfexec: random well-typed programs, finite
inputs, node-by-node comparison, every divergence reduced to a 1-minimal repro.

Main definitions
----------------
* ``fuzz(backend, options, corpus=DIR) -> FuzzReport`` — the loop; ``FuzzOptions`` says
  what to draw (ops, dtypes, sizes, loops/calls/layouts), the seed, the budget and the
  tolerances.
* ``Backend`` — ``(function, inputs) -> {node key: tensor}``; ``BackendDeclined`` is how it
  refuses a program; ``CommandBackend`` runs ``--check "CMD {program} {inputs} {dump}"``.
* ``replay(backend, DIR)`` — run a backend on a corpus entry again: its divergence, or None.
* ``tfexec fuzz --check CMD`` — the command line (docs/fuzz.md).

Implementation notes
--------------------
``_options`` draws programs from ``tfexec.testing.programs()`` (seeded Hypothesis runs),
``_inputs`` searches for inputs that keep every node finite, ``_findings`` holds the
signatures, the reduction predicate and the corpus writer, ``_run`` the loop; the
command line is ``tfexec.cli.fuzz``.
"""

from tfexec.fuzz._backend import (
    DECLINED_STATUS as DECLINED_STATUS,
    Backend as Backend,
    BackendCrash as BackendCrash,
    BackendDeclined as BackendDeclined,
    CommandBackend as CommandBackend,
)
from tfexec.fuzz._findings import Finding as Finding, replay as replay
from tfexec.fuzz._options import FuzzOptions as FuzzOptions, FuzzUsageError as FuzzUsageError
from tfexec.fuzz._run import FuzzReport as FuzzReport, fuzz as fuzz

__all__ = [
    "DECLINED_STATUS", "Backend", "BackendCrash", "BackendDeclined", "CommandBackend", "Finding", "FuzzOptions",
    "FuzzReport", "FuzzUsageError", "fuzz", "replay",
]
