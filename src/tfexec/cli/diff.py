"""``tfexec diff A B``: compare two dumps (``tfexec dump``) key by key and name the first
divergence. (The comparison below is kept as it was; its rework belongs to another change.)"""

import argparse

from tfexec.cli.check import add_tolerance_arguments
from tfexec.cli.common import Subparsers, UsageError


def add_parser(sub: Subparsers, parent: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register ``diff``."""
    p = sub.add_parser(
        "diff", parents=[parent], help="compare two dumps and name the first divergence",
        description="Compare two .safetensors files written by tfexec dump (or by another runtime, with the same "
        "node keys) value by value, in the first file's order. Exit 0 when they agree, 1 when any value differs "
        "or is only in one file.",
    )
    p.add_argument("a", metavar="A", help="the first dump (.safetensors)")
    p.add_argument("b", metavar="B", help="the second dump (.safetensors)")
    add_tolerance_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Compare the dumps."""
    from safetensors import SafetensorError, safe_open

    tables = []
    for path in (args.a, args.b):
        try:
            with safe_open(path, framework="pt") as f:
                order = (f.metadata() or {}).get("tfexec.order", "")
                keys = order.split("\n") if order else sorted(f.keys())
                tables.append({k: f.get_tensor(k) for k in keys if k in set(f.keys())})
        except (OSError, SafetensorError) as exc:
            raise UsageError(f"{path}: cannot read dump: {exc}") from None
    a, b = tables
    from tfexec.equivalence import _compare_tensor

    first: str | None = None
    bad = 0
    for key in list(a) + [k for k in b if k not in a]:
        if key not in a or key not in b:
            reason: str | None = f"only in {'B' if key not in a else 'A'}"
        else:
            reason, _ = _compare_tensor(a[key], b[key], args.rtol, args.atol)
        if reason is not None:
            bad += 1
            print(f"{key}: {reason}")
            first = first or key
    shared = len(set(a) & set(b))
    if first is None:
        print(f"OK: {shared} value(s) agree")
        return 0
    print(f"MISMATCH: {bad} of {len(set(a) | set(b))} value(s) differ; first divergence at {first}")
    return 1
