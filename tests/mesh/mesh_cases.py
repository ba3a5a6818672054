"""What the mesh test batches share: a program case, test data, one batch run, and the
comparison that states the tolerance policy of ``tfexec.mesh``.

Each mesh launch costs seconds (one Python + torch start per participant), so a test
module runs all its programs in one ``evaluate_mesh_batch`` call (a module-scoped fixture)
and its tests read their job's outcome.
"""

from collections.abc import Callable
from dataclasses import dataclass

import torch

from tfexec import Function, LoadedModule, Mesh
from tfexec.mesh import MeshJob, MeshOutcome, MeshResult, evaluate_mesh_batch


@dataclass(frozen=True)
class Case:
    """A program, its inputs, and whether the mesh result must be bitwise the single one."""

    fn: Function | LoadedModule
    inputs: tuple[object, ...]
    exact: bool = True
    return_locals: bool = False


Outcomes = dict[str, tuple[Case, MeshOutcome]]


def data(*shape: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g)


def run_batch(programs: dict[str, Callable[[], Case]], mesh: Mesh) -> Outcomes:
    """Every program of ``programs`` in one mesh launch, in order."""
    cases = {name: make() for name, make in programs.items()}
    jobs = [MeshJob(c.fn, c.inputs, c.return_locals) for c in cases.values()]
    outcomes = evaluate_mesh_batch(jobs, mesh=mesh, timeout=120)
    return {name: (case, outcome) for (name, case), outcome in zip(cases.items(), outcomes)}


def ok(outcomes: Outcomes, name: str) -> tuple[Case, MeshResult]:
    case, outcome = outcomes[name]
    return case, outcome.unwrap()


def assert_same(mesh_value: object, single: object, exact: bool) -> None:
    """Tolerance policy: ``exact`` results are bitwise equal (same dtype and shape); the
    others agree within ``torch.testing.assert_close``'s defaults for the dtype."""
    if isinstance(single, tuple):
        assert isinstance(mesh_value, tuple) and len(mesh_value) == len(single)
        for m, s in zip(mesh_value, single):
            assert_same(m, s, exact)
        return
    assert isinstance(mesh_value, torch.Tensor) and isinstance(single, torch.Tensor)
    assert type(mesh_value) is torch.Tensor  # a plain tensor, not a DTensor
    assert mesh_value.dtype == single.dtype and mesh_value.shape == single.shape
    if exact:
        assert torch.equal(mesh_value, single), (mesh_value - single).abs().max()
    else:
        torch.testing.assert_close(mesh_value, single)
