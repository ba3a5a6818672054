"""What the import refuses by kind, and the custom ops it decomposes or translates.

``.item()``/``.tolist()`` (data-dependent) and complex numbers are refused in one line each,
naming the model's line and saying why; ``arange`` with a float step and an integer dtype
follows torch's integer arithmetic; a custom op with a decomposition is imported through it,
transformers' ``grouped_mm_fallback`` through its rule (compared with its own kernel), and an
opaque custom op is refused by name.
"""

import pytest
import torch

import tfexec
from tfexec.frontends.torch import TorchImportError, import_module

from frontends.test_idioms import _close


def _item_steers_a_size(x: torch.Tensor) -> torch.Tensor:
    k = x.argmax().item()
    return x[: k + 1].sum() + x


def _tolist(x: torch.Tensor) -> torch.Tensor:
    values = x.tolist()
    return x + values[0][0]


def _int_of_item(x: torch.Tensor) -> torch.Tensor:
    n = int(x.sum().item())
    return x * n


@pytest.mark.parametrize(("program", "line"), [
    (_item_steers_a_size, "k = x.argmax().item()"),
    (_tolist, "values = x.tolist()"),
    (_int_of_item, "n = int(x.sum().item())"),
])
def test_data_dependent_values_are_refused_in_one_line_at_the_models_line(
    program: object, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(TorchImportError) as caught:
        import_module(program, (torch.randn(4, 2),))  # type: ignore[arg-type]
    assert "def forward" not in capsys.readouterr().err  # torch's dump of the partial graph is dropped
    text = str(caught.value)
    assert "data-dependent" in text and line in text and "test_refusals.py:" in text
    assert "operator." not in text and "GuardOnDataDependentSymNode" not in text
    assert sum("data-dependent" in row for row in text.splitlines()) == 1


def _complex_rotation(x: torch.Tensor) -> torch.Tensor:
    z = torch.view_as_complex(x)
    return torch.view_as_real(z * z)


def _polar(x: torch.Tensor) -> torch.Tensor:
    return torch.view_as_real(torch.polar(x.abs(), x))


@pytest.mark.parametrize(("program", "op"), [(_complex_rotation, "aten.view_as_complex"), (_polar, "aten.polar")])
def test_complex_numbers_are_refused_by_name(program: object, op: str) -> None:
    with pytest.raises(TorchImportError) as caught:
        import_module(program, (torch.randn(4, 2),))  # type: ignore[arg-type]
    text = str(caught.value)
    assert op in text and "complex numbers have no HIR dtype" in text and "docs/against-torch.md" in text


@pytest.mark.parametrize("args", [(0, 8, 2.0), (0.5, 3.7, 1.5), (-1.5, 3, 1.5), (5, 0, -1.5), (0, 5, 1.7)])
def test_integer_arange_with_float_bounds_follows_torch(args: tuple[float, float, float]) -> None:
    def positions(x: torch.Tensor) -> torch.Tensor:
        return x + torch.arange(*args, dtype=torch.int64)

    x = torch.zeros((), dtype=torch.int64)
    got = tfexec.evaluate(import_module(positions, (x,)), x)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.int64
    assert torch.equal(got, positions(x))


_LIB = torch.library.Library("tfexec_test_custom", "DEF")
_LIB.define("scaled_tanh(Tensor x, float scale) -> Tensor")
_LIB.impl("scaled_tanh", lambda x, scale: torch.tanh(x) * scale, "CompositeImplicitAutograd")


@torch.library.custom_op("tfexec_test_custom::opaque_cube", mutates_args=())
def _opaque_cube(x: torch.Tensor) -> torch.Tensor:
    return x * x * x


@_opaque_cube.register_fake
def _opaque_cube_fake(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


def test_a_custom_op_with_a_decomposition_is_imported_through_it() -> None:
    def program(x: torch.Tensor) -> torch.Tensor:
        return torch.ops.tfexec_test_custom.scaled_tanh(x, 3.0) + 1

    x = torch.randn(3, 4)
    _close(tfexec.evaluate(import_module(program, (x,)), x), program(x))  # type: ignore[arg-type]


def test_an_opaque_custom_op_is_refused_by_name() -> None:
    def program(x: torch.Tensor) -> torch.Tensor:
        return torch.ops.tfexec_test_custom.opaque_cube(x) + 1

    with pytest.raises(TorchImportError) as caught:
        import_module(program, (torch.randn(3),))
    text = str(caught.value)
    assert "tfexec_test_custom::opaque_cube" in text and "is opaque" in text and "test_refusals.py:" in text


@pytest.mark.parametrize("counts", [(2, 0, 3, 1), (0, 0, 0, 6), (1, 1, 1, 1)])
def test_grouped_mm_fallback_is_its_kernel(counts: tuple[int, ...]) -> None:
    pytest.importorskip("transformers")
    from transformers.integrations import moe  # registers torch.ops.transformers.grouped_mm_fallback

    assert moe is not None
    g = torch.Generator().manual_seed(0)
    rows = sum(counts) + 2  # two rows past the last group: zeros, as the kernel leaves them
    x, w = torch.randn(rows, 5, generator=g), torch.randn(len(counts), 5, 3, generator=g)
    offs = torch.cumsum(torch.tensor(counts), 0).to(torch.int32)

    def program(x: torch.Tensor, w: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
        return torch.ops.transformers.grouped_mm_fallback(x, w, offs=offs)

    loaded = import_module(program, (x, w, offs))
    _close(tfexec.evaluate(loaded, x, w, offs), program(x, w, offs))  # type: ignore[arg-type]
    assert tfexec.check_equivalence(loaded, x, w, offs).ok
