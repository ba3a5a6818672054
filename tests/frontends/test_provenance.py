"""Provenance of imported nodes: a node made inside a helper function called from
``forward`` points at the helper's line, and a plain function's nodes at its own lines
(torch.export alone keeps only the frames of ``forward`` methods)."""

from pathlib import Path

import torch

import tfexec
from tfexec.frontends.torch import import_module
from tfexec.frontends.torch._provenance import whole_stacks
from tfexec.ir.expr import Call
from tfexec.ir.graph import post_order

HERE = Path(__file__)


def scaled(x: torch.Tensor) -> torch.Tensor:
    y = x * 2  # <- helper-mul
    return y + 1  # <- helper-add


class UsesHelper(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return scaled(x).relu()  # <- forward-relu


def plain(x: torch.Tensor) -> torch.Tensor:
    z = x.sin()  # <- plain-sin
    return scaled(z).cos()  # <- plain-cos


def line_of(marker: str) -> int:
    for number, text in enumerate(HERE.read_text(encoding="utf-8").splitlines(), start=1):
        if text.rstrip().endswith(f"# <- {marker}"):
            return number
    raise LookupError(marker)


def lines_by_op(program: object) -> dict[str, int]:
    loaded = import_module(program, (torch.randn(3),))  # type: ignore[arg-type]
    assert loaded.entry is not None
    out = {}
    for node in post_order([loaded.entry.body]):
        if isinstance(node, Call) and node.span is not None:
            assert Path(node.span.file) == HERE, tfexec.describe_expr(node)
            out[node.target.name] = node.span.line
    return out


def test_nodes_made_in_a_helper_point_at_the_helper_lines() -> None:
    assert lines_by_op(UsesHelper()) == {
        "mul": line_of("helper-mul"), "add": line_of("helper-add"), "relu": line_of("forward-relu"),
    }


def test_a_plain_function_points_at_its_own_lines() -> None:
    assert lines_by_op(plain) == {
        "sin": line_of("plain-sin"), "mul": line_of("helper-mul"), "add": line_of("helper-add"), "cos": line_of("plain-cos"),
    }


def test_whole_stacks_restores_torch_behaviour_after_the_import() -> None:
    exported = torch.export.export(UsesHelper(), (torch.randn(3),), strict=False)
    with whole_stacks():
        inside = torch.export.export(UsesHelper(), (torch.randn(3),), strict=False)
    again = torch.export.export(UsesHelper(), (torch.randn(3),), strict=False)

    def traces(ep: torch.export.ExportedProgram) -> list[str]:
        return [str(n.meta.get("stack_trace")) for n in ep.graph.nodes if n.op == "call_function"]

    assert traces(exported) == traces(again)
    assert ", in scaled" in "".join(traces(inside)) and ", in scaled" not in "".join(traces(exported))


def test_a_model_of_torch_modules_points_at_their_forward_lines_not_the_tracer() -> None:
    """``nn.Sequential(nn.Linear, nn.GELU)`` has no frame outside torch: each node points at the
    line of the ``torch.nn`` module whose ``forward`` made it, never at ``torch/fx``'s frames."""
    import inspect

    torch.manual_seed(0)
    loaded = import_module(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU()).eval(), (torch.randn(2, 4),))
    assert loaded.entry is not None
    spans = {type(n.target).__name__: n.span for n in post_order([loaded.entry.body]) if isinstance(n, Call)}
    linear, gelu = spans["Linear"], spans["Gelu"]
    assert linear is not None and gelu is not None
    assert Path(linear.file) == Path(inspect.getfile(torch.nn.Linear)) and Path(gelu.file) == Path(inspect.getfile(torch.nn.GELU))
    source, start = inspect.getsourcelines(torch.nn.Linear.forward)
    assert start <= linear.line < start + len(source)  # inside Linear.forward
    assert "fx" not in Path(linear.file).parts
