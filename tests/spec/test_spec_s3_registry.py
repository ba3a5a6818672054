"""Evaluator spec §3: ``register_eval``, ``eval_registry`` and the ``EvaluateContext`` a
handler receives; every failed dispatch is an ``EvalError`` prefixed by ``describe_expr``."""

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import pytest
import spec_helpers
import torch
from spec_helpers import PROBES, SpecCount, SpecProbe, tensor, tensors

from tfexec import (
    AnalysisRegistry,
    Call,
    Constant,
    ConstTensor,
    DimVar,
    EvalError,
    EvaluateContext,
    EvaluatorVisitor,
    Expr,
    Function,
    IRModule,
    LoadedModule,
    Op,
    Span,
    TensorType,
    TensorValue,
    TfexecError,
    Tuple,
    TupleValue,
    Value,
    Var,
    describe_expr,
    eval_registry,
    evaluate,
    f16,
    f32,
    i32,
    i64,
    infer_types,
    ops,
    register_eval,
)
from tfexec.ir.dtypes import DType


@dataclass(frozen=True, slots=True)
class SpecUnhandled(Op):
    """An op with no evaluator handler."""

    name: ClassVar[str] = "spec_unhandled"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class SpecBoom(Op):
    """An op whose handler raises a plain Python exception."""

    name: ClassVar[str] = "spec_boom"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class SpecNotAValue(Op):
    """An op whose handler returns a raw tensor instead of a Value."""

    name: ClassVar[str] = "spec_not_a_value"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1


@dataclass(frozen=True, slots=True)
class SpecCountChild(SpecCount):
    """A subclass of a registered op, with no handler of its own."""

    name: ClassVar[str] = "spec_count_child"


class BoomError(ValueError):
    pass


@register_eval(SpecBoom)
def _boom(ctx: EvaluateContext) -> Value:
    raise BoomError("kaboom: the handler failed")


@register_eval(SpecNotAValue)
def _not_a_value(ctx: EvaluateContext) -> Value:
    arg = ctx.args[0]
    assert isinstance(arg, TensorValue)
    return arg.data  # type: ignore[return-value]  # deliberately not a Value


SPAN = Span("model.tf.py", 12, 8, "h", "spec_boom(x)")


# -- registry ------------------------------------------------------------------------------


@pytest.mark.spec("s3.registry-local")
def test_s3_eval_registry_is_an_analysis_registry() -> None:
    assert isinstance(eval_registry, AnalysisRegistry)
    assert SpecCount in eval_registry
    assert eval_registry.lookup(SpecCount) is not None


@pytest.mark.spec("s3.registry-local")
def test_s3_eval_registry_is_local_to_the_evaluator() -> None:
    # it reuses the AnalysisRegistry container but is none of the other passes' instances
    import sys

    assert eval_registry.name == "eval_registry"
    for name, module in list(sys.modules.items()):
        if not name.startswith("tfexec") or name.startswith("tfexec.evaluator"):
            continue
        for attr, value in vars(module).items():
            if value is eval_registry and attr != "eval_registry":
                pytest.fail(f"{name}.{attr} aliases the evaluator's registry")
            if isinstance(value, AnalysisRegistry) and value is not eval_registry:
                assert SpecCount not in value, f"{name}.{attr} received an evaluator handler"


@pytest.mark.spec("s3.handler-per-op-class")
def test_s3_register_eval_dispatches_by_op_class() -> None:
    x = Var("x", f32[2])
    out = evaluate(Function("f", (x,), ops.apply(SpecCount("a"), x)), torch.ones(2))
    assert torch.equal(tensor(out), torch.ones(2))
    assert spec_helpers.COUNTS["a"] == 1


@pytest.mark.spec("s3.handler-per-op-class")
def test_s3_register_eval_twice_refused_unless_override() -> None:
    @dataclass(frozen=True, slots=True)
    class Once(Op):
        name: ClassVar[str] = "spec_once"
        min_args: ClassVar[int] = 1
        max_args: ClassVar[int | None] = 1

    @register_eval(Once)
    def first(ctx: EvaluateContext) -> Value:
        return ctx.args[0]

    with pytest.raises(TfexecError, match=r"Once is already registered; pass override=True"):

        @register_eval(Once)
        def second(ctx: EvaluateContext) -> Value:
            return ctx.args[0]

    @register_eval(Once, override=True)
    def third(ctx: EvaluateContext) -> Value:
        arg = ctx.args[0]
        assert isinstance(arg, TensorValue)
        return TensorValue(arg.data * 2, arg.type)

    x = Var("x", f32[2])
    assert torch.equal(tensor(evaluate(Function("f", (x,), ops.apply(Once(), x)), torch.ones(2))), torch.full((2,), 2.0))


@pytest.mark.spec("s3.handler-per-op-class")
def test_s3_handler_lookup_follows_the_op_class_mro() -> None:
    x = Var("x", f32[2])
    evaluate(Function("f", (x,), ops.apply(SpecCountChild("child"), x)), torch.ones(2))
    assert spec_helpers.COUNTS["child"] == 1


@pytest.mark.spec("s3.missing-handler-names-class", "s3.dispatch-failure-evalerror")
def test_s3_missing_handler_names_op_class() -> None:
    x = Var("x", f32[2])
    call = ops.apply(SpecUnhandled(), x)
    with pytest.raises(EvalError) as info:
        evaluate(Function("f", (x,), call), torch.ones(2))
    message = str(info.value)
    assert message.startswith(describe_expr(call) + ": ")
    assert "SpecUnhandled" in message and "no evaluator handler" in message


@pytest.mark.spec("s3.dispatch-failure-evalerror", "s3.prefix-source-location")
def test_s3_missing_handler_prefixed_by_span_when_parsed() -> None:
    x = Var("x", f32[2])
    call = Call(SpecUnhandled(), (x,), span=Span("m.tf.py", 3, 5, "y", "spec_unhandled(x)"))
    with pytest.raises(EvalError, match=r"^m\.tf\.py:3:5 y = spec_unhandled\(x\): .*SpecUnhandled"):
        evaluate(Function("f", (x,), call), torch.ones(2))


# -- failures --------------------------------------------------------------------------------


@pytest.mark.spec("s3.dispatch-failure-evalerror")
def test_s3_handler_exception_is_evalerror_prefixed_by_describe_expr() -> None:
    x = Var("x", f32[2])
    call = ops.apply(SpecBoom(), x)
    with pytest.raises(EvalError) as info:
        evaluate(Function("f", (x,), call), torch.ones(2))
    assert str(info.value).startswith(describe_expr(call) + ": ")
    assert "BoomError: kaboom: the handler failed" in str(info.value)
    assert isinstance(info.value.__cause__, BoomError)  # the original is kept


@pytest.mark.spec("s3.prefix-source-location")
def test_s3_handler_exception_prefix_identifies_authored_location() -> None:
    x = Var("x", f32[2])
    call = Call(SpecBoom(), (x,), span=SPAN)
    with pytest.raises(EvalError, match=r"^model\.tf\.py:12:8 h = spec_boom\(x\): BoomError: kaboom") as info:
        evaluate(Function("f", (x,), call), torch.ones(2))
    assert isinstance(info.value.__cause__, BoomError)


@pytest.mark.spec("s3.dispatch-failure-evalerror")
def test_s3_torch_exception_in_builtin_handler_is_evalerror() -> None:
    # without inference, a shape error surfaces from torch inside the handler
    a, b = Var("a", f32[2, 3]), Var("b", f32[2, 3])
    call = ops.matmul(a, b)
    with pytest.raises(EvalError) as info:
        evaluate(Function("f", (a, b), call), torch.ones(2, 3), torch.ones(2, 3))
    assert str(info.value).startswith("matmul(a, b): RuntimeError: ")
    assert isinstance(info.value.__cause__, RuntimeError)


@pytest.mark.spec("s3.handler-context", "s3.dispatch-failure-evalerror")
def test_s3_handler_returning_a_non_value_is_evalerror() -> None:
    x = Var("x", f32[2])
    call = ops.apply(SpecNotAValue(), x)
    with pytest.raises(EvalError, match=r"^spec_not_a_value\(x\): the handler for SpecNotAValue returned Tensor, not a Value"):
        evaluate(Function("f", (x,), call), torch.ones(2))


@pytest.mark.spec("s3.dispatch-failure-evalerror")
def test_s3_wrong_operand_count_is_evalerror_prefixed() -> None:
    x = Var("x", f32[2])
    call = Call(SpecCount("n"), (x, x))
    with pytest.raises(EvalError, match=r"^spec_count\(x, x, tag=n\): spec_count takes 1 operand\(s\), got 2"):
        evaluate(Function("f", (x,), call), torch.ones(2))
    assert spec_helpers.COUNTS["n"] == 0  # the handler never ran


@pytest.mark.spec("s3.other-failure-contracts")
def test_s3_function_call_failure_keeps_callee_node_prefix() -> None:
    # "Function-call ... failures retain their own contracts": the failing node inside the
    # callee names itself, not the call site.
    y = Var("y", f32[2])
    inner = Call(SpecBoom(), (y,), span=SPAN)
    callee = Function("g", (y,), inner)
    x = Var("x", f32[2])
    with pytest.raises(EvalError, match=r"^model\.tf\.py:12:8 h = spec_boom\(x\): BoomError"):
        evaluate(Function("f", (x,), ops.call(callee, x)), torch.ones(2))


# -- the context --------------------------------------------------------------------------------


@pytest.mark.spec("s3.handler-context")
def test_s3_handler_receives_evaluated_operands_in_call_order() -> None:
    a, b = Var("a", f32[2]), Var("b", i64[3])
    call = ops.apply(SpecProbe("p"), b, a, ops.neg(a))
    evaluate(Function("f", (a, b), call), torch.tensor([1.0, 2.0]), torch.tensor([1, 2, 3]))
    (ctx,) = PROBES["p"]
    assert ctx.op == SpecProbe("p")
    assert len(ctx.args) == 3 and all(isinstance(v, TensorValue) for v in ctx.args)
    first, second, third = ctx.args
    assert isinstance(first, TensorValue) and first.data.tolist() == [1, 2, 3]
    assert isinstance(second, TensorValue) and second.data.tolist() == [1.0, 2.0]
    assert isinstance(third, TensorValue) and third.data.tolist() == [-1.0, -2.0]


@pytest.mark.spec("s3.handler-context")
def test_s3_tuple_operand_arrives_as_tuplevalue() -> None:
    # runtime data reaches a handler only as an evaluated operand, never as an Expr
    a = Var("a", f32[2])
    call = ops.apply(SpecProbe("t"), a, Tuple((a, ops.exp(a))))
    evaluate(Function("f", (a,), call), torch.zeros(2))
    (ctx,) = PROBES["t"]
    assert isinstance(ctx.args[1], TupleValue)
    assert all(isinstance(e, TensorValue) for e in ctx.args[1].elements)


@pytest.mark.spec("s3.handler-context")
def test_s3_result_type_is_checked_type_or_none() -> None:
    a = Var("a", f32[2])
    call = ops.apply(SpecProbe("r"), a)
    fn = Function("f", (a,), call)
    evaluate(fn, torch.zeros(2))
    assert PROBES["r"][0].result_type is None  # inference has not run
    infer_types(fn)
    evaluate(fn, torch.zeros(2))
    assert PROBES["r"][1].result_type == f32[2]


@pytest.mark.spec("s3.handler-context", "s4.dim-bindings")
def test_s3_context_carries_device_and_dim_bindings() -> None:
    b = DimVar("B")
    a = Var("a", f32[b, 2])
    fn = Function("f", (a,), ops.apply(SpecProbe("d"), a))
    evaluate(fn, torch.zeros(3, 2, device="meta"))
    evaluate(fn, [[1.0, 2.0]])
    meta_ctx, default_ctx = PROBES["d"]
    assert meta_ctx.device == "meta" and dict(meta_ctx.dim_bindings) == {"B": 3}
    assert default_ctx.device is None and dict(default_ctx.dim_bindings) == {"B": 1}
    assert meta_ctx.loaded_module is None


@pytest.mark.spec("s3.handler-context")
def test_s3_context_carries_the_loaded_module() -> None:
    a = Var("a", f32[2])
    fn = Function("forward", (a,), ops.apply(SpecProbe("m"), ops.add(a, ConstTensor("w", f32[2]))))
    loaded = LoadedModule.from_reading(IRModule({"forward": fn}, {"w": f32[2]}, entry="forward"), {"w": torch.ones(2)})
    evaluate(loaded, torch.zeros(2))
    (ctx,) = PROBES["m"]
    assert ctx.loaded_module is loaded


@pytest.mark.spec("s3.handler-context")
def test_s3_for_op_keeps_run_state() -> None:
    run = EvaluateContext(device="meta", dim_bindings={"B": 4})
    v = TensorValue(torch.zeros(2), f32[2])
    ctx = run.for_op(SpecCount("x"), (v,), f32[2])
    assert ctx.op == SpecCount("x") and ctx.args == (v,) and ctx.result_type == f32[2]
    assert ctx.device == "meta" and dict(ctx.dim_bindings) == {"B": 4} and ctx.loaded_module is None


# -- promotion and independence from inference ------------------------------------------------


@pytest.mark.parametrize(
    ("lhs", "rhs"),
    [
        (torch.ones(2, dtype=torch.int32), torch.ones(2, dtype=torch.float16)),
        (torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.int8)),
        (torch.ones(2, dtype=torch.bfloat16), torch.ones(2, dtype=torch.float16)),
        (torch.ones(2, dtype=torch.bool), torch.ones(2, dtype=torch.uint8)),
    ],
)
@pytest.mark.spec("s3.torch-promotion")
def test_s3_dtype_promotion_follows_torch(lhs: torch.Tensor, rhs: torch.Tensor) -> None:
    a = Var("a", _type_of(lhs))
    b = Var("b", _type_of(rhs))
    for build, torch_fn in ((ops.add, torch.add), (ops.mul, torch.mul), (ops.div, torch.div)):
        out = evaluate(Function("f", (a, b), build(a, b)), lhs, rhs)
        want = torch_fn(lhs, rhs)
        assert isinstance(out, torch.Tensor) and out.dtype == want.dtype and torch.equal(out, want)


@pytest.mark.spec("s3.torch-promotion")
def test_s3_weak_scalar_promotes_like_a_torch_python_scalar() -> None:
    a = Var("a", f16[2])
    out = evaluate(Function("f", (a,), ops.add(a, 0.5)), torch.ones(2, dtype=torch.float16))
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float16
    i = Var("i", i32[2])
    out2 = evaluate(Function("g", (i,), ops.mul(i, 2.5)), torch.ones(2, dtype=torch.int32))
    assert isinstance(out2, torch.Tensor) and out2.dtype == torch.ones(2, dtype=torch.int32).mul(2.5).dtype


@pytest.mark.spec("s3.no-type-inference-dependence")
def test_s3_handler_does_not_need_type_inference() -> None:
    x, w = Var("x", f32[2, 3]), Var("w", f32[3, 4])
    h = ops.matmul(x, w)
    r = ops.reduce(ops.relu(h), kind="sum", axes=(1,))
    fn = Function("f", (x, w), Tuple((h, r)))
    assert h.checked_type is None and r.checked_type is None
    arg_x, arg_w = _const(torch.randn(2, 3)), _const(torch.randn(3, 4))
    v = EvaluatorVisitor().visit(ops.call(fn, arg_x, arg_w), EvaluateContext())
    assert h.checked_type is None  # evaluation did not run inference
    assert isinstance(v, TupleValue)
    hv, rv = v.elements
    assert isinstance(hv, TensorValue) and hv.type == f32[2, 4]  # type from the data
    assert isinstance(rv, TensorValue) and rv.type == f32[2]
    before = evaluate(fn, arg_x.value, arg_w.value)
    infer_types(fn)
    after = evaluate(fn, arg_x.value, arg_w.value)
    assert all(torch.equal(p, q) for p, q in zip(tensors(before), tensors(after), strict=True))


def _const(t: torch.Tensor) -> Constant:
    return Constant(t, _type_of(t))


def _type_of(t: torch.Tensor) -> TensorType:
    return TensorType(tuple(t.shape), DType.from_torch(t.dtype))


_SCALAR_CASES = [
    ("add", ops.add, lambda a, b: a + b),
    ("sub", ops.sub, lambda a, b: a - b),
    ("mul", ops.mul, lambda a, b: a * b),
    ("div", ops.div, lambda a, b: a / b),
    ("pow", ops.pow, lambda a, b: a**b),
    ("maximum", ops.maximum, None),
]


@pytest.mark.spec("s3.torch-promotion")
@pytest.mark.parametrize("name,build,torch_fn", _SCALAR_CASES, ids=[c[0] for c in _SCALAR_CASES])
@pytest.mark.parametrize("scalar", [2, 0.5, True], ids=["int", "float", "bool"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.int32, torch.uint8], ids=["f16", "i32", "u8"])
def test_s3_weak_scalar_on_either_side_promotes_like_torch(
    name: str, build: Callable[..., Expr], torch_fn: Callable[[object, object], torch.Tensor] | None,
    scalar: bool | int | float, dtype: torch.dtype,
) -> None:
    t = torch.tensor([1, 2, 3], dtype=dtype)
    a = Var("a", _type_of(t))
    for left in (True, False):
        expr = build(scalar, a) if left else build(a, scalar)
        fn = Function("f", (a,), expr)
        try:
            if torch_fn is None:  # torch.maximum has no scalar form: torch.result_type decides
                other = torch.tensor(scalar, dtype=torch.result_type(t, scalar))
                want = torch.maximum(other, t) if left else torch.maximum(t, other)
            else:
                want = torch_fn(scalar, t) if left else torch_fn(t, scalar)
        except RuntimeError as refused:  # torch refuses (e.g. `True - t`): so does the evaluator, as an EvalError
            with pytest.raises(EvalError, match=r"RuntimeError: " + re.escape(str(refused).splitlines()[0][:40])):
                evaluate(fn, t)
            continue
        out = evaluate(fn, t)
        assert isinstance(out, torch.Tensor)
        assert out.dtype == want.dtype, (left, out.dtype, want.dtype)
        assert torch.equal(out, want), (left, out, want)


@pytest.mark.spec("s3.prefix-source-location")
def test_s3_parsed_program_error_names_authored_location_binding_and_op() -> None:
    from tfexec.text import parse_function

    text = (
        "def tiled(a: f32[4, K]) -> f32[4, 2]:\n"
        "    k = dim_mul(2, 3)\n"
        "    w = slice(a, (0, k), sizes=(4, 2))\n"
        "    return w\n"
    )
    fn = parse_function(text, filename="model.tf.py")
    with pytest.raises(EvalError, match=r"^model\.tf\.py:3:\d+ w = slice\(a, \(0, k\), sizes=\(4, 2\)\): .*runs past axis 1"):
        evaluate(fn, torch.ones(4, 6))
