"""``tfexec diff A B``: compare two dumps (``tfexec dump``, or another runtime's in the same
format) node by node with per-dtype tolerances, and name the first divergence.

Exit codes: 0 the dumps agree, 1 they diverge, 2 a dump cannot be read or an argument is
wrong. ``parse_tolerances`` reads the tolerance flags here and in ``tfexec check``.
"""

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tfexec.cli.common import Subparsers, UsageError
from tfexec.ir.dtypes import DType

if TYPE_CHECKING:  # tfexec.compare is imported when diff, dump or a check with tolerances runs
    from tfexec.compare import Tolerance


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``diff``."""
    p = sub.add_parser(
        "diff", parents=[parent], help="compare two dumps with per-dtype tolerances and name the first divergence",
        description=diff_description() + " Exit 0 when they agree, 1 when any value differs or is only in one dump.",
    )
    add_diff_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Compare the two dumps and print the per-node table; returns the exit code."""
    from tfexec.compare import DumpError, compare_tables

    tolerances = parse_tolerances(args.tol, args.rtol, args.atol, args.exact)
    try:
        report = compare_tables(args.a, args.b, tolerances=tolerances, allow_missing=args.allow_missing)
    except DumpError as exc:
        raise UsageError(str(exc)) from None
    print(report)
    return 0 if report.ok else 1


def diff_description() -> str:
    """What ``tfexec diff`` does, with the default tolerances."""
    from tfexec.compare import DEFAULT_TOLERANCES

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


def parse_tolerances(
    items: Sequence[str], rtol: float | None = None, atol: float | None = None, exact: bool = False
) -> "dict[DType, Tolerance]":
    """The tolerance flags, read by the one parser (``tfexec.compare.tolerance_flags``); a wrong one is a usage error."""
    from tfexec.compare.tolerance_flags import ToleranceFlagError
    from tfexec.compare.tolerance_flags import parse_tolerances as parse

    try:
        return parse(items, rtol, atol, exact)
    except ToleranceFlagError as exc:
        raise UsageError(str(exc)) from None
