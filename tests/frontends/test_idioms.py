"""Everyday PyTorch idioms (``idioms.py``, 119 of them) import and match PyTorch: each is
imported on its example inputs, evaluated on the direct route, compared with the program
itself (same dtypes and shapes; max |Δ| <= 1e-4 * max(1, max |reference|), equal infinities
equal), checked node by node against the lowering, and node by node against PyTorch's run
of the exported program (``check_imported_against_torch``, the default tolerances)."""

import pytest
import torch

import tfexec
from tfexec.frontends.torch import check_imported_against_torch, import_module

from frontends.idioms import IDIOMS, Idiom

def _close(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if got.dtype == torch.bool or not got.dtype.is_floating_point:
        assert torch.equal(got, want)
        return
    same = (got == want) | (got.isnan() & want.isnan())
    worst = float(torch.where(same, 0.0, (got.double() - want.double()).abs()).max()) if got.numel() else 0.0
    assert worst <= 1e-4 * max(1.0, float(torch.where(want.isfinite(), want, 0.0).abs().max()) if want.numel() else 1.0)


def test_there_are_at_least_eighty_distinct_idioms() -> None:
    assert len(IDIOMS) >= 80
    assert len({i.name for i in IDIOMS}) == len(IDIOMS)


@pytest.mark.parametrize("idiom", IDIOMS, ids=lambda i: i.name)
def test_idiom_imports_and_matches_pytorch(idiom: Idiom) -> None:
    loaded = import_module(idiom.program, idiom.inputs)  # type: ignore[arg-type]
    with torch.no_grad():
        expected = idiom.program(*idiom.inputs)
    want = [w for w in torch.utils._pytree.tree_flatten(expected)[0] if isinstance(w, torch.Tensor)]
    got = tfexec.evaluate(loaded, *idiom.inputs)
    values = got if isinstance(got, tuple) else (got,)
    assert len(values) == len(want)
    for g, w in zip(values, want):
        assert isinstance(g, torch.Tensor)
        _close(g, w)
    report = tfexec.check_equivalence(loaded, *idiom.inputs)
    assert report.ok, report
    against = check_imported_against_torch(loaded, idiom.inputs)
    assert against.ok, against

