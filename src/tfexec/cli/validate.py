"""``tfexec validate PROGRAM [--function NAME]``: prove the lowering computes the program for
all inputs, without running it (``tfexec.validate``)."""

import argparse

from tfexec.cli.common import Subparsers, add_program_arguments, load_program, progress


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``validate``."""
    from tfexec.validate._cli import VALIDATE_DESCRIPTION, VALIDATE_HELP

    p = sub.add_parser("validate", parents=[parent], help=VALIDATE_HELP, description=VALIDATE_DESCRIPTION)
    add_program_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Lower and validate."""
    from tfexec.validate._cli import run_validate

    program = load_program(args.file, args.function)
    with progress(args, f"validating the lowering of {program.function.name}"):
        return run_validate(program.target)
