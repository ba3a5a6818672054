"""The ``tfexec`` command: run, check, validate, dump, print, graph, explain, diff, reduce, fuzz, mesh, import, docs and ops.

Exit status, the one rule every subcommand keeps (``EXIT_STATUS``, also in ``--help``): 0
ok; 1 the program failed (a type error, a run-time error, a missing weight) or a check
failed (the routes or dumps disagree, the docs are stale); 2 the command line is wrong (a
bad flag, dim or inputs file, a file that is missing or does not parse, a directory that
is not a saved module). Errors are one line
on stderr (no traceback for any input; ``--debug`` shows it), and torch's own log messages
are silenced unless ``--debug`` is given or ``TORCH_LOGS`` is set.

Each subcommand is a module with ``add_parser(sub, parent) -> ArgumentParser`` and
``run(args) -> int``; ``SUBCOMMANDS`` hooks each pair in with one line, under its name.
"""

import argparse
import contextlib
import io
import logging
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import TextIO, cast

from tfexec.cli import check, diff, docs, dump, explain, fuzz, graph, importing, mesh, printing, reduce, run, validate
from tfexec.cli.common import Subparsers, UsageError
from tfexec.errors import TfexecError

EXIT_STATUS = (
    "Exit status: 0 ok; 1 the program failed (type error, run-time error, missing weight) or a check failed "
    "(the routes or dumps disagree, the docs are stale); 2 the command line is wrong (bad flag, dim or inputs "
    "file, missing or unparsable file, a directory that is not a saved module)."
)

AddParser = Callable[[Subparsers, argparse.ArgumentParser], argparse.ArgumentParser]
Handler = Callable[[argparse.Namespace], int]

SUBCOMMANDS: tuple[tuple[str, AddParser, Handler], ...] = (
    ("run", run.add_parser, run.run),
    ("check", check.add_parser, check.run),
    ("validate", validate.add_parser, validate.run),
    ("dump", dump.add_parser, dump.run),
    ("diff", diff.add_parser, diff.run),
    ("reduce", reduce.add_parser, reduce.run),
    ("fuzz", fuzz.add_parser, fuzz.run),
    ("mesh", mesh.add_parser, mesh.run),
    ("print", printing.add_parser, printing.run),
    ("graph", graph.add_parser, graph.run),
    ("explain", explain.add_parser, explain.run),
    ("import", importing.add_parser, importing.run),
    ("docs", docs.add_docs_parser, docs.run_docs),
    ("ops", docs.add_ops_parser, docs.run_ops),
)
"""Every subcommand: its name, the function that adds its parser, and the one that runs it."""


def _global_flags(p: argparse.ArgumentParser, default: object) -> None:
    p.add_argument("--debug", action="store_true", default=default, help="show the Python traceback of an error, and torch's log messages")
    p.add_argument("--no-progress", action="store_true", default=default, help="no progress spinner, even on a terminal")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``tfexec`` and of every subcommand, or, with ``only``, of that
    one subcommand alone (what ``main`` parses a command line with: adding a subcommand's
    arguments may import its machinery — the mesh evaluator, the explorer — so only the
    subcommand that runs is added)."""
    parser = argparse.ArgumentParser(
        prog="tfexec", description="The reference interpreter of the TileFoundry HIR.", epilog=EXIT_STATUS,
    )
    _global_flags(parser, False)
    # The global flags are accepted after the subcommand too; there, an absent flag leaves the
    # value parsed before the subcommand (SUPPRESS: no default is written).
    parent = argparse.ArgumentParser(add_help=False)
    _global_flags(parent, argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", help="tfexec COMMAND --help says more")
    for name, add_parser, handler in SUBCOMMANDS:
        if only is not None and name != only:
            continue
        p = add_parser(sub, parent)
        p.epilog = EXIT_STATUS
        p.set_defaults(run=handler)
    return parser


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names, when its parser alone can parse ``argv``: its first word
    that is not a flag (the global flags take no value), unless a ``--help`` comes before it
    (which lists every subcommand). ``None``: parse with every subcommand's parser."""
    names = {name for name, _, _ in SUBCOMMANDS}
    for word in argv:
        if word in ("-h", "--help") or word == "--":
            return None
        if not word.startswith("-"):
            return word if word in names else None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    words = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(_chosen(words)).parse_args(words)
    with _quiet_torch_logs(args.debug), _closed_stdout_is_quiet():
        try:
            code: int = args.run(args)
        except UsageError as exc:
            _fail(args, exc, exc.kind)
            return 2
        except TfexecError as exc:
            _fail(args, exc, type(exc).__name__)
            return 1
        except KeyboardInterrupt:
            return 130
        except Exception as exc:  # a bug in tfexec, never a user's mistake: say so, in one line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            kind = f"internal error (a bug in tfexec; --debug shows the traceback): {type(exc).__name__}"
            _fail(args, first, kind, exc)
            return 1
        sys.stdout.flush()
        return code


def _fail(args: argparse.Namespace, message: object, kind: str | None, exc: BaseException | None = None) -> None:
    error = exc if exc is not None else message
    if args.debug and isinstance(error, BaseException):
        traceback.print_exception(error)
    prefix = f"{kind}: " if kind else ""
    print(f"tfexec {args.command}: {prefix}{message}", file=sys.stderr)


@contextlib.contextmanager
def _quiet_torch_logs(debug: bool) -> Iterator[None]:
    """torch's loggers (a fake-tensor traceback while torch.export fails, say) silenced for the
    command, unless ``--debug`` or ``TORCH_LOGS`` asks for them."""
    if debug or os.environ.get("TORCH_LOGS"):
        yield
        return
    logger = logging.getLogger("torch")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(level)


class _QuietWhenClosed(io.TextIOBase):
    """stdout that stops writing, silently, once its reader has gone (``tfexec ... | head -1``):
    the command still finishes and returns its exit status."""

    def __init__(self, inner: TextIO) -> None:
        self.inner: TextIO | None = inner

    def write(self, text: str) -> int:
        if self.inner is not None:
            try:
                self.inner.write(text)
            except BrokenPipeError:
                self._closed()
        return len(text)

    def flush(self) -> None:
        if self.inner is not None:
            try:
                self.inner.flush()
            except BrokenPipeError:
                self._closed()

    def _closed(self) -> None:
        assert self.inner is not None
        with contextlib.suppress(OSError, ValueError):
            # Point the real stdout at /dev/null, so that the interpreter's final flush is quiet too.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.inner.fileno())
            os.close(devnull)
        self.inner = None

    def isatty(self) -> bool:
        return self.inner is not None and self.inner.isatty()


@contextlib.contextmanager
def _closed_stdout_is_quiet() -> Iterator[None]:
    real = sys.stdout
    sys.stdout = cast(TextIO, _QuietWhenClosed(real))
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stdout = real


__all__ = ["EXIT_STATUS", "SUBCOMMANDS", "build_parser", "main"]
