"""``tfexec check PROGRAM``: run both routes and print the per-node comparison, with an
honest verdict: exit 0 only when the program ran and the routes agree node by node."""

import argparse
import sys

from tfexec.cli.common import Subparsers, add_program_arguments, load_program, note, progress, type_check
from tfexec.cli.inputs import add_input_arguments, prepare

LOOPS_HELP = "loop-body values: one row per loop node (collapse, the default) or one per iteration (expand)"


def add_tolerance_arguments(p: argparse.ArgumentParser) -> None:
    """``--rtol`` and ``--atol`` (shared with ``diff``)."""
    p.add_argument("--rtol", type=float, default=None, help="relative tolerance (default: values must be bitwise equal)")
    p.add_argument("--atol", type=float, default=None, help="absolute tolerance (default: values must be bitwise equal)")


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``check``."""
    p = sub.add_parser(
        "check", parents=[parent], help="run both routes and compare them node by node",
        description="Type-check PROGRAM, run it with the evaluator spec's visitor and through the lowered forward "
        "graph, and print the per-node table. Exit 0 when the routes agree; 1 when they disagree or when the "
        "program fails (also when it fails the same way on both routes: the routes agree, the program does not run).",
    )
    add_program_arguments(p)
    add_input_arguments(p)
    add_tolerance_arguments(p)
    p.add_argument("--loops", choices=("collapse", "expand"), default="collapse", help=LOOPS_HELP)
    return p


def run(args: argparse.Namespace) -> int:
    """Compare the routes; exit 0 only for a program that ran and agrees."""
    from tfexec import check_equivalence

    program = load_program(args.file, args.function)
    type_check(program)
    prepared = prepare(program, args)
    for line in prepared.notes:
        note(args, line)
    with progress(args, f"checking {program.function.name}: visitor, lowering, node-by-node comparison"):
        report = check_equivalence(
            prepared.target, *prepared.inputs, rtol=args.rtol, atol=args.atol, loops=args.loops, dims=prepared.body_dims
        )
    dims = prepared.dims_line()
    if dims is not None:
        print(dims)
    if report.error is not None:
        print(f"both routes raised the same error: {report.error}")
        print("FAILED: the program fails, the same way on both routes (the routes agree on the error)")
        print(f"tfexec check: {report.error}", file=sys.stderr)
        return 1
    print(report)
    return 0 if report.ok else 1
