"""``tfexec validate PROGRAM [--function NAME]``: prove the lowering computes the program for
all inputs, without running it (``tfexec.validate``).

Exit codes: 0 validated for all inputs, 1 a problem found (or the program does not lower),
2 a bad argument.
"""

import argparse

from tfexec.cli.common import Subparsers, add_program_arguments, load_program, progress

VALIDATE_HELP = "prove the lowering computes the program for all inputs, without running it"
VALIDATE_DESCRIPTION = (
    "Lower PROGRAM's function and validate the lowering: the program's denotation (from the HIR) and the lowered "
    "graph's (from its nodes) are computed symbolically and compared key by key, with the failure-capable steps, "
    "the hoisted loop frontiers, what run frees and every declared type. Nothing is executed, so no inputs or dim "
    "sizes are needed. Exit code 0: validated for all inputs; 1: a problem."
)


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``validate``."""
    p = sub.add_parser("validate", parents=[parent], help=VALIDATE_HELP, description=VALIDATE_DESCRIPTION)
    add_program_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Lower and validate the program, print the report; returns the exit code."""
    from tfexec.forward.lower import lower
    from tfexec.validate import validate

    program = load_program(args.file, args.function)
    with progress(args, f"validating the lowering of {program.function.name}"):
        report = validate(lower(program.target))
        print(report)
        return 0 if report.ok else 1
