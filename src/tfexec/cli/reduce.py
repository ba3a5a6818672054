"""``tfexec reduce PROGRAM --check "COMMAND {program} {inputs}" [--fail-regex R]``: shrink a
program on which a check command fails to a minimal one that still fails (docs/reduce.md)."""

import argparse

from tfexec.cli.common import Subparsers, UsageError, add_program_arguments, load_program
from tfexec.cli.outputs import REDUCED_INPUTS, add_force_argument, claim, command_inputs, reduced_program
from tfexec.cli.inputs import add_input_arguments, prepare_noted, with_dim_params


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``reduce``."""
    from tfexec.reduce._cli import REDUCE_DESCRIPTION, add_reduce_arguments

    p = sub.add_parser(
        "reduce", parents=[parent],
        help="shrink a program on which a check command fails to a minimal one that still fails",
        description=REDUCE_DESCRIPTION,
    )
    add_program_arguments(p)
    add_input_arguments(p)
    add_reduce_arguments(p)
    add_force_argument(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Reduce the program with the check command."""
    from tfexec.reduce._cli import ReduceUsageError, run_reduce

    program = load_program(args.file, args.function)
    _claim_outputs(args)
    prepared = with_dim_params(program, prepare_noted(program, args))  # the inputs file carries every size
    try:
        return run_reduce(args, prepared.target, program.function, prepared.inputs)
    except ReduceUsageError as exc:
        raise UsageError(str(exc)) from None


def _claim_outputs(args: argparse.Namespace) -> None:
    """The two files ``--out DIR`` receives, claimed before any check runs (``cli.outputs``)."""
    from pathlib import Path

    from tfexec.reduce import INPUTS_FILE, PROGRAM_FILE

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    inputs, values = command_inputs(args), out / INPUTS_FILE
    claim(values, REDUCED_INPUTS, inputs, force=args.force, new_folder=True)
    claim(out / PROGRAM_FILE, reduced_program(values), inputs, force=args.force, new_folder=True)
