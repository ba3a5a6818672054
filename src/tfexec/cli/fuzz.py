"""``tfexec fuzz --check "COMMAND {program} {inputs} {dump}"``: differential testing of a
backend against tfexec on random programs, every finding reduced (docs/fuzz.md).

Exit codes: 0 nothing found (and at least one program compared), 1 the backend diverged or
crashed on some program, or computed none, 2 a bad argument or check command.
"""

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from tfexec.cli.common import Subparsers, UsageError
from tfexec.ir.dtypes import DType

if TYPE_CHECKING:  # tfexec.fuzz (hypothesis, the reducer) is imported when the command runs
    from tfexec.fuzz import FuzzOptions, FuzzReport


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``fuzz``."""
    p = sub.add_parser(
        "fuzz", parents=[parent], help="fuzz a backend against tfexec: random programs, every divergence reduced",
        description=FUZZ_DESCRIPTION + " Exit 0 when nothing is found, 1 when the backend diverged or crashed (or "
        "computed no program at all).",
    )
    add_fuzz_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Fuzz the check command."""
    from tfexec.fuzz import FuzzUsageError

    try:
        return run_fuzz(args)
    except FuzzUsageError as exc:
        raise UsageError(str(exc)) from None


FUZZ_DESCRIPTION = (
    "Draw random well-typed programs (tfexec.testing.programs, seeded), choose inputs on which tfexec keeps every "
    "node finite, and run each through CHECK: it gets the program (text form) and its inputs (safetensors, one "
    "tensor per parameter) and writes a dump of its node values (exit 0), declines the program (exit 3), or "
    "crashes (any other status). Every node is compared with tfexec's within per-dtype tolerances; each new "
    "divergence or crash, by signature (the first diverging op and its operand dtypes and ranks), is reduced to a "
    "1-minimal program and written to --corpus with both dumps and the replay commands. See docs/fuzz.md."
)


def add_fuzz_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``tfexec fuzz``."""
    p.add_argument("--check", required=True, metavar='"COMMAND {program} {inputs} {dump}"',
                   help="the backend; {program}, {inputs} and {dump} become file paths")
    p.add_argument("--seed", type=int, default=0, help="the seed of the programs drawn (default 0)")
    p.add_argument("--count", type=int, default=None, metavar="N",
                   help="distinct programs to run (default 50 when --seconds is not given)")
    p.add_argument("--seconds", type=float, default=None, metavar="S", help="stop drawing after S seconds")
    p.add_argument("--ops", metavar="NAME,...", help="the ops programs may call (default: every op)")
    p.add_argument("--dtypes", metavar="DTYPE,...", help="dtypes of new parameters and values, e.g. f32,f16")
    p.add_argument("--max-size", type=int, default=6, metavar="N", help="the largest axis size drawn (default 6)")
    p.add_argument("--max-ops", type=int, default=6, metavar="N", help="top-level constructs per program (default 6)")
    for name, what in (("loops", "loops"), ("calls", "function calls (inlined before the backend sees them)"),
                       ("layouts", "layout annotations, reshard and local"), ("tuples", "tuples")):
        p.add_argument(f"--{name}", action=argparse.BooleanOptionalAction, default=True, help=f"draw {what} (default on)")
    p.add_argument("--tol", action="append", default=[], metavar="DTYPE=RTOL,ATOL",
                   help="the tolerance of one dtype, e.g. f32=1e-4,1e-5 (repeatable; defaults as tfexec diff)")
    p.add_argument("--corpus", default="fuzz-corpus", metavar="DIR",
                   help="where each finding's repro goes (default fuzz-corpus)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="a check running longer counts as a crash (default 300)")
    p.add_argument("--max-checks", type=int, default=200, metavar="N", help="checks per reduction (default 200)")
    p.add_argument("--no-reduce", action="store_true", help="write each finding's whole program, unreduced")


def options_from(args: argparse.Namespace) -> "FuzzOptions":
    """The ``FuzzOptions`` the command line asks for."""
    from tfexec.cli.diff import parse_tolerances
    from tfexec.fuzz import FuzzOptions

    tolerances = parse_tolerances(args.tol)
    count = 50 if args.count is None and args.seconds is None else args.count
    return FuzzOptions(
        seed=args.seed, count=count, seconds=args.seconds, ops=_names(args.ops), dtypes=_dtypes(args.dtypes),
        max_size=args.max_size, max_ops=args.max_ops, loops=args.loops, calls=args.calls, layouts=args.layouts,
        tuples=args.tuples, tolerances=tolerances, reduce=not args.no_reduce, max_checks=args.max_checks,
    )


def _names(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    names = frozenset(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise UsageError(f"--ops {text!r} names no op")
    return names


def _dtypes(text: str | None) -> tuple[DType, ...]:
    if text is None:
        return ()
    by_name = {d.short: d for d in DType} | {d.name: d for d in DType}
    out = []
    for name in (n.strip() for n in text.split(",") if n.strip()):
        if name not in by_name:
            raise UsageError(f"--dtypes: unknown dtype {name!r}; choose among {', '.join(d.short for d in DType)}")
        out.append(by_name[name])
    if not out:
        raise UsageError(f"--dtypes {text!r} names no dtype")
    return tuple(out)


def run_fuzz(args: argparse.Namespace) -> int:
    """Fuzz the check command; print the summary; returns the exit code."""
    from tfexec.fuzz import CommandBackend, fuzz

    options = options_from(args)
    backend = CommandBackend(args.check, args.timeout)
    with _progress(args, options) as show:
        report = fuzz(backend, options, corpus=args.corpus, progress=show)
    print(report.summary())
    return 0 if report.ok else 1


@contextmanager
def _progress(args: argparse.Namespace, options: "FuzzOptions") -> "Iterator[Callable[[FuzzReport], None]]":
    """Progress on stderr: a live bar on a terminal (rich), a plain line every 10 programs
    when piped, nothing with ``--no-progress``."""
    if getattr(args, "no_progress", False):
        yield lambda report: None
        return
    if not sys.stderr.isatty():
        def plain(report: "FuzzReport") -> None:
            if report.drawn % 10 == 0 or report.found and report.hits.total() == 1:
                print(f"fuzz: {_describe(report)}", file=sys.stderr, flush=True)

        yield plain
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("fuzz"), BarColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("starting", total=options.count)

        def live(report: "FuzzReport") -> None:
            done = report.drawn - report.duplicates if options.count is not None else None
            bar.update(task, completed=done, description=_describe(report))

        yield live


def _describe(report: "FuzzReport") -> str:
    return (f"{report.drawn} drawn, {report.ran} run, {len(report.divergences)} divergence(s), "
            f"{len(report.crashes)} crash(es), {sum(report.declined.values())} declined")
