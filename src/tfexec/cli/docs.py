"""``tfexec docs`` and ``tfexec ops``: the generated reference pages, and one op's entry."""

import argparse

from tfexec.cli.common import Subparsers, UsageError
from tfexec.cli.outputs import DOCS_PAGE, add_force_argument, claim


def add_docs_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``docs``."""
    p = sub.add_parser(
        "docs", parents=[parent], help="print, write or check the generated docs (docs/ops.md, docs/spec-coverage.md, ...)",
        description="ops and coverage print one generated page; write regenerates every page of the checkout; "
        "check fails (exit 1, with a diff) when a committed page is stale or has a gap.",
    )
    p.add_argument("action", choices=("ops", "coverage", "check", "write"), help="what to do (see above)")
    p.add_argument("--root", help="the checkout (default: found from the working directory)")
    p.add_argument("-o", "--out", metavar="FILE", help="write the page here instead of stdout (ops, coverage)")
    add_force_argument(p)
    return p


def run_docs(args: argparse.Namespace) -> int:
    """Do the docs action."""
    from tfexec.docs._check import NoCheckout
    from tfexec.docs._cli import run_docs as docs_action

    if args.out is not None:
        claim(args.out, DOCS_PAGE, (), force=args.force)
    try:
        return docs_action(args.action, args.root, args.out)
    except NoCheckout as exc:
        raise UsageError(str(exc)) from None


def add_ops_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``ops``."""
    p = sub.add_parser(
        "ops", parents=[parent], help="one op's reference entry, or every op's name and summary",
        description="Print the docs/ops.md entry of op NAME (type rule, value rule, constraints, examples), or "
        "without NAME the list of every op. A statement form of the text form (grid, carry, const, ...) "
        "points to its section of docs/text-form.md.",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="an op name, e.g. softmax (default: list every op)")
    return p


def run_ops(args: argparse.Namespace) -> int:
    """Print the entry."""
    from tfexec.docs._cli import UnknownOp, run_ops as ops_entry

    try:
        return ops_entry(args.name)
    except UnknownOp as exc:
        raise UsageError(str(exc)) from None
