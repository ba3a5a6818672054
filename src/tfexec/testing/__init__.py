"""Testing helpers for tfexec: hypothesis strategies for random well-typed programs.

``programs()`` draws a ``Program`` (a type-checked ``Function`` with inputs it evaluates
on without error), for property tests such as "both evaluation routes agree"::

    from hypothesis import given
    from tfexec import check_equivalence
    from tfexec.testing import programs

    @given(programs())
    def test_routes_agree(program):
        assert check_equivalence(program.function, *program.inputs).ok

Needs ``hypothesis`` (a development dependency, not a runtime one).
"""

from tfexec.testing.strategies import Program as Program, programs as programs, render as render

__all__ = ["Program", "programs", "render"]
