"""Evaluator spec §4 (node evaluation): identity memoisation, Vars, Constants, op Calls,
operands versus attributes, Slice windows, dim arithmetic as operands, Function calls."""

from dataclasses import dataclass
from typing import ClassVar

import pytest
import spec_helpers
import torch
from spec_helpers import ORDER, SpecCount, SpecProbe, tensor, tensors

from tfexec import (
    Call,
    Constant,
    DimVar,
    EvalError,
    EvaluateContext,
    EvaluatorVisitor,
    Expr,
    Function,
    Layout,
    Op,
    TensorType,
    TensorValue,
    Tuple,
    TupleGetItem,
    TupleType,
    Value,
    Var,
    b1,
    describe_expr,
    evaluate,
    f32,
    f64,
    i32,
    i64,
    ops,
    register_eval,
    resolve_dim,
)
from tfexec.ir.dims import dim_expr

N = DimVar("N")


def _count(tag: str, x: Expr) -> Call:
    return ops.apply(SpecCount(tag), x)


# -- memoisation ------------------------------------------------------------------------------


@pytest.mark.spec("s4.memo-identity")
def test_s4_shared_subdag_evaluated_once() -> None:
    x = Var("x", f32[3])
    shared = _count("shared", ops.exp(x))
    out = ops.add(ops.mul(shared, shared), ops.sub(ops.neg(shared), Tuple((shared, shared)).fields[0]))
    result = evaluate(Function("f", (x,), Tuple((out, shared, TupleGetItem(Tuple((shared,)), 0)))), torch.zeros(3))
    assert spec_helpers.COUNTS["shared"] == 1
    assert torch.equal(tensors(result)[1], torch.ones(3))


@pytest.mark.spec("s4.memo-identity")
def test_s4_shared_subdag_in_callee_evaluated_once_per_call() -> None:
    y = Var("y", f32[2])
    s = _count("callee", y)
    g = Function("g", (y,), ops.add(s, s))
    x = Var("x", f32[2])
    out = evaluate(Function("f", (x,), ops.add(ops.call(g, x), ops.call(g, ops.neg(x)))), torch.ones(2))
    assert spec_helpers.COUNTS["callee"] == 2  # one evaluation per call, in a fresh environment
    assert torch.equal(tensor(out), torch.zeros(2))


@pytest.mark.spec("s4.memo-identity")
def test_s4_one_call_node_reached_twice_is_evaluated_once() -> None:
    y = Var("y", f32[2])
    g = Function("g", (y,), _count("body", y))
    x = Var("x", f32[2])
    c = ops.call(g, x)
    evaluate(Function("f", (x,), ops.add(c, c)), torch.ones(2))
    assert spec_helpers.COUNTS["body"] == 1


@pytest.mark.spec("s4.memo-identity")
def test_s4_visit_memoises_on_identity_not_structure() -> None:
    x = Var("x", f32[2])
    a, b = _count("twin", x), _count("twin", x)  # equal fields, two nodes
    evaluate(Function("f", (x,), ops.add(a, b)), torch.ones(2))
    assert spec_helpers.COUNTS["twin"] == 2


@pytest.mark.spec("s4.memo-identity")
def test_s4_visitor_reuses_values_across_visit_calls() -> None:
    base = _count("base", ops.exp(Constant(torch.zeros(2), f32[2])))
    top = _count("top", ops.neg(base))
    visitor, ctx = EvaluatorVisitor(), EvaluateContext()
    first = visitor.visit(base, ctx)
    second = visitor.visit(ops.add(top, base), ctx)
    again = visitor.visit(base, ctx)
    # top was an intermediate of the second call, dropped after its last reader: it is
    # computed again, but from the kept base, which is not walked or recomputed
    visitor.visit(ops.mul(top, 2.0), ctx)
    assert again is first
    assert isinstance(second, TensorValue) and torch.equal(second.data, torch.zeros(2))
    assert spec_helpers.COUNTS["base"] == 1
    assert spec_helpers.COUNTS["top"] == 2


@pytest.mark.spec("s4.memo-identity")
def test_s4_memo_on_identity_never_confuses_a_dead_node_with_a_new_one() -> None:
    # the memo is keyed on id(expr): nodes built, visited and dropped one after another must
    # never read each other's values (CPython reuses the ids of freed objects)
    visitor, ctx = EvaluatorVisitor(), EvaluateContext()
    for i in range(50):
        value = visitor.visit(ops.add(Constant(float(i), f32[()]), 1.0), ctx)
        assert isinstance(value, TensorValue) and value.data.item() == i + 1.0


@pytest.mark.spec("s4.call-dispatch")
def test_s4_operands_evaluated_before_dispatch() -> None:
    x = Var("x", f32[2])
    first = _count("first", x)
    second = _count("second", ops.neg(first))
    evaluate(Function("f", (x,), ops.apply(SpecProbe("user"), second, first)), torch.ones(2))
    assert ORDER == ["first", "second", "user"]


# -- Var and Constant -------------------------------------------------------------------------------


@pytest.mark.spec("s4.var-binding")
def test_s4_var_resolves_to_its_binding() -> None:
    x, y = Var("x", f32[2]), Var("y", f32[2])
    out = evaluate(Function("f", (x, y), Tuple((y, x))), torch.zeros(2), torch.ones(2))
    first, second = tensors(out)
    assert torch.equal(first, torch.ones(2)) and torch.equal(second, torch.zeros(2))


@pytest.mark.spec("s4.var-binding", "s3.other-failure-contracts")
def test_s4_unbound_var_is_evalerror_naming_it() -> None:
    x, z = Var("x", f32[2]), Var("z", f32[2])
    with pytest.raises(EvalError, match=r"^var z: f32\[2\]: variable z is not bound here"):
        evaluate(Function("f", (x,), ops.add(x, z)), torch.ones(2))


@pytest.mark.parametrize(
    ("value", "t", "dtype"),
    [(3, f32[()], torch.float32), (2.75, f64[()], torch.float64), (True, b1[()], torch.bool), (7, i32[()], torch.int32)],
)
@pytest.mark.spec("s4.constant-materialises")
def test_s4_scalar_constant_materialises_as_rank0_of_its_type(
    value: bool | int | float, t: TensorType, dtype: torch.dtype
) -> None:
    v = EvaluatorVisitor().visit(Constant(value, t), EvaluateContext())
    assert isinstance(v, TensorValue)
    assert v.data.dim() == 0 and v.data.dtype == dtype and v.data.item() == value
    assert v.type == t


@pytest.mark.spec("s4.constant-materialises")
def test_s4_tensor_constant_materialises_with_its_type() -> None:
    c = Constant(torch.tensor([[1, 2], [3, 4]]), f64[2, 2])
    v = EvaluatorVisitor().visit(c, EvaluateContext())
    assert isinstance(v, TensorValue) and v.data.dtype == torch.float64 and v.type == f64[2, 2]
    assert v.data.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.spec("s4.constant-materialises")
def test_s4_tensor_constant_is_not_aliased() -> None:
    # evaluating a constant never hands out the literal itself: the program cannot mutate it
    literal = torch.zeros(2)
    v = EvaluatorVisitor().visit(Constant(literal, f32[2]), EvaluateContext())
    assert isinstance(v, TensorValue) and v.data.data_ptr() != literal.data_ptr()


@pytest.mark.spec("s4.constant-materialises")
def test_s4_constant_whose_tensor_disagrees_with_its_type_is_evalerror() -> None:
    with pytest.raises(EvalError, match=r"^constant constant f32\[3\]: f32\[3\]: tensor of shape \[2\] does not match its type f32\[3\]"):
        EvaluatorVisitor().visit(Constant(torch.zeros(2), f32[3]), EvaluateContext())
    with pytest.raises(EvalError, match=r"a Python scalar constant must have a rank-0 type, found f32\[2\]"):
        EvaluatorVisitor().visit(Constant(1.0, f32[2]), EvaluateContext())


# -- shape attributes resolve through dim_bindings -----------------------------------------------


@pytest.mark.spec("s4.dim-bindings")
def test_s4_shape_attributes_resolve_through_dim_bindings() -> None:
    x = Var("x", f32[N, 2])
    fn = Function("f", (x,), Tuple((ops.reshape(x, shape=(N * 2,)), ops.full(shape=(N // 2, 3), value=1.0, dtype=f32))))
    out = evaluate(fn, torch.ones(4, 2))
    flat, made = tensors(out)
    assert tuple(flat.shape) == (8,) and tuple(made.shape) == (2, 3)


# -- operands, not attributes -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpecExprAttr(Op):
    """A malformed op that smuggles an expression in as a static attribute."""

    name: ClassVar[str] = "spec_expr_attr"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    hidden: object = None


@register_eval(SpecExprAttr)
def _expr_attr(ctx: EvaluateContext) -> Value:
    spec_helpers.COUNTS["expr_attr"] += 1
    return ctx.args[0]


@pytest.mark.spec("s4.runtime-data-operand", "s4.no-reentry-through-attribute")
def test_s4_expr_valued_runtime_data_must_be_a_call_operand() -> None:
    x = Var("x", f32[2])
    bad = ops.apply(SpecExprAttr(hidden=ops.neg(x)), x)
    with pytest.raises(EvalError, match=r"attribute hidden of SpecExprAttr is an expression; runtime data must be a Call operand"):
        evaluate(Function("f", (x,), bad), torch.ones(2))
    assert spec_helpers.COUNTS["expr_attr"] == 0
    nested = ops.apply(SpecExprAttr(hidden=(1, (ops.neg(x),))), x)
    with pytest.raises(EvalError, match=r"attribute hidden of SpecExprAttr is an expression"):
        evaluate(Function("f", (x,), nested), torch.ones(2))
    assert spec_helpers.COUNTS["expr_attr"] == 0
    fine = ops.apply(SpecExprAttr(hidden=3), x)
    evaluate(Function("g", (x,), fine), torch.ones(2))
    assert spec_helpers.COUNTS["expr_attr"] == 1


# -- Slice -------------------------------------------------------------------------------------------


@pytest.mark.spec("s4.slice-starts-sizes-strides")
def test_s4_slice_consumes_evaluated_starts_and_resolves_sizes() -> None:
    x = Var("x", f32[N, 6])
    s = Var("s", i64[()])
    fn = Function("f", (x, s), ops.slice(x, (0, ops.dim_add(s, 1)), sizes=(N, 2)))
    data = torch.arange(18.0).reshape(3, 6)
    out = evaluate(fn, data, 2)
    assert torch.equal(tensor(out), data[:, 3:5])


@pytest.mark.spec("s4.slice-starts-sizes-strides")
def test_s4_slice_strided_window() -> None:
    x = Var("x", f32[8])
    fn = Function("f", (x,), ops.slice(x, (1,), sizes=(3,), strides=(3,)))
    assert tensor(evaluate(fn, torch.arange(8.0))).tolist() == [1.0, 4.0, 7.0]


@pytest.mark.spec("s4.slice-window-past-axis")
def test_s4_slice_window_past_axis_raises() -> None:
    x = Var("x", f32[N, 6])
    s = Var("s", i64[()])
    call = ops.slice(x, (0, s), sizes=(N, 2))
    fn = Function("f", (x, s), call)
    assert tuple(tensor(evaluate(fn, torch.ones(3, 6), 4)).shape) == (3, 2)  # exactly fits
    with pytest.raises(EvalError, match=r"window \[5, 7\).*runs past axis 1 of length 6") as info:
        evaluate(fn, torch.ones(3, 6), 5)
    assert str(info.value).startswith(describe_expr(call) + ": ")


@pytest.mark.spec("s4.slice-window-past-axis")
def test_s4_slice_strided_window_past_axis_raises() -> None:
    x = Var("x", f32[8])
    fn = Function("f", (x,), ops.slice(x, (2,), sizes=(3,), strides=(3,)))
    with pytest.raises(EvalError, match=r"runs past axis 0 of length 8"):
        evaluate(fn, torch.arange(8.0))


@pytest.mark.spec("s4.slice-window-past-axis")
def test_s4_slice_negative_start_raises() -> None:
    x = Var("x", f32[6])
    s = Var("s", i64[()])
    with pytest.raises(EvalError, match=r"start -1 on axis 0 is negative"):
        evaluate(Function("f", (x, s), ops.slice(x, (s,), sizes=(2,))), torch.ones(6), -1)


@pytest.mark.spec("s4.slice-window-past-axis", "s4.slice-starts-sizes-strides")
def test_s4_slice_size_from_dim_binding_past_axis_raises() -> None:
    # the size is symbolic; the runtime axis it windows is shorter than the window
    x, y = Var("x", f32[N]), Var("y", f32[4])
    fn = Function("f", (x, y), ops.slice(y, (0,), sizes=(N,)))
    assert tensor(evaluate(fn, torch.ones(4), torch.ones(4))).shape == (4,)
    with pytest.raises(EvalError, match=r"window \[0, 5\).*axis 0 of length 4"):
        evaluate(fn, torch.ones(5), torch.ones(4))


# -- dim arithmetic as operands -----------------------------------------------------------------------

_DIM_BUILDERS = {
    "add": ops.dim_add, "sub": ops.dim_sub, "mul": ops.dim_mul, "floordiv": ops.dim_floordiv,
    "mod": ops.dim_mod, "min": ops.dim_min, "max": ops.dim_max,
}


@pytest.mark.spec("s4.dim-arith-operand")
@pytest.mark.parametrize("op", sorted(_DIM_BUILDERS))
@pytest.mark.parametrize(("a", "b"), [(7, 3), (-7, 3), (7, -3), (-7, -3), (0, 5), (12, 12)])
def test_s4_dim_arithmetic_operand_folds_like_resolve_dim(op: str, a: int, b: int) -> None:
    p, q = Var("p", i64[()]), Var("q", i64[()])
    out = evaluate(Function("f", (p, q), _DIM_BUILDERS[op](p, q)), a, b)
    want = resolve_dim(dim_expr(op, DimVar("A"), DimVar("B")), {"A": a, "B": b})
    assert isinstance(out, torch.Tensor) and out.dtype == torch.int64 and out.dim() == 0
    assert out.item() == want


@pytest.mark.spec("s4.dim-arith-operand")
def test_s4_dim_arithmetic_in_slice_start_matches_shape_position() -> None:
    # the same arithmetic spelled as a shape (DimExpr) and as an operand (dim_* Call) agrees
    x = Var("x", f32[N])
    k = Var("k", i64[()])
    start = ops.dim_mul(ops.dim_floordiv(k, 2), 3)
    fn = Function("f", (x, k), Tuple((ops.slice(x, (start,), sizes=(2,)), ops.arange(extent=N // 2 * 3))))
    data = torch.arange(20.0)
    out = evaluate(fn, data, 5)
    window, made = tensors(out)
    assert window.tolist() == data[6:8].tolist()
    assert made.shape == (30,)


@pytest.mark.spec("s4.dim-arith-operand")
def test_s4_dim_arithmetic_division_by_zero_is_evalerror() -> None:
    p, q = Var("p", i64[()]), Var("q", i64[()])
    with pytest.raises(EvalError, match=r"^dim_floordiv\(p, q\): .*floordiv by zero"):
        evaluate(Function("f", (p, q), ops.dim_floordiv(p, q)), 4, 0)
    with pytest.raises(EvalError, match=r"^dim_mod\(p, q\): .*mod by zero"):
        evaluate(Function("f", (p, q), ops.dim_mod(p, q)), 4, 0)


# -- Function calls ------------------------------------------------------------------------------------


def _callee(param_type: TensorType | TupleType, tag: str = "body") -> Function:
    y = Var("y", param_type)
    return Function("g", (y,), _count(tag, y))


@pytest.mark.spec("s4.function-call")
def test_s4_function_call_binds_arguments_in_fresh_environment() -> None:
    a, b = Var("a", f32[2]), Var("b", f32[2])
    g = Function("g", (a, b), ops.sub(a, b))
    x, y = Var("x", f32[2]), Var("y", f32[2])
    out = evaluate(Function("f", (x, y), ops.call(g, y, x)), torch.zeros(2), torch.ones(2))
    assert torch.equal(tensor(out), torch.ones(2))


@pytest.mark.spec("s4.function-call")
def test_s4_callee_does_not_see_callers_variables() -> None:
    x = Var("x", f32[2])
    y = Var("y", f32[2])
    g = Function("g", (y,), ops.add(y, x))  # x belongs to the caller, not to g
    with pytest.raises(EvalError, match=r"^var x: f32\[2\]: variable x is not bound here"):
        evaluate(Function("f", (x,), ops.call(g, x)), torch.ones(2))


@pytest.mark.spec("s4.function-call")
def test_s4_callee_dims_bound_from_its_arguments_per_call() -> None:
    y = Var("y", f32[N])
    g = Function("g", (y,), ops.add(y, ops.full(shape=(N,), value=1.0, dtype=f32)))
    a, b = Var("a", f32[2]), Var("b", f32[5])
    out = evaluate(Function("f", (a, b), Tuple((ops.call(g, a), ops.call(g, b)))), torch.zeros(2), torch.zeros(5))
    short, long = tensors(out)
    assert tuple(short.shape) == (2,) and tuple(long.shape) == (5,)


@pytest.mark.parametrize(
    ("param", "arg", "arg_value", "why"),
    [
        (f32[2], f64[2], torch.zeros(2, dtype=torch.float64), r"argument y: expected dtype f32, found f64"),
        (f32[2], f32[2, 1], torch.zeros(2, 1), r"argument y: expected rank 1 \(f32\[2\]\), found rank 2"),
        (f32[3], f32[2], torch.zeros(2), r"argument y: axis 0 must have size 3, found 2"),
        (f32[N, N], f32[2, 3], torch.zeros(2, 3), r"argument y: dim N is bound to 2 but axis 1 has size 3"),
        (TensorType((4,), f32[()].dtype, Layout((2, 2))), f32[4], torch.zeros(4), r"argument y: expected layout Layout\(\(2, 2\)\), found none"),
    ],
    ids=["dtype", "rank", "static-dim", "dimvar", "layout"],
)
@pytest.mark.spec("s4.function-boundary")
def test_s4_function_boundary_checked_before_callee_body(
    param: TensorType, arg: TensorType, arg_value: torch.Tensor, why: str
) -> None:
    g = _callee(param)
    x = Var("x", arg)
    call = ops.call(g, x)
    with pytest.raises(EvalError, match=rf"^g\(x\): {why}"):
        evaluate(Function("f", (x,), call), arg_value)
    assert spec_helpers.COUNTS["body"] == 0  # the callee body never ran


@pytest.mark.spec("s4.function-boundary")
def test_s4_function_boundary_tuple_arguments_match_field_by_field() -> None:
    g = _callee(TupleType((f32[2], i64[()])))
    x = Var("x", TupleType((f32[2], f32[()])))
    with pytest.raises(EvalError, match=r"^g\(x\): argument y: field 1: expected dtype i64, found f32"):
        evaluate(Function("f", (x,), ops.call(g, x)), (torch.zeros(2), 1.0))
    assert spec_helpers.COUNTS["body"] == 0
    ok = Var("ok", TupleType((f32[2], i64[()])))
    evaluate(Function("h", (ok,), ops.call(g, ok)), (torch.zeros(2), 1))
    assert spec_helpers.COUNTS["body"] == 1


@pytest.mark.spec("s4.function-boundary")
def test_s4_function_call_with_wrong_argument_count_is_evalerror() -> None:
    g = _callee(f32[2])
    x = Var("x", f32[2])
    with pytest.raises(EvalError, match=r"^g\(x, x\): g takes 1 argument\(s\), got 2"):
        evaluate(Function("f", (x,), Call(g, (x, x))), torch.zeros(2))
    assert spec_helpers.COUNTS["body"] == 0


@pytest.mark.spec("s4.function-boundary")
def test_s4_function_boundary_layout_none_accepts_any_layout() -> None:
    g = _callee(f32[4])
    x = Var("x", f32[4])
    out = evaluate(Function("f", (x,), ops.call(g, ops.reshard(x, layout=Layout((2, 2))))), torch.arange(4.0))
    assert torch.equal(tensor(out), torch.arange(4.0))
    assert spec_helpers.COUNTS["body"] == 1


@pytest.mark.spec("s4.function-call")
def test_s4_recursive_function_call_is_evalerror() -> None:
    z = Var("z", f32[2])
    call_self = Call(Function("placeholder", (z,), z), (z,))
    self_rec = Function("self", (z,), call_self)
    object.__setattr__(call_self, "target", self_rec)  # tie the knot: immutable nodes cannot build a cycle otherwise
    x = Var("x", f32[2])
    with pytest.raises(EvalError, match=r"^self\(z\): recursive call of self is not supported"):
        evaluate(Function("f", (x,), ops.call(self_rec, x)), torch.zeros(2))
