"""``tfexec validate FILE [--function NAME]``: lower a program and validate the lowering.

Exit codes: 0 validated for all inputs, 1 a problem found (or the program does not lower),
2 a bad argument.
"""

from tfexec.ir.expr import Function
from tfexec.loading import LoadedModule

__all__ = ["VALIDATE_DESCRIPTION", "VALIDATE_HELP", "run_validate"]


VALIDATE_HELP = "prove the lowering computes the program for all inputs, without running it"
VALIDATE_DESCRIPTION = (
    "Lower PROGRAM's function and validate the lowering: the program's denotation (from the HIR) and the lowered "
    "graph's (from its nodes) are computed symbolically and compared key by key, with the failure-capable steps, "
    "the hoisted loop frontiers, what run frees and every declared type. Nothing is executed, so no inputs or dim "
    "sizes are needed. Exit code 0: validated for all inputs; 1: a problem."
)


def run_validate(target: "Function | LoadedModule") -> int:
    """Lower and validate ``target``, print the report; returns the exit code."""
    from tfexec.forward.lower import lower
    from tfexec.validate import validate

    report = validate(lower(target))
    print(report)
    return 0 if report.ok else 1
