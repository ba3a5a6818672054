"""Testing helpers for tfexec: hypothesis strategies for random well-typed programs.

``programs()`` draws a ``Program`` (a type-checked ``Function`` with inputs it evaluates
on without error), for property tests such as "both evaluation routes agree". Run its
``target`` (the function, or the ``LoadedModule`` supplying its weights)::

    from hypothesis import given
    from tfexec import check_equivalence
    from tfexec.testing import programs

    @given(programs())
    def test_routes_agree(program):
        assert check_equivalence(program.target, *program.inputs).ok

``programs(failing=True)`` draws programs that fail at run time instead (``Program.error``
is a fragment of the message). ``tfexec.testing.handlers`` holds the test-only ops with
plain ``register_eval`` handlers the programs call (importing ``tfexec.testing`` registers
them).

Needs ``hypothesis`` (a development dependency, not a runtime one).
"""

from tfexec.testing import handlers as handlers
from tfexec.testing.strategies import (
    ENSURABLE as ENSURABLE,
    FAILURE_KINDS as FAILURE_KINDS,
    Program as Program,
    programs as programs,
    render as render,
)

__all__ = ["ENSURABLE", "FAILURE_KINDS", "Program", "handlers", "programs", "render"]
