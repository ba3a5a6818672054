"""``tfexec explain PROGRAM -o page.html``: one self-contained HTML page to step through a run
on both routes (docs/tutorial.md)."""

import argparse

from tfexec.cli.common import Subparsers, UsageError, add_program_arguments, load_program
from tfexec.cli.outputs import PAGE, add_force_argument, claim, command_inputs
from tfexec.cli.inputs import add_input_arguments, prepare_noted, with_dim_params


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``explain``."""
    from tfexec.explain._cli import EXPLAIN_DESCRIPTION, EXPLAIN_HELP, add_explain_arguments

    p = sub.add_parser("explain", parents=[parent], help=EXPLAIN_HELP, description=EXPLAIN_DESCRIPTION)
    add_program_arguments(p)
    add_input_arguments(p)
    add_explain_arguments(p)
    add_force_argument(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Build and write the page."""
    from tfexec.explain._cli import ExplainUsageError, run_explain

    program = load_program(args.file, args.function)
    if args.out != "-":
        claim(args.out, PAGE, command_inputs(args), force=args.force, flag="-o")
    prepared = with_dim_params(program, prepare_noted(program, args))  # a body-only dim travels as an input
    try:
        return run_explain(args, prepared.target, program.function, prepared.inputs)
    except ExplainUsageError as exc:
        raise UsageError(str(exc)) from None
