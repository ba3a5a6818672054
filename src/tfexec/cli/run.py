"""``tfexec run PROGRAM``: evaluate a program with the evaluator spec's visitor and print or
write its outputs, with the dim sizes used."""

import argparse

import torch

from tfexec.cli.common import (
    Subparsers, add_program_arguments, check_out, flatten, load_program, progress, show, type_check, write_out,
)
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
    return p


def run(args: argparse.Namespace) -> int:
    """Evaluate and show; exit 0 (a failing program raises, which ``main`` reports)."""
    import tfexec

    program = load_program(args.file, args.function)
    if args.out:
        check_out(args.out)
    type_check(program)
    prepared = prepare_noted(program, args)
    with progress(args, f"evaluating {program.function.name}"):
        out = tfexec.evaluate(prepared.target, *prepared.inputs, dims=prepared.body_dims)
    dims = prepared.dims_line()
    if dims is not None:
        print(dims)
    if args.out:
        flat: dict[str, torch.Tensor] = {}
        flatten("output", out, flat)
        write_out(flat, args.out)
        print(f"wrote {len(flat)} tensor(s) to {args.out}")
    else:
        show("output", out)
    return 0
