"""``reduce_failing``: the smallest program that still fails, and its inputs, as files.

The predicate ``fails(function, inputs) -> bool`` is asked about each candidate program:
the function parsed from the candidate's text and its inputs in parameter order (CPU
tensors, as the inputs file holds them). What ``Reduced.write`` saves is exactly the last
program the predicate said fails — so re-running the predicate on those files reproduces
the failure.
"""

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from tfexec.api_checks import public
from tfexec.ir.expr import Function
from tfexec.loading import LoadedModule
from tfexec.reduce._flatten import FlatProgram, ReductionError, flatten
from tfexec.reduce._search import Search, Step
from tfexec.reduce._surgery import Candidate, build

Predicate = Callable[[Function, tuple[torch.Tensor, ...]], bool]
"""``fails(function, inputs)``: True when the program still shows the failure."""
Trial = Callable[[Candidate], bool]

PROGRAM_FILE = "program.tf.py"
INPUTS_FILE = "inputs.safetensors"


@dataclass(frozen=True)
class Reduced:
    """A reduced failing program: its text, the function parsed from it, its inputs (one
    per parameter, named ``input_names``), what each parameter stands for, the original
    nodes it keeps, and how the search went."""

    text: str
    function: Function
    inputs: tuple[torch.Tensor, ...]
    input_names: tuple[str, ...]
    origins: tuple[str, ...]
    kept: tuple[str, ...]
    """``describe_expr`` of each original node kept, in topological order."""
    nodes_before: int
    checks: int
    """How many times the predicate ran."""
    minimal: bool
    """True when no single node removal keeps the failure (False: the check budget ran out)."""
    candidate: Candidate = field(repr=False)

    @property
    def nodes_after(self) -> int:
        return len(self.kept)

    def write(self, directory: "str | os.PathLike[str]") -> tuple[Path, Path]:
        """Write ``program.tf.py`` and ``inputs.safetensors`` into ``directory``; returns both paths."""
        return write_candidate(self.candidate, Path(directory))

    def summary(self) -> str:
        """One line: nodes kept of how many, in how many checks, and whether 1-minimal."""
        how = "1-minimal" if self.minimal else "stopped at the check budget, not 1-minimal"
        return f"kept {self.nodes_after} of {self.nodes_before} node(s) in {self.checks} check(s) ({how})"

    def __str__(self) -> str:
        return f"{self.summary()}\n{self.text}"


def write_candidate(candidate: Candidate, directory: Path) -> tuple[Path, Path]:
    """Write a candidate's text and inputs (named after its parameters) into ``directory``;
    the inputs file's metadata says what each stands for (``origin.NAME``); each file is written whole
    (a temporary file renamed over it)."""
    from tfexec.loading import write_tensors
    from tfexec.loading.atomic import replacing, write_text
    from tfexec.loading.sniff import OUTPUT_KEY

    directory.mkdir(parents=True, exist_ok=True)
    program, inputs = directory / PROGRAM_FILE, directory / INPUTS_FILE
    write_text(program, candidate.text)
    origins = {f"origin.{name}": origin for name, origin in zip(candidate.names, candidate.origins)}
    with replacing(inputs) as tmp:  # the marker lets a later reduce --out recognise its own file
        write_tensors(dict(zip(candidate.names, candidate.inputs)), tmp, metadata={OUTPUT_KEY: "reduce"} | origins)
    return program, inputs


def load_repro(directory: "str | os.PathLike[str]") -> tuple[Function, tuple[torch.Tensor, ...]]:
    """Read back a written reduction: the program's function and its inputs in parameter order."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from tfexec.text import parse

    from tfexec.loading.sniff import not_safetensors

    path = Path(directory)
    wrong = not_safetensors(path / INPUTS_FILE) if (path / INPUTS_FILE).exists() else None
    if wrong is not None:
        raise ReductionError(f"{path}: not a written reduction: {wrong}")
    try:
        text = (path / PROGRAM_FILE).read_text(encoding="utf-8")
        tensors = load_file(str(path / INPUTS_FILE))
    except (OSError, UnicodeDecodeError, SafetensorError) as exc:
        raise ReductionError(f"{path}: not a written reduction ({PROGRAM_FILE} and {INPUTS_FILE}): {exc}") from None
    module = parse(text, filename=str(path / PROGRAM_FILE))
    if not module.functions:
        raise ReductionError(f"{path / PROGRAM_FILE}: defines no function")
    fn = module.functions[module.entry or next(iter(module.functions))]
    missing = [p.name for p in fn.params if p.name not in tensors]
    if missing:
        raise ReductionError(f"{path / INPUTS_FILE}: no tensor for parameter(s) {', '.join(missing)}")
    return fn, tuple(tensors[p.name] for p in fn.params)


def reduce_with(
    flat: FlatProgram, trial: Trial, *, filename: str = "<reduced>", progress: Callable[[Step], None] | None = None,
    max_checks: int | None = None,
) -> Reduced:
    """Delta-debug ``flat`` with ``trial`` (called on each candidate program)."""
    whole = build(flat, tuple(range(len(flat.candidates))), filename)
    assert whole is not None, "the whole program always builds"
    if not trial(whole):
        raise ReductionError(
            "the predicate says the original program does not fail (with weights and inputs as parameters); "
            "nothing to reduce"
        )
    failing = {whole.kept: whole}  # the last candidate that failed: the search's current set

    def test(kept: tuple[int, ...]) -> bool:
        c = build(flat, kept, filename)
        if c is None or not trial(c):
            return False
        failing.clear()
        failing[kept] = c
        return True

    search = Search(len(flat.candidates), test, progress, max_checks)
    minimal = search.run()
    final = failing[search.kept]
    from tfexec.ir.describe import describe_expr

    return Reduced(
        final.text, final.function, final.inputs, final.names, final.origins,
        tuple(describe_expr(flat.candidates[k]) for k in final.kept), len(flat.candidates), search.checks + 1,
        minimal, final,
    )


def predicate_trial(fails: Predicate) -> Trial:
    """A trial asking ``fails`` about a candidate; a predicate that raises or returns a
    non-bool is a ``ReductionError`` (a predicate decides, it does not crash)."""

    def trial(c: Candidate) -> bool:
        try:
            result = fails(c.function, c.inputs)
        except Exception as exc:
            raise ReductionError(
                f"the predicate raised {type(exc).__name__}: {exc} — on a candidate keeping {len(c.kept)} node(s); "
                "a predicate must return True or False (catch the backend's exception in it, or use "
                "tfexec.reduce.raises)"
            ) from exc
        if not isinstance(result, bool):
            raise ReductionError(f"the predicate returned {type(result).__name__} {result!r}, not a bool")
        return result

    return trial


@public
def reduce_failing(
    program: "Function | LoadedModule",
    *inputs: object,
    fails: Callable[[Function, tuple[torch.Tensor, ...]], bool],
    progress: "Callable[[Step], None] | None" = None,
    max_checks: int | None = None,
) -> Reduced:
    """The smallest program derived from ``program`` on which ``fails(function, inputs)`` is
    still True, by delta debugging over its nodes (bisect, then linear, to 1-minimality).

    A cut node becomes a parameter fed with tfexec's own value for it; calls are inlined
    and weights become parameters. ``progress`` receives a ``Step`` after each check;
    ``max_checks`` bounds the predicate calls (the result then says it is not 1-minimal).
    """
    if max_checks is not None and max_checks < 1:
        raise ReductionError(f"max_checks must be at least 1, got {max_checks}")
    flat = flatten(program, inputs)
    return reduce_with(flat, predicate_trial(fails), progress=progress, max_checks=max_checks)


__all__ = [
    "INPUTS_FILE", "PROGRAM_FILE", "Predicate", "Reduced", "Trial", "load_repro", "predicate_trial",
    "reduce_failing", "reduce_with", "write_candidate",
]
