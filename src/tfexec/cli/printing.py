"""``tfexec print PROGRAM``: the canonical text form of a file or a saved module directory."""

import argparse
from pathlib import Path

from tfexec.cli.common import Subparsers, UsageError, read_module


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``print``."""
    p = sub.add_parser(
        "print", parents=[parent], help="print a program in the canonical text form",
        description="Parse PROGRAM (a .tf.py file, or a saved module directory) and print it as tfexec.print_ir "
        "does: the canonical text form, which parses back to the same program.",
    )
    p.add_argument("file", metavar="PROGRAM", help="a .tf.py file (the text form) or a saved module directory")
    return p


def run(args: argparse.Namespace) -> int:
    """Print the module."""
    from tfexec.text import print_ir

    path = Path(args.file)
    if not path.exists():
        raise UsageError(f"{path}: no such file or directory")
    module, _ = read_module(path)
    print(print_ir(module), end="")
    return 0
