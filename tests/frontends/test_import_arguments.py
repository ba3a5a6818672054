"""What ``import_module`` takes and refuses at its boundary: fixed keyword arguments of
``forward`` (``kwargs``), and inputs or outputs that are not tensors — each refused with
what to pass instead."""

import pytest
import torch
from torch.export import Dim

import tfexec
from tfexec.frontends.torch import TorchImportError, import_module


class Flagged(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, scale: float = 1.0, squash: bool = False) -> torch.Tensor:
        y = self.fc(x) * scale
        return torch.tanh(y) if squash else y


class Cache:
    """Not a tensor, not a pytree: what a model's key/value cache is to torch.export."""

    def __init__(self, t: torch.Tensor) -> None:
        self.t = t


class ReturnsCache(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, Cache]:
        return x * 2, Cache(x)


def test_kwargs_are_fixed_at_import_and_keep_the_state_dict_names() -> None:
    torch.manual_seed(0)
    model = Flagged().eval()
    loaded = import_module(model, (torch.randn(2, 4),), {"x": {0: Dim("B")}}, kwargs={"scale": 0.5, "squash": True})
    assert set(loaded.module.constants) == {"fc.weight", "fc.bias"}
    assert loaded.entry is not None and [p.name for p in loaded.entry.params] == ["x"]
    x = torch.randn(5, 4)
    with torch.no_grad():
        torch.testing.assert_close(tfexec.evaluate(loaded, x), model(x, scale=0.5, squash=True))


def test_kwargs_of_a_plain_function() -> None:
    def shifted(x: torch.Tensor, by: int = 0) -> torch.Tensor:
        return x + by

    loaded = import_module(shifted, (torch.zeros(3),), kwargs={"by": 3})
    assert torch.equal(tfexec.evaluate(loaded, torch.zeros(3)), torch.full((3,), 3.0))


def test_a_none_input_says_to_leave_it_out_or_pass_it_as_a_keyword() -> None:
    with pytest.raises(TorchImportError, match=r"example input 1 \(scale\) is NoneType, not a tensor .* kwargs=\{'scale': \.\.\.\}"):
        import_module(Flagged(), (torch.randn(2, 4), None))  # type: ignore[arg-type]


def test_a_tensor_keyword_argument_is_refused() -> None:
    with pytest.raises(TorchImportError, match=r"kwargs\['scale'\] is a tensor: .* pass them positionally in example_inputs"):
        import_module(Flagged(), (torch.randn(2, 4),), kwargs={"scale": torch.tensor(2.0)})


def test_a_non_tensor_output_says_what_to_pass() -> None:
    with pytest.raises(TorchImportError, match=r"returns a .*Cache, which is not a tensor \(a key/value cache: pass kwargs=\{'use_cache': False\}\)"):
        import_module(ReturnsCache(), (torch.randn(3),))


def test_malformed_kwargs_are_refused() -> None:
    with pytest.raises(TorchImportError, match=r"kwargs must map forward's keyword names to values"):
        import_module(Flagged(), (torch.randn(2, 4),), kwargs={1: 2})  # type: ignore[dict-item]
