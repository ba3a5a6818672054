"""``tfexec dump`` and ``tfexec diff``: the commands' work, hooked into ``tfexec.cli``.

``dump`` writes tfexec's per-node values of a program in the dump format (a safetensors
file and its JSON index); ``diff`` compares two dumps — tfexec's and another runtime's, say
— with per-dtype tolerances and names the first divergence. Exit codes: 0 the dumps agree,
1 they diverge, 2 a dump cannot be read or an argument is wrong.
"""

import argparse
from collections.abc import Mapping, Sequence

from tfexec.compare._format import DumpError
from tfexec.compare._tables import compare_tables, write_program_dump
from tfexec.compare._tolerance import DEFAULT_TOLERANCES
from tfexec.compare.tolerance_flags import ToleranceFlagError, parse_tolerances
from tfexec.ir.expr import Function
from tfexec.loading import LoadedModule


class CompareUsageError(Exception):
    """Bad command-line input for ``tfexec dump`` or ``tfexec diff`` (exit code 2)."""


DUMP_DESCRIPTION = (
    "Evaluate the program with tfexec and write every node's value to OUT (safetensors, one tensor per node "
    "key) and its index next to it (OUT with .index.json for .safetensors): key, node, op, location, shape and "
    "dtype of each tensor, in topological order. The format is docs/dump-format.md."
)


def run_dump(
    args: argparse.Namespace, target: "Function | LoadedModule", function: Function, inputs: Sequence[object],
    dims: "Mapping[str, int] | None" = None,
) -> int:
    """Evaluate ``target`` on ``inputs`` and write the dump; returns the exit code."""
    index, count = write_program_dump(target, tuple(inputs), args.out, loops=args.loops, dims=dims)
    print(f"wrote {count} value(s) to {args.out} and its index {index}")
    return 0


def diff_description() -> str:
    """What ``tfexec diff`` does, with the default tolerances."""
    floats = ", ".join(f"{d.short} {t}" for d, t in DEFAULT_TOLERANCES.items())
    return (
        "Compare dump B (actual) with dump A (expected) node by node: same dtype, same shape, and values within "
        f"the dtype's tolerance (defaults: {floats}; integers and b1 exact). Either dump may come from another "
        "runtime (docs/dump-format.md); the order and the op/location columns come from the indexes."
    )


def add_diff_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``tfexec diff``."""
    p.add_argument("a", metavar="A", help="the expected dump (.safetensors, or its .index.json)")
    p.add_argument("b", metavar="B", help="the actual dump")
    p.add_argument("--rtol", type=float, default=None, help="relative tolerance for every float dtype")
    p.add_argument("--atol", type=float, default=None, help="absolute tolerance for every float dtype")
    p.add_argument("--tol", action="append", default=[], metavar="DTYPE=RTOL,ATOL",
                   help="the tolerance of one dtype, e.g. bf16=2e-2,1e-3 (repeatable)")
    p.add_argument("--exact", action="store_true", help="every value must be equal (NaN equals NaN)")
    p.add_argument("--allow-missing", action="store_true",
                   help="keys only one dump has are listed but do not fail the comparison")


def run_diff(args: argparse.Namespace) -> int:
    """Compare the two dumps and print the per-node table; returns the exit code."""
    try:
        tolerances = parse_tolerances(args.tol, args.rtol, args.atol, args.exact)
    except ToleranceFlagError as exc:
        raise CompareUsageError(str(exc)) from None
    try:
        report = compare_tables(args.a, args.b, tolerances=tolerances, allow_missing=args.allow_missing)
    except DumpError as exc:
        raise CompareUsageError(str(exc)) from None
    print(report)
    return 0 if report.ok else 1
