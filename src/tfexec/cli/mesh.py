"""``tfexec mesh MODULE_DIR --mesh 2x2``: run on every participant of the program's mesh, started
by tfexec on this machine or by torchrun across hosts (docs/mesh.md)."""

import argparse

from tfexec.cli.common import Subparsers


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``mesh``."""
    from tfexec.mesh._cli import MESH_DESCRIPTION, MESH_HELP, add_mesh_arguments

    p = sub.add_parser("mesh", parents=[parent], help=MESH_HELP, description=MESH_DESCRIPTION)
    add_mesh_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Run the mesh job."""
    from tfexec.mesh._cli import run_mesh_command

    return run_mesh_command(args)
