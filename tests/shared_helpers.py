"""Helpers shared by test files in different folders of tests/.

``tests/`` is on ``sys.path`` (pytest puts the folder of the rootdir conftest there), so
any test imports this as ``from shared_helpers import ...``.
"""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import ClassVar

import torch

from tfexec import Call, Constant, Expr, ExprVisitor, Op, Var, f32, ops
from tfexec.semantics.registry import Kernel, value_rule
from tfexec.ir.ops.base import Operand
from tfexec.ir.types import Type

# -- test ops ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SameTypeOp(Op):
    """Base of the test-only ops whose type rule gives the type of the first operand (one
    operand, unless a subclass says otherwise); a subclass names itself and registers its
    own handler or value rule."""

    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1

    def infer(self, args: tuple[Operand, ...]) -> Type:
        return args[0].type


@dataclass(frozen=True, slots=True)
class LyingOp(SameTypeOp):
    """Declares its operand's type but its value rule appends one element: a type/value rule bug."""

    name: ClassVar[str] = "lying_test_op"


@value_rule(LyingOp)
def _lying(op: LyingOp, args: object) -> Kernel:
    return Kernel(lambda x: torch.cat([x, x[:1]]))


# -- readings ----------------------------------------------------------------------------------


class CountingReading(Mapping[str, torch.Tensor]):
    """A mapping reading that records every lookup by name."""

    def __init__(self, data: dict[str, torch.Tensor]) -> None:
        self.data = data
        self.lookups: list[str] = []

    def __getitem__(self, key: str) -> torch.Tensor:
        self.lookups.append(key)
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


# -- deep graphs -------------------------------------------------------------------------------


def add_chain(start: Expr, n: int) -> Expr:
    """``start`` with one shared constant 1.0 added ``n`` times: a chain of ``n`` calls."""
    c = Constant(1.0, f32[()])
    h = start
    for _ in range(n):
        h = ops.add(h, c)
    return h


class ChainDepth(ExprVisitor[int]):
    """The number of calls on the path through each call's first operand."""

    def visit_Var(self, node: Var) -> int:
        return 0

    def visit_Constant(self, node: Constant) -> int:
        return 0

    def visit_Call(self, node: Call) -> int:
        return 1 + self.result(node.args[0])
