"""Ready-made predicates for ``reduce_failing``: a wrong value, or a particular exception.

A *backend* is the runtime under test as a function ``(function, inputs) -> outputs``
(a tensor or a tuple of them). Each predicate keeps the reduction on one failure: a
mismatch predicate does not count a crash as failing, and ``raises`` counts only the
exceptions its ``match`` regex finds, so the reduction cannot drift to another error.
"""

import re
from collections.abc import Callable, Mapping

import torch

from tfexec.compare import Tolerance, compare_tensors, resolve_tolerances
from tfexec.evaluator.visitor import evaluate
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Function

Backend = Callable[[Function, tuple[torch.Tensor, ...]], object]
Predicate = Callable[[Function, tuple[torch.Tensor, ...]], bool]


def _leaves(value: object) -> list[torch.Tensor] | None:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, tuple):
        out: list[torch.Tensor] = []
        for v in value:
            leaves = _leaves(v)
            if leaves is None:
                return None
            out += leaves
        return out
    return None


def output_mismatch(backend: Backend, *, tolerances: Mapping[DType, Tolerance] | None = None) -> Predicate:
    """Fails when ``backend``'s outputs differ from ``tfexec.evaluate``'s beyond the dtype's
    tolerance (``tfexec.compare.DEFAULT_TOLERANCES`` unless replaced). A backend that raises,
    or returns something else than tensors, is not this failure: the predicate is False."""
    table = resolve_tolerances(tolerances)

    def fails(function: Function, inputs: tuple[torch.Tensor, ...]) -> bool:
        expected = _leaves(evaluate(function, *inputs))
        try:
            actual = _leaves(backend(function, inputs))
        except Exception:
            return False
        if expected is None or actual is None or len(actual) != len(expected):
            return False
        for e, a in zip(expected, actual):
            tol = table.get(DType.from_torch(e.dtype), Tolerance(0.0, 0.0))
            if compare_tensors(e, a, tol).reason is not None:
                return True
        return False

    return fails


def raises(backend: Backend, match: str | None = None) -> Predicate:
    """Fails when ``backend`` raises an exception whose ``Type: message`` the regex ``match``
    finds (``re.search``; any exception when ``match`` is None)."""
    pattern = re.compile(match) if match is not None else None

    def fails(function: Function, inputs: tuple[torch.Tensor, ...]) -> bool:
        try:
            backend(function, inputs)
        except Exception as exc:
            return pattern is None or pattern.search(f"{type(exc).__name__}: {exc}") is not None
        return False

    return fails


__all__ = ["Backend", "Predicate", "output_mismatch", "raises"]
