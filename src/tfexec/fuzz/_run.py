"""``fuzz(backend, options)``: draw programs, choose finite inputs, run the backend and
tfexec, compare every node, and reduce each new finding into the corpus.

Each drawn program is flattened as ``tfexec reduce`` flattens it (calls inlined, tuple
parameters split, weights as parameters): that flat program, in the text form, with one
tensor per parameter, is what the backend gets, and a repro is a reduction of it.
"""

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from tfexec.api_checks import public
from tfexec.compare import tfexec_table
from tfexec.errors import TfexecError
from tfexec.fuzz._backend import Backend, BackendDeclined
from tfexec.fuzz._findings import (
    Finding, Kind, crash_signature, first_divergence, predicate, slug, write_repro,
)
from tfexec.fuzz._inputs import ATTEMPTS, first_non_finite, redrawn
from tfexec.fuzz._options import Budget, FuzzOptions, FuzzUsageError, draw_programs
from tfexec.reduce._surgery import Candidate


@dataclass
class FuzzReport:
    """What a fuzz run saw: how many programs it drew and ran, what the backend declined,
    what tfexec itself refused or computed as NaN/Inf, and the findings by signature."""

    options: FuzzOptions
    drawn: int = 0
    ran: int = 0
    compared: int = 0
    """Programs whose backend dump was compared with tfexec's (not declined, not crashed)."""
    duplicates: int = 0
    seconds: float = 0.0
    declined: Counter[str] = field(default_factory=Counter)
    oracle_refusals: Counter[str] = field(default_factory=Counter)
    oracle_non_finite: Counter[str] = field(default_factory=Counter)
    """Per op of the first non-finite node: programs tfexec computes NaN/Inf on for every input tried."""
    retried_inputs: int = 0
    """Programs that needed redrawn inputs to stay finite."""
    findings: dict[str, Finding] = field(default_factory=dict)
    hits: Counter[str] = field(default_factory=Counter)
    """How many programs showed each signature."""

    @property
    def divergences(self) -> list[Finding]:
        return [f for f in self.findings.values() if f.kind == "divergence"]

    @property
    def crashes(self) -> list[Finding]:
        return [f for f in self.findings.values() if f.kind == "crash"]

    @property
    def found(self) -> bool:
        """Whether the backend diverged or crashed on any program."""
        return bool(self.findings)

    def summary(self) -> str:
        """The end-of-run summary: counts, then each finding with its repro."""
        o = self.options
        lines = [
            f"fuzz: seed {o.seed}, budget {o.budget()}: drew {self.drawn} program(s) in {self.seconds:.1f} s, "
            f"ran {self.ran} through the backend and compared {self.compared} ({self.duplicates} duplicate(s) skipped, "
            f"{self.retried_inputs} needed redrawn inputs to stay finite)",
            f"  divergences: {sum(self.hits[f.signature] for f in self.divergences)} program(s), "
            f"{len(self.divergences)} signature(s)",
            f"  crashes: {sum(self.hits[f.signature] for f in self.crashes)} program(s), {len(self.crashes)} signature(s)",
            f"  backend declined: {sum(self.declined.values())} program(s)"
            + "".join(f"\n    {n} x {why}" for why, n in self.declined.most_common(5)),
            f"  oracle refused: {sum(self.oracle_refusals.values())} program(s)"
            + "".join(f"\n    {n} x {why}" for why, n in self.oracle_refusals.most_common(5)),
            f"  oracle non-finite (tfexec computes NaN/Inf for every input tried; not a backend bug): "
            f"{sum(self.oracle_non_finite.values())} program(s)"
            + "".join(f"\n    {n} x first at {op}" for op, n in self.oracle_non_finite.most_common(5)),
        ]
        for f in self.findings.values():
            lines.append(f"{f.kind.upper()} {f.signature}  ({self.hits[f.signature]} program(s), first: #{f.program})")
            lines.append(f"    {f.detail}")
            lines.append(f"    reduced: {f.reduction}" + (f"; kept {', '.join(f.kept)}" if f.kept else ""))
            if f.repro is not None:
                lines.append(f"    repro: {f.repro}  (replay: {f.repro / 'replay.txt'})")
        if self.found:
            verdict = f"FOUND {len(self.divergences)} divergence signature(s), {len(self.crashes)} crash signature(s)"
        elif self.compared == 0:
            verdict = "NOTHING COMPARED: the backend computed none of the programs (see declined and refused above)"
        else:
            verdict = f"nothing found in {self.compared} program(s) compared node by node"
        lines.append(f"verdict: {verdict}")
        return "\n".join(lines)

    @property
    def ok(self) -> bool:
        """Nothing found, and at least one program compared (exit status 0)."""
        return not self.found and self.compared > 0


@public
def fuzz(
    backend: Backend,
    options: FuzzOptions = FuzzOptions(),
    *,
    corpus: "str | Path | None" = None,
    progress: "Callable[[FuzzReport], None] | None" = None,
) -> FuzzReport:
    """Differential testing of ``backend`` against tfexec on random well-typed programs.

    ``backend(function, inputs) -> {node key: tensor}`` computes the flat program it is
    given (raise ``BackendDeclined`` for one it does not support). Every node it returns is
    compared with tfexec's within the per-dtype tolerances; each new divergence or crash
    (deduplicated by signature) is reduced to a 1-minimal program and, with ``corpus``,
    written there. ``progress`` receives the report after each program.
    """
    report = FuzzReport(options)
    budget = Budget(options)
    seen: set[str] = set()
    root = Path(corpus) if corpus is not None else None
    if root is not None and root.exists() and not root.is_dir():
        raise FuzzUsageError(f"--corpus {root}: exists and is not a directory")
    known = _known(root)
    for program in draw_programs(options):
        if budget.spent():
            break
        index = report.drawn
        report.drawn += 1
        duplicates = report.duplicates
        _one(program, index, backend, options, report, seen, root, known)
        budget.used += report.duplicates == duplicates  # a duplicate is skipped and not counted
        report.seconds = budget.elapsed()
        if progress is not None:
            progress(report)
    report.seconds = budget.elapsed()
    return report


def _one(
    program: object, index: int, backend: Backend, options: FuzzOptions, report: FuzzReport, seen: set[str],
    root: Path | None, known: "dict[str, Path] | None" = None,
) -> None:
    """Run one drawn program; update ``report``."""
    from tfexec.testing import Program
    from tfexec.text import print_ir

    assert isinstance(program, Program)

    text = print_ir(program.function)
    if text in seen:
        report.duplicates += 1
        return
    seen.add(text)
    chosen = _finite_run(program, index, options, report)
    if chosen is None:
        return
    whole, table = chosen
    fn, inputs = whole.function, whole.inputs
    report.ran += 1
    kind: Kind
    try:
        seen_div = first_divergence(backend, fn, inputs, options.tolerances, table)
    except BackendDeclined as exc:
        report.declined[_first_line(exc)[:120] or "declined"] += 1
        return
    except FuzzUsageError:
        raise
    except Exception as exc:
        kind, signature, detail = "crash", crash_signature(exc), f"{type(exc).__name__}: {_first_line(exc)}"
    else:
        report.compared += 1
        if seen_div is None:
            return
        kind, (signature, detail) = "divergence", seen_div
    report.hits[signature] += 1
    if signature in report.findings:
        return
    if known and signature in known:  # reduced by an earlier run into the same corpus
        report.findings[signature] = Finding(kind, signature, detail, index, known[signature],
                                             "already in the corpus (not reduced again)")
        return
    report.findings[signature] = _record(kind, signature, detail, index, fn, inputs, whole, backend, options, root)


def _finite_run(
    program: "object", index: int, options: FuzzOptions, report: FuzzReport,
) -> "tuple[Candidate, dict[str, torch.Tensor]] | None":
    """The flat program and tfexec's table on inputs that keep every node finite (the
    generator's, else redrawn ones), or None — the oracle refused the program, computes a
    NaN/Inf on every input tried, or disagrees with itself (counted in ``report``)."""
    from tfexec.compare import program_info
    from tfexec.compare._tables import node_key_of
    from tfexec.reduce._flatten import flatten
    from tfexec.reduce._surgery import build
    from tfexec.testing import Program

    assert isinstance(program, Program)
    first_bad = None
    for attempt in range(ATTEMPTS):
        inputs = program.inputs if attempt == 0 else redrawn(program.inputs, attempt, options.seed * 100_003 + index)
        try:
            flat = flatten(program.target, inputs)
            whole = build(flat, tuple(range(len(flat.candidates))))
            if whole is None:
                report.oracle_refusals["the program has no node to compare"] += 1
                return None
            table = tfexec_table(whole.function, whole.inputs)
        except TfexecError as exc:
            if attempt == 0:
                report.oracle_refusals[f"{type(exc).__name__}: {_first_line(exc)}"] += 1
                return None
            continue  # a redrawn input tfexec refuses (an index out of range, say): the next one
        bad = first_non_finite(table)
        if bad is not None:
            first_bad = first_bad or (whole, bad)
            continue
        disagreement = _routes_disagree(whole.function, whole.inputs)
        if disagreement is not None:  # a bug in tfexec itself: never a backend's
            report.oracle_refusals[disagreement] += 1
            return None
        report.retried_inputs += attempt > 0
        return whole, table
    if first_bad is None:
        report.oracle_refusals["no input set tfexec evaluates on"] += 1
        return None
    whole, bad = first_bad
    info = program_info(whole.function).get(node_key_of(bad.key))
    report.oracle_non_finite[info.op if info is not None else bad.key] += 1
    return None


def _record(
    kind: Kind, signature: str, detail: str, index: int, fn: "object", inputs: tuple[torch.Tensor, ...],
    whole: "object", backend: Backend, options: FuzzOptions, root: Path | None,
) -> Finding:
    """Reduce a new finding (when asked) and write its corpus entry (when there is a corpus)."""
    from tfexec.ir.expr import Function
    from tfexec.reduce import ReductionError, reduce_failing
    from tfexec.reduce._api import write_candidate

    assert isinstance(fn, Function) and isinstance(whole, Candidate)
    reduced = None
    how = "not reduced (--no-reduce)"
    if options.reduce:
        try:
            reduced = reduce_failing(
                fn, *inputs, fails=predicate(kind, signature, backend, options.tolerances), max_checks=options.max_checks,
            )
            how = reduced.summary()
        except ReductionError as exc:
            how = f"not reduced: {_first_line(exc)}"
    repro = None
    if root is not None:
        repro = root / f"{kind}-{slug(signature)}"
        facts = {"seed": options.seed, "program": index, "reduction": how,
                 "kept": list(reduced.kept) if reduced is not None else []}
        if reduced is not None:
            write_repro(repro, kind, signature, detail, reduced.function, reduced.inputs, backend, options.tolerances,
                        facts, reduced.write)
        else:
            write_repro(repro, kind, signature, detail, fn, inputs, backend, options.tolerances, facts,
                        lambda d: write_candidate(whole, d))
    return Finding(kind, signature, detail, index, repro, how, reduced.kept if reduced is not None else ())


def _routes_disagree(function: "object", inputs: tuple[torch.Tensor, ...]) -> str | None:
    """Why tfexec's two routes (the evaluator and the lowering) disagree on this program,
    or None: the oracle checks itself before it judges a backend."""
    from tfexec import check_equivalence
    from tfexec.ir.expr import Function

    assert isinstance(function, Function)
    report = check_equivalence(function, *inputs)
    if report.compared_ok:
        return None
    first = report.first_divergence
    where = f" first at {first.key}" if first is not None else ""
    return f"tfexec's two routes disagree (a tfexec bug, please report it):{where}"


def _known(root: Path | None) -> dict[str, Path]:
    """The signatures a corpus already holds (from each entry's ``finding.json``)."""
    import json

    out: dict[str, Path] = {}
    if root is None or not root.is_dir():
        return out
    for record in sorted(root.glob("*/finding.json")):
        try:
            signature = json.loads(record.read_text(encoding="utf-8")).get("signature")
        except (OSError, ValueError, AttributeError):
            continue  # not an entry this command wrote: left alone
        if isinstance(signature, str):
            out[signature] = record.parent
    return out


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


__all__ = ["FuzzReport", "fuzz"]
