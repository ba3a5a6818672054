"""The command lines of the generated docs: ``python -m tfexec.docs`` and the ``tfexec docs`` /
``tfexec ops`` subcommands (``tfexec.cli`` calls ``run_docs`` and ``run_ops``)."""

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tfexec.docs._check import NoCheckout, check, find_root, write
from tfexec.docs._coverage import CoverageError, coverage, render_coverage
from tfexec.docs._opref import DocsError, find_op, op_reference, render_entry, render_index, render_ops
from tfexec.docs._textform import STATEMENT_FORMS, TextFormError, statement_form
from tfexec.ir.ops.catalogue import OPS_BY_NAME
from tfexec.wording import did_you_mean

ACTIONS = ("ops", "coverage", "check", "write")


class UnknownOp(Exception):
    """``tfexec ops NAME`` for a name no op has (the message lists close matches): a usage error."""


def _emit(text: str, out: str | None) -> None:
    if out is None:
        sys.stdout.write(text)
    else:
        from tfexec.loading.atomic import write_text

        write_text(out, text)
        print(f"wrote {out}")


def run_docs(action: str, root: str | None = None, out: str | None = None) -> int:
    """Do ``action`` (one of ``ACTIONS``); print what it produced; return the exit code.
    ``NoCheckout`` propagates: a usage error."""
    started = time.perf_counter()
    try:
        if action == "ops":
            _emit(render_ops(), out)
            return 0
        checkout = find_root(Path(root) if root else None)
        if action == "coverage":
            cov = coverage(checkout)
            _emit(render_coverage(cov), out)
            for problem in cov.problems:
                print(problem, file=sys.stderr)
            return 1 if cov.problems else 0
        if action == "write":
            for path in write(checkout):
                print(f"wrote {path}")
            problems = list(coverage(checkout).problems)
        else:
            problems = check(checkout)
    except (DocsError, CoverageError, TextFormError) as exc:
        print(f"tfexec docs: {exc}", file=sys.stderr)
        return 1
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"tfexec docs {action}: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    if action == "check":
        print(f"docs are current and complete ({time.perf_counter() - started:.1f} s)")
    return 0


def run_ops(name: str | None) -> int:
    """Print one op's reference entry, or every op's name and summary when ``name`` is None; a
    statement form of the text form (``grid``) points to its section of docs/text-form.md.
    An unknown name raises ``UnknownOp`` naming the closest ones."""
    if name is None:
        sys.stdout.write(render_index())
        return 0
    form = statement_form(name)
    if form is not None:
        sys.stdout.write(form)
        return 0
    cls = find_op(name)
    if cls is None:
        hint = did_you_mean(name, sorted(OPS_BY_NAME) + sorted(STATEMENT_FORMS), n=4, cutoff=0.5, sep=", ")
        hint = hint or "; `tfexec ops` lists them"
        raise UnknownOp(f"no op named {name!r}{hint}")
    try:
        sys.stdout.write(render_entry(op_reference(cls), heading="#"))
    except DocsError as exc:
        print(f"tfexec ops: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tfexec.docs``; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m tfexec.docs", description="Print, write or check the generated docs.")
    parser.add_argument("what", nargs="?", choices=("ops", "coverage"), help="print one page to stdout")
    parser.add_argument("--check", action="store_true", help="fail (exit 1, with a diff) if a page is stale or has a gap")
    parser.add_argument(
        "--write", action="store_true",
        help="rewrite docs/ops.md and docs/spec-coverage.md, and the example outputs of docs/text-form.md",
    )
    parser.add_argument("--root", help="the checkout (default: found from the working directory)")
    parser.add_argument("-o", "--out", help="write the page here instead of stdout")
    args = parser.parse_args(argv)
    chosen = [a for a in (args.what, "check" if args.check else None, "write" if args.write else None) if a]
    if len(chosen) != 1:
        parser.print_usage(sys.stderr)
        print("python -m tfexec.docs: give exactly one of ops, coverage, --check, --write", file=sys.stderr)
        return 2
    try:
        return run_docs(chosen[0], args.root, args.out)
    except NoCheckout as exc:
        print(f"python -m tfexec.docs: {exc}", file=sys.stderr)
        return 2
