"""The snoc invariant holds by construction: a lowered node is handed the values of its
declared reads and nothing else. On random programs (``tfexec.testing.programs``),
evaluating every node — in the graph and in every loop body — on a context in which every
slot it does not declare is replaced by a poison value gives exactly ``eval``'s context."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings

from tfexec import lower
from tfexec.forward.node import ForwardNode
from tfexec.forward.run import Body, Run, project
from tfexec.testing import Program, programs


class Poison:
    """What an undeclared slot holds here: any use of it fails."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"a node touched a slot it does not read ({name})")


POISON = Poison()


def _hiding_execute(self: Body, run: Run, values: list[object], *, free: bool, check: bool = False) -> list[object]:
    """``Body.execute`` where each node sees a context with only its declared slots."""
    for node in self.nodes:
        allowed = {r.slot for r in node.reads}
        hidden = [v if i in allowed else POISON for i, v in enumerate(values)]
        values.append(_compute(node, run, tuple(project(hidden[r.slot], r.path) for r in node.reads)))
    return values


def _compute(node: ForwardNode, run: Run, xs: tuple[object, ...]) -> object:
    direct = node.what.direct
    return direct(*xs) if direct is not None else node.what.compute(run, node.scope, xs)


def _bits(x: object) -> object:
    if isinstance(x, torch.Tensor):
        flat = x.reshape(-1).clone(memory_format=torch.contiguous_format)
        return (x.dtype, tuple(x.shape), flat.view(torch.uint8).tolist() if flat.numel() else [])
    assert isinstance(x, tuple)
    return tuple(_bits(v) for v in x)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_hiding_undeclared_slots_changes_no_value(program: Program) -> None:
    graph = lower(program.target)
    expected = [_bits(v) for v in graph.eval(*program.inputs, check="off")]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(Body, "execute", _hiding_execute)
        hidden = [_bits(v) for v in graph.eval(*program.inputs, check="off")]
    assert hidden == expected


def test_a_node_cannot_reach_the_context() -> None:
    """What a node kind computes takes the run, its dim scope and its read values — never the
    context list (the run loop alone indexes it)."""
    import inspect

    from tfexec.forward import kinds

    for cls in (kinds.OpApply, kinds.HandlerCall, kinds.MakeConstant, kinds.ReadWeight, kinds.EnterCall, kinds.RunLoop, kinds.Fail):
        assert list(inspect.signature(cls.compute).parameters) == ["self", "run", "scope", "xs"], cls.__name__
