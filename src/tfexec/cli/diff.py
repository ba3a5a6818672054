"""``tfexec diff A B``: compare two dumps (``tfexec dump``, or another runtime's in the same
format) node by node with per-dtype tolerances, and name the first divergence."""

import argparse

from tfexec.cli.common import Subparsers, UsageError


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``diff``."""
    from tfexec.compare._cli import add_diff_arguments, diff_description

    p = sub.add_parser(
        "diff", parents=[parent], help="compare two dumps with per-dtype tolerances and name the first divergence",
        description=diff_description() + " Exit 0 when they agree, 1 when any value differs or is only in one dump.",
    )
    add_diff_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Compare the dumps."""
    from tfexec.compare._cli import CompareUsageError, run_diff

    try:
        return run_diff(args)
    except CompareUsageError as exc:
        raise UsageError(str(exc)) from None
