"""``tfexec reduce FILE --check "COMMAND {program} {inputs}" [--fail-regex R]``: the command's work.

Each candidate program is written as ``program.tf.py`` and ``inputs.safetensors`` in a
scratch directory and the check runs on those files; the smallest failing one is written
to ``--out`` and the check is run once more on exactly those files to show it reproduces.
Exit codes: 0 reduced and reproduced, 1 the original does not fail or the result does not
reproduce (or tfexec cannot evaluate the program), 2 a bad argument or check command.
"""

import argparse
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tfexec.ir.expr import Function
from tfexec.loading import LoadedModule
from tfexec.reduce._api import INPUTS_FILE, PROGRAM_FILE, reduce_with, write_candidate
from tfexec.reduce._command import CheckOutcome, CommandCheck, ReduceUsageError
from tfexec.reduce._flatten import ReductionError, flatten
from tfexec.reduce._search import Step
from tfexec.reduce._surgery import Candidate

__all__ = ["REDUCE_DESCRIPTION", "ReduceUsageError", "add_reduce_arguments", "run_reduce"]


REDUCE_DESCRIPTION = (
    "Delta-debug PROGRAM's nodes (bisect, then linear, until no single removal keeps the failure). A cut node "
    "becomes a parameter fed with tfexec's value for it; calls are inlined and weights become parameters. Each "
    "candidate is written as program.tf.py and inputs.safetensors and CHECK runs on them (no shell): it fails when "
    "it exits non-zero and, with --fail-regex, its output matches. The result goes to --out, and CHECK runs once "
    "more on exactly those files."
)


def add_reduce_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``tfexec reduce`` besides the program and its inputs."""
    p.add_argument("--check", required=True, metavar='"COMMAND {program} {inputs}"',
                   help="the command that fails on the program; {program} and {inputs} become the candidate's files")
    p.add_argument("--fail-regex", metavar="R", help="count a failure only when R is found in the command's output")
    p.add_argument("--out", default="reduced", metavar="DIR",
                   help=f"where to write {PROGRAM_FILE} and {INPUTS_FILE} (default: reduced)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="a check running longer counts as not failing (default 300)")
    p.add_argument("--max-checks", type=int, default=None, metavar="N",
                   help="stop after N checks with the smallest failing program so far")


def run_reduce(args: argparse.Namespace, target: "Function | LoadedModule", function: Function, inputs: Sequence[object]) -> int:
    """Reduce ``target`` on ``inputs`` with the check command; returns the exit code."""
    check = CommandCheck(args.check, args.fail_regex, args.timeout)
    if args.max_checks is not None and args.max_checks < 1:
        raise ReduceUsageError(f"--max-checks must be at least 1, got {args.max_checks}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ReduceUsageError(f"--out {out}: exists and is not a directory")
    flat = flatten(target, inputs)
    outcomes: list[CheckOutcome] = []
    with tempfile.TemporaryDirectory(prefix="tfexec-reduce-") as scratch:
        work = Path(scratch)

        def trial(candidate: Candidate) -> bool:
            program, values = write_candidate(candidate, work)
            outcomes.append(check.run(program, values))
            return outcomes[-1].failed

        with _progress(args) as show:
            try:
                reduced = reduce_with(
                    flat, trial, filename=str(out / PROGRAM_FILE), progress=show, max_checks=args.max_checks,
                )
            except ReductionError:
                if len(outcomes) == 1:
                    first = outcomes[0]
                    tail = _tail(first.output)
                    print(tail, end="", file=sys.stderr)
                    said = "its output ends above" if tail else "it printed nothing"
                    raise ReductionError(
                        f"the check does not fail on the original program ({first.why}): nothing to reduce; {said}"
                    ) from None
                raise
    program, values = reduced.write(out)
    print(reduced.text, end="")
    print(reduced.summary())
    for name, origin in zip(reduced.input_names, reduced.origins):
        print(f"  {name}: {origin}")
    print(f"wrote {program} and {values} ({len(reduced.inputs)} input(s))")
    again = check.run(program, values)
    shown = check.shown(program, values)
    if not again.failed:
        print(_tail(again.output), end="", file=sys.stderr)
        print(f"NOT reproduced: {shown} -> {again.why}; the check is not deterministic", file=sys.stderr)
        return 1
    print(f"reproduced: {shown} -> {again.why}")
    return 0


def _tail(output: str, lines: int = 12) -> str:
    kept = output.rstrip().splitlines()[-lines:]
    return "".join(f"  | {line}\n" for line in kept)


@contextmanager
def _progress(args: argparse.Namespace) -> Iterator[Callable[[Step], None]]:
    """Progress on stderr: a live bar on a terminal (rich), plain lines when piped, nothing
    with ``--no-progress``."""
    if getattr(args, "no_progress", False):
        yield lambda step: None
        return
    if not sys.stderr.isatty():
        last: list[tuple[str, int]] = []

        def plain(step: Step) -> None:
            mark = (step.phase, step.nodes_left)
            if step.phase in ("start", "done") or not last or mark != last[-1]:
                print(f"reduce: {_describe(step)}", file=sys.stderr, flush=True)
            last.append(mark)

        yield plain
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("reduce"), BarColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("starting", total=None)

        def live(step: Step) -> None:
            bar.update(task, total=step.nodes_total, completed=step.nodes_total - step.nodes_left,
                       description=_describe(step))

        yield live


def _describe(step: Step) -> str:
    return f"{step.phase}, {step.checks} check(s): {step.nodes_left} of {step.nodes_total} node(s) left"
