"""``tfexec run PROGRAM``: evaluate a program with the evaluator spec's visitor and print or
write its outputs, with the dim sizes used."""

import argparse

import torch

from tfexec.cli.common import (
    Subparsers, add_program_arguments, flatten, load_program, progress, show, type_check,
)
from tfexec.cli.outputs import TENSORS, add_force_argument, claim, command_inputs, write_tensors_out
from tfexec.cli.inputs import add_input_arguments, prepare_noted


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``run``."""
    p = sub.add_parser(
        "run", parents=[parent], help="evaluate a program and print or write its outputs",
        description="Type-check PROGRAM, evaluate it on its inputs (--inputs, or random ones) with the evaluator "
        "spec's visitor, and print the outputs with the dim sizes used, or write them with --out.",
    )
    add_program_arguments(p)
    add_input_arguments(p)
    p.add_argument("--out", metavar="FILE", help="write the outputs to this .safetensors file instead of printing them")
    add_force_argument(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Evaluate and show; exit 0 (a failing program raises, which ``main`` reports)."""
    import tfexec

    program = load_program(args.file, args.function)
    out = claim(args.out, TENSORS, command_inputs(args), force=args.force) if args.out else None
    type_check(program)
    prepared = prepare_noted(program, args)
    with progress(args, f"evaluating {program.function.name}"):
        result = tfexec.evaluate(prepared.target, *prepared.inputs, dims=prepared.body_dims)
    dims = prepared.dims_line()
    if dims is not None:
        print(dims)
    if out is not None:
        flat: dict[str, torch.Tensor] = {}
        flatten("output", result, flat)
        write_tensors_out(flat, out)
        print(f"wrote {len(flat)} tensor(s) to {args.out}")
    else:
        show("output", result)
    return 0
