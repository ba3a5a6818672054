"""``tfexec import MODEL.py:FACTORY``: a PyTorch model through torch.export, saved as a module
directory (the one command that runs the user's Python code)."""

import argparse

from tfexec.cli.common import Subparsers, UsageError


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``import``."""
    p = sub.add_parser(
        "import", parents=[parent], help="import a PyTorch model via torch.export (runs MODEL.py's Python code)",
        description="Import a PyTorch model through torch.export and save it as a module directory. "
        "This imports MODEL.py and calls FACTORY(): it runs the Python code of MODEL.py, so use it "
        "only on code you trust (every other command only reads text). A returned nn.Module is put "
        "in eval mode. torch's own log messages are silenced unless --debug is given or TORCH_LOGS is set.",
    )
    p.add_argument("target", metavar="MODEL.py:FACTORY", help="a Python file and a function in it returning the model")
    p.add_argument(
        "--example-shape", action="append", default=[], metavar="SHAPE",
        help="one example input per use, in forward's order: sizes like 2,8,32; NAME=SIZE makes that axis "
        "a dynamic torch.export.Dim (B=2,S=8,32); a dtype prefix like i64:2,8 (default f32)",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="the module directory to write")
    p.add_argument("--name", default="forward", help="the HIR function's name (default forward)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random example inputs (default 0)")
    return p


def run(args: argparse.Namespace) -> int:
    """Import and save; print a one-line summary."""
    from pathlib import Path

    from tfexec.cli.outputs import claim_new_directory
    from tfexec.frontends.torch._cli import ImportUsageError, run_import

    model = str(args.target).rpartition(":")[0] or str(args.target)
    claim_new_directory(args.out, (Path(model),))
    try:
        print(run_import(args.target, args.example_shape, args.out, args.name, args.seed))
    except ImportUsageError as exc:
        raise UsageError(str(exc)) from None
    return 0
