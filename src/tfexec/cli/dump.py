"""``tfexec dump PROGRAM --out FILE``: every intermediate value, keyed by node key, for a
comparison with another runtime (``tfexec diff``)."""

import argparse

import torch

from tfexec.cli.check import LOOPS_HELP
from tfexec.cli.common import (
    Subparsers, add_program_arguments, check_out, flatten, load_program, note, progress, type_check, write_out,
)
from tfexec.cli.inputs import add_input_arguments, prepare


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``dump``."""
    p = sub.add_parser(
        "dump", parents=[parent], help="write every intermediate value, keyed by node key",
        description="Type-check PROGRAM, evaluate it keeping every value, and write them to one .safetensors file "
        "keyed by node key (in evaluation order), for tfexec diff.",
    )
    add_program_arguments(p)
    add_input_arguments(p)
    p.add_argument("--out", required=True, metavar="FILE", help="the .safetensors file to write")
    p.add_argument("--loops", choices=("collapse", "expand"), default="collapse", help=LOOPS_HELP)
    return p


def run(args: argparse.Namespace) -> int:
    """Evaluate keeping the whole table and write it."""
    from tfexec.evaluator.value import Value
    from tfexec.evaluator.visitor import evaluate_value

    program = load_program(args.file, args.function)
    check_out(args.out)
    type_check(program)
    prepared = prepare(program, args)
    for line in prepared.notes:
        note(args, line)
    table: dict[str, Value] = {}
    with progress(args, f"evaluating {program.function.name}, keeping every value"):
        evaluate_value(prepared.target, prepared.inputs, table=table, loops=args.loops)
    flat: dict[str, torch.Tensor] = {}
    for key, value in table.items():
        flatten(key, value, flat)
    write_out(flat, args.out, metadata={"tfexec.order": "\n".join(flat)})
    dims = prepared.dims_line()
    if dims is not None:
        print(dims)
    print(f"wrote {len(flat)} value(s) to {args.out}")
    return 0
