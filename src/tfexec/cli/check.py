"""``tfexec check PROGRAM``: run both routes and print the per-node comparison, with an
honest verdict: exit 0 only when the program ran and the routes agree node by node.

``tfexec check MODEL.py:FACTORY --against torch --example-shape ...`` compares with another
runtime instead: the model is imported through torch.export (running MODEL.py's code) and
every imported node's value is compared with PyTorch's own value of the node it came from
(``tfexec.frontends.torch.check_against_torch``, docs/against-torch.md)."""

import argparse
import sys
from pathlib import Path

from tfexec.cli.common import Subparsers, UsageError, add_program_arguments, load_program, progress, type_check
from tfexec.cli.inputs import add_input_arguments, prepare_noted

LOOPS_HELP = "loop-body values: one row per loop node (collapse, the default) or one per iteration (expand)"


def add_tolerance_arguments(p: argparse.ArgumentParser) -> None:
    """``--rtol``, ``--atol`` and (with ``--against``) ``--tol``."""
    p.add_argument("--rtol", type=float, default=None, help="relative tolerance (default: the routes must agree bitwise; "
                   "with --against, each float dtype's default)")
    p.add_argument("--atol", type=float, default=None, help="absolute tolerance (default: the routes must agree bitwise; "
                   "with --against, each float dtype's default)")
    p.add_argument("--tol", action="append", default=[], metavar="DTYPE=RTOL,ATOL",
                   help="with --against: the tolerance of one dtype, e.g. bf16=2e-2,1e-3 (repeatable)")


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``check``."""
    p = sub.add_parser(
        "check", parents=[parent], help="run both routes and compare them node by node (or against PyTorch)",
        description="Type-check PROGRAM, run it with the evaluator spec's visitor and through the lowered forward "
        "graph, and print the per-node table. Exit 0 when the routes agree; 1 when they disagree or when the "
        "program fails (also when it fails the same way on both routes: the routes agree, the program does not run). "
        "With --against torch, PROGRAM is MODEL.py:FACTORY: the model is imported through torch.export (this runs "
        "MODEL.py's Python code) on random inputs of the --example-shape sizes, and every imported node is compared "
        "with PyTorch's value of the exported node it came from, within each dtype's tolerance "
        "(docs/against-torch.md); exit 0 when every paired node agrees, 1 when one diverges.",
    )
    add_program_arguments(p)
    add_input_arguments(p)
    add_tolerance_arguments(p)
    p.add_argument("--loops", choices=("collapse", "expand"), default="collapse", help=LOOPS_HELP)
    p.add_argument("--against", choices=("torch",), default=None,
                   help="compare with another runtime instead of the two routes: torch (PROGRAM is MODEL.py:FACTORY)")
    p.add_argument(
        "--example-shape", action="append", default=[], metavar="SHAPE",
        help="with --against torch: one example input per use, in forward's order, as for tfexec import "
        "(2,8,32; B=2,S=8,32 for dynamic axes; i64:2,8 for a dtype); random, from --seed (default 0)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    """Compare the routes; exit 0 only for a program that ran and agrees."""
    from tfexec import check_equivalence

    if args.against is not None:
        return _run_against(args)
    for flag, given in (("--example-shape", args.example_shape), ("--tol", args.tol)):
        if given:
            raise UsageError(f"{flag} is for --against torch (the routes are compared with --rtol/--atol)")
    if ".py:" in args.file and not Path(args.file).exists():
        raise UsageError(f"{args.file}: a MODEL.py:FACTORY is checked with --against torch --example-shape ...")
    rtol, atol = _checked_tolerances(args)
    program = load_program(args.file, args.function)
    type_check(program)
    prepared = prepare_noted(program, args)
    with progress(args, f"checking {program.function.name}: visitor, lowering, node-by-node comparison"):
        report = check_equivalence(
            prepared.target, *prepared.inputs, rtol=rtol, atol=atol, loops=args.loops, dims=prepared.body_dims
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


def _run_against(args: argparse.Namespace) -> int:
    """``--against torch``: import MODEL.py:FACTORY and compare with PyTorch node by node."""
    from tfexec.cli.diff import parse_tolerances
    from tfexec.frontends.torch._cli import ImportUsageError, run_against

    refused = [
        flag for flag, given in (
            ("--inputs", args.inputs), ("--random", args.random), ("--dim", args.dim), ("--function", args.function),
            ("--loops expand", args.loops != "collapse"),
        ) if given
    ]
    if refused:
        raise UsageError(
            f"{', '.join(refused)}: not with --against torch (its inputs are random, of the --example-shape sizes, "
            "seeded by --seed; the function is the model's forward)"
        )
    tolerances = parse_tolerances(args.tol, args.rtol, args.atol)
    seed = 0 if args.seed is None else args.seed
    try:
        with progress(args, f"checking {args.file} against PyTorch: import, both runs, node-by-node comparison"):
            report = run_against(args.file, args.example_shape, seed, tolerances)
    except ImportUsageError as exc:
        raise UsageError(str(exc)) from None
    print(report)
    return 0 if report.ok else 1


def _checked_tolerances(args: argparse.Namespace) -> tuple[float | None, float | None]:
    """``--rtol`` and ``--atol``, read by the tolerance parser every command shares."""
    from tfexec.compare.tolerance_flags import ToleranceFlagError, checked

    try:
        return checked(args.rtol, "--rtol"), checked(args.atol, "--atol")
    except ToleranceFlagError as exc:
        raise UsageError(str(exc)) from None
