"""``tfexec dump PROGRAM --out FILE``: every intermediate value, keyed by node key, with its
JSON index, in the dump format (docs/dump-format.md), for a comparison with another runtime
(``tfexec diff``)."""

import argparse

from tfexec.cli.check import LOOPS_HELP
from tfexec.cli.common import Subparsers, add_program_arguments, load_program, progress, type_check
from tfexec.cli.outputs import DUMP, DUMP_INDEX, add_force_argument, claim, command_inputs
from tfexec.cli.inputs import add_input_arguments, prepare_noted

DUMP_DESCRIPTION = (
    "Evaluate the program with tfexec and write every node's value to OUT (safetensors, one tensor per node "
    "key) and its index next to it (OUT with .index.json for .safetensors): key, node, op, location, shape and "
    "dtype of each tensor, in topological order. The format is docs/dump-format.md."
)


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``dump``."""
    p = sub.add_parser(
        "dump", parents=[parent], help="write every intermediate value, keyed by node key, with its JSON index",
        description="Type-check PROGRAM, then: " + DUMP_DESCRIPTION,
    )
    add_program_arguments(p)
    add_input_arguments(p)
    p.add_argument("--out", required=True, metavar="FILE", help="the .safetensors file to write (its index goes next to it)")
    add_force_argument(p)
    p.add_argument("--loops", choices=("collapse", "expand"), default="collapse", help=LOOPS_HELP)
    return p


def run(args: argparse.Namespace) -> int:
    """Evaluate keeping every value and write the dump."""
    from tfexec.compare import write_program_dump

    program = load_program(args.file, args.function)
    from tfexec.compare import index_path

    inputs = command_inputs(args)
    claim(args.out, DUMP, inputs, force=args.force)
    claim(index_path(args.out), DUMP_INDEX, inputs, force=args.force, flag="--out's index")
    type_check(program)
    prepared = prepare_noted(program, args)
    dims = prepared.dims_line()
    if dims is not None:
        print(dims)
    with progress(args, f"evaluating {program.function.name}, keeping every value"):
        index, count = write_program_dump(prepared.target, tuple(prepared.inputs), args.out, loops=args.loops,
                                          dims=prepared.body_dims)
        print(f"wrote {count} value(s) to {args.out} and its index {index}")
        return 0
