"""What the fuzzer found: signatures that deduplicate findings, the reduction of a new one
to a 1-minimal program (``tfexec.reduce_failing``), and its entry in the corpus.

A divergence's signature is the first diverging node's op and its operand signature —
each operand's dtype and rank (``gelu(f32[_,_])``), a Python scalar as ``py float`` — so
one bug seen at many shapes is one finding. A crash's is the last line of its message
with every number written ``#``. The reduction keeps the signature: a candidate counts
as failing only when it shows the same one, so it cannot drift to another bug.
"""

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import torch

from tfexec.compare import Tolerance, compare_tables, tfexec_table, write_program_dump
from tfexec.fuzz._backend import Backend, BackendDeclined, CommandBackend
from tfexec.fuzz._options import FuzzUsageError
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Expr, Function, GridRegionExpr
from tfexec.ir.types import TensorType, TupleType, Type

Kind = Literal["divergence", "crash"]


@dataclass(frozen=True)
class Finding:
    """One deduplicated finding: its kind and signature, what was seen the first time
    (``detail``), the program that first showed it, and its repro in the corpus."""

    kind: Kind
    signature: str
    detail: str
    program: int
    """The index of the program (0-based, in drawing order) that first showed it."""
    repro: Path | None
    reduction: str
    """``kept 1 of 9 node(s) in 14 check(s) (1-minimal)``, or why it was not reduced."""
    kept: tuple[str, ...] = field(default=())


def _operand(t: "Type | None", expr: Expr) -> str:
    from tfexec.ir.weak import weak_source

    weak = weak_source(expr)
    if weak is not None:
        return f"py {type(weak.value).__name__}"
    if isinstance(t, TensorType):
        return f"{t.dtype.short}[{','.join('_' for _ in t.shape)}]"
    if isinstance(t, TupleType):
        return "(" + ", ".join(_operand(f, expr) for f in t.fields) + ")"
    return "?"


def divergence_signature(function: Function, key: str) -> str:
    """``op(operand, ...)`` of the node keyed ``key`` (a table key; a tuple field names its node)."""
    from tfexec.compare._tables import node_key_of
    from tfexec.infer import infer_types
    from tfexec.semantics.keys import node_sources

    node = node_sources(function).get(node_key_of(key))
    if node is None:
        return f"? at {key}"
    if isinstance(node, GridRegionExpr):
        if node.init_args and node.init_args[0].checked_type is None:
            infer_types(function)
        return "grid(" + ", ".join(_operand(i.checked_type, i) for i in node.init_args) + ")"
    if isinstance(node, Call):
        if any(a.checked_type is None for a in node.args):
            infer_types(function)
        name = node.target.name
        return f"{name}(" + ", ".join(_operand(a.checked_type, a) for a in node.args) + ")"
    return f"{type(node).__name__} at {key}"


def crash_signature(exc: BaseException) -> str:
    """The crash's kind and the first line of its message, numbers written ``#`` (the first:
    torch's compile errors end with the same advice line whatever went wrong)."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    text = f"{type(exc).__name__}: {lines[0] if lines else ''}"
    return re.sub(r"\d+", "#", text)[:160]


def first_divergence(
    backend: Backend, function: Function, inputs: tuple[torch.Tensor, ...], tolerances: Mapping[DType, Tolerance],
    expected: "Mapping[str, torch.Tensor] | None" = None,
) -> "tuple[str, str] | None":
    """Run ``backend`` and compare with tfexec: the first divergence's signature and reason,
    or None when every node it dumped agrees. Raises what the backend raises; a dump with no
    node key in common with tfexec's is a ``ValueError`` (a crash of the protocol)."""
    actual = backend(function, inputs)
    want = expected if expected is not None else tfexec_table(function, inputs)
    report = compare_tables(want, actual, program=function, tolerances=tolerances, allow_missing=True)
    if report.compared == 0:
        raise ValueError(f"the backend's dump has no node key in common with tfexec's ({len(actual)} key(s))")
    first = report.first_divergence
    if first is None:
        return None
    return divergence_signature(function, first.key), f"{first.key} ({first.op}): {first.reason}"


def predicate(kind: Kind, signature: str, backend: Backend, tolerances: Mapping[DType, Tolerance]) -> Callable[[Function, tuple[torch.Tensor, ...]], bool]:
    """The reduction's predicate: the backend still shows this very finding."""

    def fails(function: Function, inputs: tuple[torch.Tensor, ...]) -> bool:
        try:
            seen = first_divergence(backend, function, inputs, tolerances)
        except (BackendDeclined, FuzzUsageError):
            return False
        except Exception as exc:
            return kind == "crash" and crash_signature(exc) == signature
        return kind == "divergence" and seen is not None and seen[0] == signature

    return fails


def replay(
    backend: Backend, directory: "str | Path", tolerances: "Mapping[DType, Tolerance] | None" = None,
) -> str | None:
    """Run ``backend`` on a corpus entry's program and inputs: the first divergence
    (``signature: key (op): reason``) or the crash, or None when it now agrees with tfexec."""
    from tfexec.reduce import load_repro

    function, inputs = load_repro(directory)
    try:
        seen = first_divergence(backend, function, inputs, tolerances or {})
    except BackendDeclined as exc:
        return f"declined: {exc}"
    except Exception as exc:
        return f"crash {crash_signature(exc)}"
    return None if seen is None else f"{seen[0]}: {seen[1]}"


def slug(signature: str) -> str:
    """A directory name for a signature: its words, and a hash that tells apart signatures
    with the same words (``gelu(f32[_])`` and ``gelu(f32[_,_])``)."""
    import hashlib

    words = re.sub(r"[^A-Za-z0-9]+", "-", signature).strip("-")[:60] or "finding"
    return f"{words}-{hashlib.sha256(signature.encode()).hexdigest()[:8]}"


def write_repro(
    directory: Path, kind: Kind, signature: str, detail: str, function: Function, inputs: tuple[torch.Tensor, ...],
    backend: Backend, tolerances: Mapping[DType, Tolerance], facts: Mapping[str, object], write_files: Callable[[Path], object],
) -> None:
    """Fill one corpus entry: the program and inputs (``write_files``), tfexec's dump, the
    backend's dump (or its crash), ``finding.json`` and ``replay.txt``."""
    from tfexec.loading import write_tensors

    directory.mkdir(parents=True, exist_ok=True)
    write_files(directory)
    write_program_dump(function, inputs, directory / "tfexec.safetensors")
    note = ""
    try:
        write_tensors(dict(backend(function, inputs)), directory / "backend.safetensors")
    except Exception as exc:
        note = f"{type(exc).__name__}: {exc}\n{getattr(exc, 'output', '')}"
        (directory / "crash.txt").write_text(note, encoding="utf-8")
    replay = replay_lines(directory, backend, tolerances)
    (directory / "replay.txt").write_text("\n".join(replay) + "\n", encoding="utf-8")
    record = {"kind": kind, "signature": signature, "detail": detail, **facts, "replay": replay}
    (directory / "finding.json").write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")


def replay_lines(directory: Path, backend: Backend, tolerances: Mapping[DType, Tolerance]) -> list[str]:
    """The commands that show the finding again from the corpus entry's files."""
    program, inputs, theirs = directory / "program.tf.py", directory / "inputs.safetensors", directory / "backend.safetensors"
    tol = "".join(f" --tol {d.short}={t.rtol:g},{t.atol:g}" for d, t in tolerances.items())
    if isinstance(backend, CommandBackend):
        run = backend.shown(program, inputs, theirs)
    else:
        run = f"in Python, with the backend that was fuzzed: tfexec.fuzz.replay(backend, {str(directory)!r})"
    return [
        run,
        f"tfexec dump {program} --inputs {inputs} --out {directory / 'tfexec.safetensors'}",
        f"tfexec diff {directory / 'tfexec.safetensors'} {theirs}{tol} --allow-missing",
    ]


__all__ = [
    "Finding", "Kind", "crash_signature", "divergence_signature", "first_divergence", "predicate", "replay",
    "replay_lines",
    "slug", "write_repro",
]
