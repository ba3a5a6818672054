"""``tfexec explain``: write the explorer page of a run, hooked into ``tfexec.cli``.

Exit codes: 0 the page is written and both routes agree bitwise; 1 the page is written but
shows a failure (the program raises, or the routes differ); 2 bad arguments.
"""

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tfexec.explain.page import build_page
from tfexec.ir.expr import Function
from tfexec.loading import LoadedModule
from tfexec.loading.atomic import write_text


class ExplainUsageError(Exception):
    """Bad command-line input for ``tfexec explain`` (exit code 2)."""


EXPLAIN_HELP = "write a self-contained HTML page to step through the program and its values"
EXPLAIN_DESCRIPTION = (
    "Run the program on both routes and write one HTML file (inline CSS and JavaScript; it loads nothing, so it "
    "opens from disk and can be mailed): the text form with clickable nodes, the lowered snoc list with each node's "
    "reads drawn as arrows to earlier rows, and each node's value from both routes, loop bodies per iteration with "
    "a slider. When the program fails or the routes differ, the page opens on the failing node. See docs/tutorial.md."
)


def add_explain_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments of ``tfexec explain`` besides the program and its inputs."""
    p.add_argument("-o", "--out", required=True, metavar="PAGE.html", help="the HTML file to write ('-': standard output)")


def run_explain(args: argparse.Namespace, target: "Function | LoadedModule", function: Function,
                inputs: Sequence[object]) -> int:
    """Build the page, write it and say what it shows; returns the exit code."""
    about = _about(args, function, inputs)
    page, model = build_page(target, tuple(inputs), title=f"tfexec explain {args.file}", about=about)
    out = str(args.out)
    if out == "-":
        try:
            sys.stdout.write(page)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader stopped early (| head): not an error of the page
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0 if model.status == "ok" else 1
        report = sys.stderr
    else:
        path = Path(out)
        if path.is_dir():
            raise ExplainUsageError(f"{path} is a directory; give the HTML file to write, e.g. {path / 'page.html'}")
        try:
            write_text(path, page)  # whole or not at all: a temporary file renamed over it
        except OSError as exc:
            raise ExplainUsageError(f"{path}: cannot write the page: {exc.strerror or exc}") from None
        report = sys.stdout
    size = len(page.encode("utf-8"))
    where = "standard output" if out == "-" else out
    print(f"wrote {where} ({size // 1024} KB, {len(model.data['rows'])} slot(s)): {model.headline}", file=report)  # type: ignore[arg-type]
    return 0 if model.status == "ok" else 1


def _about(args: argparse.Namespace, function: Function, inputs: Sequence[object]) -> str:
    from tfexec.explain.model import describe_inputs

    text = describe_inputs(function, inputs)
    if getattr(args, "inputs", None):
        return f"{text} (from {args.inputs})"
    seed = getattr(args, "seed", None)
    return f"{text} (random, seed {0 if seed is None else seed})"


__all__ = ["EXPLAIN_DESCRIPTION", "EXPLAIN_HELP", "ExplainUsageError", "add_explain_arguments", "run_explain"]
