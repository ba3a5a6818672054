"""``tfexec fuzz --check "COMMAND {program} {inputs} {dump}"``: differential testing of a
backend against tfexec on random programs, every finding reduced (docs/fuzz.md)."""

import argparse

from tfexec.cli.common import Subparsers, UsageError


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``fuzz``."""
    from tfexec.fuzz._cli import FUZZ_DESCRIPTION, add_fuzz_arguments

    p = sub.add_parser(
        "fuzz", parents=[parent], help="fuzz a backend against tfexec: random programs, every divergence reduced",
        description=FUZZ_DESCRIPTION + " Exit 0 when nothing is found, 1 when the backend diverged or crashed (or "
        "computed no program at all).",
    )
    add_fuzz_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Fuzz the check command."""
    from tfexec.fuzz._cli import run_fuzz
    from tfexec.fuzz._options import FuzzUsageError

    try:
        return run_fuzz(args)
    except FuzzUsageError as exc:
        raise UsageError(str(exc)) from None
