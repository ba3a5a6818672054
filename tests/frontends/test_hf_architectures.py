"""A broad set of ``transformers`` architectures of the kinds the model tests cover — decoder
LLMs (rotary variants, sliding windows, grouped and multi-query attention, ALiBi, mixtures
of experts), encoders, encoder-decoders and convolutional or windowed vision models — each
tiny and built offline: every one imports, evaluates like the PyTorch module at two sizes
from one import, runs lowered bitwise like the direct route, and passes the equivalence
check. Four run in the default suite; the whole set under ``-m slow``."""

import pytest
import torch

pytest.importorskip("transformers", reason="the model tests need transformers (the dev extra)")

import tfexec  # noqa: E402
from tfexec.frontends.torch import import_module  # noqa: E402

from frontends import hf_models  # noqa: E402

DEFAULT = {"Mistral (sliding window)", "Falcon", "T5", "ResNet"}
"""One of each kind the four model tests do not cover: a sliding window, one key/value head
shared by every query head (broadcast in attention), an encoder-decoder, convolutions with
batch norm and pooling."""


def _params() -> list[object]:
    out: list[object] = []
    for name in hf_models.ARCHITECTURES:
        marks = () if name in DEFAULT else (pytest.mark.slow,)
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def _close(got: object, want: tuple[torch.Tensor, ...]) -> None:
    values = got if isinstance(got, tuple) else (got,)
    assert len(values) == len(want)
    for g, w in zip(values, want):
        assert isinstance(g, torch.Tensor) and g.dtype == w.dtype and g.shape == w.shape
        assert float((g - w).abs().max()) <= 1e-4 * max(1.0, float(w.abs().max()))


@pytest.mark.parametrize("name", _params())
def test_architecture_imports_and_matches_pytorch(name: str) -> None:
    model, inputs, spec, kwargs, other = hf_models.architecture(name)
    loaded = import_module(model, inputs, spec, kwargs=kwargs)  # type: ignore[arg-type]
    for args in (inputs, other):
        got = tfexec.evaluate(loaded, *args)
        _close(got, hf_models.outputs(model, args, kwargs))
        lowered = tfexec.lower(loaded).run(*args)
        for a, b in zip(lowered if isinstance(lowered, tuple) else (lowered,), got if isinstance(got, tuple) else (got,)):
            assert torch.equal(a, b)
    report = tfexec.check_equivalence(loaded, *inputs)
    assert report.ok, report
