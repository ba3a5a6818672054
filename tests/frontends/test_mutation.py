"""Writes in place are imported exactly (functionalized) or refused, never dropped.

Each ``writes.WRITES`` program is imported, evaluated on both routes and compared with
PyTorch's eager result (tolerance, not bits) and node by node with PyTorch's run of the
functionalized program. No imported graph keeps an op that writes in place, no rule may
translate one, and what functionalization cannot remove (a buffer or an input the model
writes into) is refused naming the buffer and the model's line.
"""

import pytest
import torch
from torch import nn

import tfexec
from tfexec.frontends.torch import TorchImportError, check_imported_against_torch, import_module
from tfexec.frontends.torch._mutation import mutates, mutating_nodes, written_arguments
from tfexec.frontends.torch._registry import RULES, register

from frontends.idioms import Idiom
from frontends.test_idioms import _close
from frontends.writes import WRITES


@pytest.mark.parametrize("idiom", WRITES, ids=lambda i: i.name)
def test_write_matches_pytorch(idiom: Idiom) -> None:
    loaded = import_module(idiom.program, idiom.inputs)  # type: ignore[arg-type]
    assert loaded.exported is not None
    assert list(mutating_nodes(loaded.exported.graph)) == []
    with torch.no_grad():
        expected = idiom.program(*idiom.inputs)
    want = list(expected) if isinstance(expected, tuple) else [expected]
    got = tfexec.evaluate(loaded, *idiom.inputs)
    values = got if isinstance(got, tuple) else (got,)
    assert len(values) == len(want)
    for g, w in zip(values, want):
        assert isinstance(g, torch.Tensor)
        _close(g, w)
    assert tfexec.check_equivalence(loaded, *idiom.inputs).ok
    against = check_imported_against_torch(loaded, idiom.inputs)
    assert against.ok, against


@pytest.mark.parametrize("decompose", [False, True])
def test_writes_are_functionalized_whatever_decompose_says(decompose: bool) -> None:
    idiom = WRITES[0]
    loaded = import_module(idiom.program, idiom.inputs, decompose=decompose)  # type: ignore[arg-type]
    with torch.no_grad():
        _close(tfexec.evaluate(loaded, *idiom.inputs), idiom.program(*idiom.inputs))  # type: ignore[arg-type, operator]


def test_no_rule_translates_an_op_that_writes_in_place() -> None:
    assert [str(op) for op in RULES if mutates(op)] == []
    with pytest.raises(RuntimeError, match="writes in place"):
        register("add_.Tensor")(lambda t: t.tensor("self"))
    assert "aten.add_.Tensor" not in {str(op) for op in RULES}


def test_mutates_reads_the_schema_not_a_list() -> None:
    aten = torch.ops.aten
    for op in (aten.copy_.default, aten.index_put_.default, aten.add_.Tensor, aten.t_.default, aten.add.out):
        assert mutates(op), op
    for op in (aten.copy.default, aten.slice_scatter.default, aten.add.Tensor, aten.t.default, aten.slice.Tensor):
        assert not mutates(op), op
    assert written_arguments(aten.add.out) == ["out"]
    assert written_arguments(aten.copy_.default) == ["self"]
    assert not mutates(len)


class _BufferWriter(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("cache", torch.zeros(2, 6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.cache[:, 2:4] = x  # the write the import must not drop
        return self.cache * 2


def test_a_buffer_the_model_writes_into_is_refused_by_name_at_its_line() -> None:
    with pytest.raises(TorchImportError) as caught:
        import_module(_BufferWriter().eval(), (torch.ones(2, 2),))
    text = str(caught.value)
    assert "buffer cache" in text and "BUFFER_MUTATION" in text
    assert "test_mutation.py" in text and "the write the import must not drop" in text


def test_an_input_the_model_writes_into_is_refused() -> None:
    def bump(x: torch.Tensor) -> torch.Tensor:
        x.add_(1.0)
        return x * 2

    with pytest.raises(TorchImportError, match="writes into the input"):
        import_module(bump, (torch.ones(3),))


def test_a_write_functionalization_leaves_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # Functionalization disabled: the translator itself must refuse copy_ at its line, not translate it.
    import tfexec.frontends.torch._api as api

    monkeypatch.setattr(api, "_functionalize", lambda exported: exported)
    with pytest.raises(TorchImportError) as caught:
        import_module(WRITES[0].program, WRITES[0].inputs, decompose=False)  # type: ignore[arg-type]
    text = str(caught.value)
    assert "aten.copy_.default" in text and "writes into self in place" in text and "writes.py" in text
