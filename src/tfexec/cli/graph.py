"""``tfexec graph PROGRAM``: the lowered forward graph as Mermaid or Graphviz dot text."""

import argparse

from tfexec.cli.common import Subparsers, add_program_arguments, load_program


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``graph``."""
    p = sub.add_parser(
        "graph", parents=[parent], help="draw the lowered graph (Mermaid or dot); loop bodies as subgraphs",
        description="Lower PROGRAM to its forward graph and print it as Mermaid (flowchart) or Graphviz dot text.",
    )
    add_program_arguments(p)
    p.add_argument("--format", choices=("mermaid", "dot"), default="mermaid", help="the picture's language (default mermaid)")
    return p


def run(args: argparse.Namespace) -> int:
    """Lower and render."""
    from tfexec import lower
    from tfexec.explain.picture import render

    program = load_program(args.file, args.function)
    print(render(lower(program.target), args.format), end="")
    return 0
