"""``EvaluatorVisitor`` is a real ``ExprVisitor``: a subclass's ``visit_<Class>`` (or
``call_op`` / ``call_function``) override takes effect for every node of that class — at
the top level, inside callees and inside loop bodies."""

import torch

from tfexec import (
    Call,
    Constant,
    EvaluateContext,
    EvaluatorVisitor,
    Function,
    GridRegionExpr,
    Op,
    TensorValue,
    Value,
    Var,
    f32,
    i64,
    ops,
)
from tfexec.semantics.binding import bind_inputs
from tfexec.semantics.values import to_python


def _program() -> Function:
    y = Var("y", f32[3])
    g = Function("g", (y,), ops.neg(ops.exp(y)))  # two op calls inside a callee
    x, k, acc = Var("x", f32[3]), Var("k", i64[()]), Var("acc", f32[3])
    step = ops.add(acc, ops.call(g, acc))  # an op call and a function call inside a loop body
    loop = GridRegionExpr(2, k, (x,), (acc,), step, (step,))
    return Function("f", (x,), ops.mul(loop, 0.5))


def _run(visitor: EvaluatorVisitor, fn: Function, *inputs: object) -> object:
    values, device, dims = bind_inputs(fn, inputs)
    return to_python(visitor.run_function(fn, values, EvaluateContext(device=device, dim_bindings=dims)))


class CountingCalls(EvaluatorVisitor):
    """Counts every op call and function call it evaluates, by op name / callee name."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}

    def visit_Call(self, call: Call, ctx: EvaluateContext) -> Value:
        name = call.target.name
        self.seen[name] = self.seen.get(name, 0) + 1
        return super().visit_Call(call, ctx)


def test_a_visit_call_override_sees_every_call_including_callees_and_loop_bodies() -> None:
    visitor = CountingCalls()
    out = _run(visitor, _program(), torch.ones(3))
    assert visitor.seen == {"mul": 1, "add": 2, "g": 2, "exp": 2, "neg": 2}
    assert torch.equal(out, _expected())  # type: ignore[arg-type]


def _expected() -> torch.Tensor:
    acc = torch.ones(3)
    for _ in range(2):
        acc = acc + -torch.exp(acc)
    return acc * 0.5


class DoublingExp(EvaluatorVisitor):
    """Replaces what ``exp`` computes (an override of ``call_op``), everywhere."""

    def call_op(self, call: Call, op: Op, ctx: EvaluateContext) -> Value:
        value = super().call_op(call, op, ctx)
        if op.name == "exp":
            assert isinstance(value, TensorValue)
            return TensorValue(value.data * 2, value.type)
        return value


def test_a_call_op_override_changes_the_value_inside_a_callee_in_a_loop() -> None:
    out = _run(DoublingExp(), _program(), torch.ones(3))
    acc = torch.ones(3)
    for _ in range(2):
        acc = acc + -(torch.exp(acc) * 2)
    assert torch.equal(out, acc * 0.5)  # type: ignore[arg-type]


class ConstantsAsZero(EvaluatorVisitor):
    """Every constant evaluates to zero (a ``visit_Constant`` override)."""

    def visit_Constant(self, const: Constant, ctx: EvaluateContext) -> Value:
        value = super().visit_Constant(const, ctx)
        assert isinstance(value, TensorValue)
        return TensorValue(torch.zeros_like(value.data), value.type)


def test_a_visit_constant_override_applies_to_every_constant() -> None:
    x = Var("x", f32[2])
    fn = Function("f", (x,), ops.add(x, Constant(torch.ones(2), f32[2])))
    assert torch.equal(_run(ConstantsAsZero(), fn, torch.ones(2)), torch.ones(2))  # type: ignore[arg-type]


def test_the_docstring_draws_the_override_tree() -> None:
    doc = EvaluatorVisitor.__doc__ or ""
    for name in ("run_function", "run_schedule", "visit_Var", "visit_Constant", "visit_ConstTensor", "visit_Tuple",
                 "visit_TupleGetItem", "visit_Call", "call_op", "call_function", "visit_GridRegionExpr"):
        assert name in doc, name
