"""Type inference: ``infer_types`` fills ``checked_type`` on every node (loop bodies and
callees included), keeps dims symbolic, and reports ill-typed programs with
``TypeInferenceError`` messages that start with ``describe_expr`` of the node."""

import re

import pytest

from tfexec import (
    Call,
    Constant,
    DimVar,
    Expr,
    Function,
    GridRegionExpr,
    Layout,
    Mesh,
    ShardLayout,
    Span,
    Split,
    Tuple,
    TupleGetItem,
    TupleType,
    TypeInferenceError,
    Var,
    describe_expr,
    f16,
    f32,
    i32,
    i64,
    infer_types,
    ops,
)
from tfexec.ir.graph import loop_plan, post_order
from tfexec.ir.ops.elementwise import Add

B = DimVar("B")
K = DimVar("K")


def _fails(fn: Function, node: "Expr | Function", message: str) -> str:
    """``infer_types(fn)`` raises about ``node``: its message starts with ``describe_expr(node)``."""
    with pytest.raises(TypeInferenceError) as info:
        infer_types(fn)
    text = str(info.value)
    assert text.startswith(describe_expr(node) + ": "), text
    assert re.search(message, text), text
    return text


def _all_nodes(fn: Function) -> list[Expr]:
    """Every node of ``fn``: its scope, every loop body, every callee (a test helper, recursive)."""
    out: list[Expr] = []
    for node in post_order([fn.body]):
        out.append(node)
        if isinstance(node, GridRegionExpr):
            out += [node.induction_var, *node.carried_args]
            out += post_order(loop_plan(node).roots)
        if isinstance(node, Call) and isinstance(node.target, Function):
            out += _all_nodes(node.target)
    return out


# -- what inference fills in ------------------------------------------------------------


def test_symbolic_dims_flow_through_op_rules() -> None:
    x, w1, w2 = Var("x", f32[B, 64]), Var("w1", f32[64, 256]), Var("w2", f32[256, 64])
    h = ops.matmul(x, w1)
    a = ops.silu(h)
    out = ops.matmul(a, w2)
    r = ops.reshape(out, shape=(B * 2, 32))
    fn = Function("mlp", (x, w1, w2), r)
    assert infer_types(fn) is fn
    assert h.checked_type == f32[B, 256] and a.checked_type == f32[B, 256]
    assert out.checked_type == f32[B, 64] and r.checked_type == f32[B * 2, 32]
    assert all(n.checked_type is not None for n in _all_nodes(fn))
    assert x.checked_type == x.type


def test_tuples_projections_constants_and_const_tensors() -> None:
    from tfexec import ConstTensor

    x = Var("x", f32[4])
    w = ConstTensor("w", f32[4])
    pair = Tuple((x, ops.add(w, 1.0)))
    first = TupleGetItem(pair, 1)
    c = Constant(3, i64[()])
    fn = Function("f", (x,), Tuple((first, c)), ret_type=TupleType((f32[4], i64[()])))
    infer_types(fn)
    assert pair.checked_type == TupleType((f32[4], f32[4]))
    assert first.checked_type == f32[4] and w.checked_type == f32[4] and c.checked_type == i64[()]


def test_loop_bodies_are_typed() -> None:
    a = Var("a", f32[128, K])
    i, acc = Var("i", i64[()]), Var("acc", f32[128, 32])
    t = ops.dim_mul(i, 32)
    tile = ops.slice(a, (0, t), sizes=(128, 32))
    body = ops.add(acc, tile)
    init = ops.full(shape=(128, 32), value=0.0, dtype=f32)
    loop = GridRegionExpr(K // 32, i, (init,), (acc,), body, (body,))
    fn = Function("tiles", (a,), loop, ret_type=f32[128, 32])
    infer_types(fn)
    assert t.checked_type == i64[()] and tile.checked_type == f32[128, 32] and body.checked_type == f32[128, 32]
    assert loop.checked_type == f32[128, 32] and i.checked_type == i64[()] and acc.checked_type == acc.type
    assert all(n.checked_type is not None for n in _all_nodes(fn))


def test_loop_result_types() -> None:
    x = Var("x", f32[4])
    i, a, b = Var("i", i64[()]), Var("a", f32[4]), Var("b", i64[()])
    ya, yb = ops.add(a, x), ops.dim_add(b, i)
    multi = GridRegionExpr(3, i, (x, Constant(0, i64[()])), (a, b), Tuple((ya, yb)), (ya, yb))
    j = Var("j", i64[()])
    no_carry = GridRegionExpr(2, j, (), (), ops.cast(j, dtype=f32), ())
    fn = Function("f", (x,), Tuple((multi, no_carry)))
    infer_types(fn)
    assert multi.checked_type == TupleType((f32[4], i64[()]))
    assert no_carry.checked_type == f32[()]


def test_callees_are_typed_and_dims_substituted_per_call() -> None:
    n = DimVar("N")
    p = Var("p", f32[n, 4])
    double = Function("double", (p,), ops.add(p, p), ret_type=f32[n, 4])
    x, y = Var("x", f32[B, 4]), Var("y", f32[7, 4])
    c1, c2 = ops.call(double, x), ops.call(double, y)
    fn = Function("f", (x, y), Tuple((c1, c2)))
    infer_types(fn)
    assert c1.checked_type == f32[B, 4] and c2.checked_type == f32[7, 4]
    assert double.body.checked_type == f32[n, 4] and p.checked_type == f32[n, 4]


def test_dim_expr_parameters_bind_in_any_order() -> None:
    n = DimVar("N")
    a, b = Var("a", f32[n * 2, n]), Var("b", f32[n])
    g = Function("g", (a, b), b)
    x, y = Var("x", f32[8, 4]), Var("y", f32[4])
    call = ops.call(g, x, y)
    infer_types(Function("f", (x, y), call))
    assert call.checked_type == f32[4]
    y5 = Var("y", f32[5])
    bad = ops.call(g, x, y5)
    _fails(Function("f", (x, y5), bad), bad, r"argument b: dim N is bound to 4 but axis 0 has size 5")


def test_inference_is_idempotent() -> None:
    x = Var("x", f32[4])
    h = ops.exp(x)
    fn = Function("f", (x,), h)
    infer_types(fn)
    infer_types(fn)
    assert h.checked_type == f32[4]


# -- errors ------------------------------------------------------------------------------


def test_unbound_var() -> None:
    x, ghost = Var("x", f32[4]), Var("ghost", f32[4])
    _fails(Function("f", (x,), ops.add(x, ghost)), ghost, r"variable ghost is not bound here")


def test_loop_variables_are_not_bound_outside_their_loop() -> None:
    x = Var("x", f32[4])
    i, acc = Var("i", i64[()]), Var("acc", f32[4])
    loop = GridRegionExpr(2, i, (x,), (acc,), acc, (acc,))
    _fails(Function("f", (x,), ops.add(loop, acc)), acc, r"variable acc is not bound here")
    # nor inside another loop
    j, other = Var("j", i64[()]), Var("other", f32[4])
    body = ops.add(other, ops.cast(i, dtype=f32))
    second = GridRegionExpr(2, j, (loop,), (other,), body, (body,))
    _fails(Function("g", (x,), second), i, r"variable i is not bound here")


def test_tuple_get_item_out_of_range_and_of_a_tensor() -> None:
    x = Var("x", f32[4])
    item = TupleGetItem(Tuple((x, x)), 2)
    _fails(Function("f", (x,), item), item, r"index 2 is out of range for \(f32\[4\], f32\[4\]\) \(2 fields\)")
    proj = TupleGetItem(x, 0)
    _fails(Function("g", (x,), proj), proj, r"projection \[0\] of a non-tuple f32\[4\]")


def _call_with(param: Var, arg_type: object) -> tuple[Function, Expr]:
    callee = Function("g", (param,), param)
    x = Var("x", arg_type)  # type: ignore[arg-type]
    call = ops.call(callee, x)
    return Function("f", (x,), call), call


MESH = Mesh((2,), ("x",))


@pytest.mark.parametrize(
    ("param_type", "arg_type", "message"),
    [
        (f32[4], f16[4], r"argument p: expected dtype f32, found f16 \(f16\[4\]\)"),
        (f32[4], f32[4, 1], r"argument p: expected rank 1 \(f32\[4\]\), found rank 2 \(f32\[4, 1\]\)"),
        (f32[4, 8], f32[4, 9], r"argument p: axis 1 must have size 8, found 9 \(f32\[4, 9\]\)"),
        (f32[B, B], f32[3, 5], r"argument p: dim B is bound to 3 but axis 1 has size 5 \(f32\[3, 5\]\)"),
        (f32[B, B * 2], f32[3, 5], r"argument p: axis 1 must have size B \* 2 = 6, found 5"),
        (
            f32[8].with_layout(Layout((2, 4))),
            f32[8],
            r"argument p: expected layout Layout\(\(2, 4\)\), found none",
        ),
        (
            f32[8].with_layout(ShardLayout(MESH, (Split(0),))),
            f32[8].with_layout(Layout((8,))),
            r"argument p: expected layout ShardLayout\(.*\), found Layout\(\(8,\)\)",
        ),
        (TupleType((f32[4],)), f32[4], r"argument p: expected \(f32\[4\],\), found f32\[4\]"),
        (f32[4], TupleType((f32[4],)), r"argument p: expected f32\[4\], found \(f32\[4\],\)"),
        (TupleType((f32[4], i32[()])), TupleType((f32[4],)), r"argument p: expected a 2-tuple"),
        (
            TupleType((f32[4], i32[()])),
            TupleType((f32[4], i64[()])),
            r"argument p: field 1: expected dtype i32, found i64",
        ),
    ],
)
def test_function_boundary_mismatch(param_type: object, arg_type: object, message: str) -> None:
    fn, call = _call_with(Var("p", param_type), arg_type)  # type: ignore[arg-type]
    _fails(fn, call, message)


def test_function_boundary_accepts_compatible_arguments() -> None:
    # an unannotated layout accepts any layout; DimVars bind afresh per call
    fn, call = _call_with(Var("p", f32[B]), f32[8].with_layout(Layout((2, 4))))
    infer_types(fn)
    assert call.checked_type == f32[8]  # the callee's own (parameter) type, dims substituted


def test_function_call_arity() -> None:
    p = Var("p", f32[4])
    callee = Function("g", (p,), p)
    x = Var("x", f32[4])
    call = ops.call(callee, x, x)
    _fails(Function("f", (x,), call), call, r"g takes 1 argument\(s\), got 2")


def test_loop_carry_type_mismatches() -> None:
    x = Var("x", f32[4])
    i, acc = Var("i", i64[()]), Var("acc", f32[4])
    bad_init = GridRegionExpr(2, i, (ops.cast(x, dtype=f16),), (acc,), acc, (acc,))
    _fails(Function("f", (x,), bad_init), bad_init, r"carry acc is declared f32\[4\] but its init value has type f16\[4\]")
    y = ops.reshape(acc, shape=(2, 2))
    bad_yield = GridRegionExpr(2, i, (x,), (acc,), y, (y,))
    _fails(Function("g", (x,), bad_yield), bad_yield, r"carry acc is f32\[4\] but its yield value has type f32\[2, 2\]")


def test_induction_variable_must_be_i64_scalar() -> None:
    x = Var("x", f32[4])
    for bad in (Var("i", i32[()]), Var("i", i64[1])):
        loop = GridRegionExpr(2, bad, (), (), x, ())
        _fails(Function("f", (x,), loop), loop, rf"induction variable i must be i64\[\(\)\], found {re.escape(str(bad.type))}")


def test_declared_return_type_mismatch() -> None:
    x = Var("x", f32[4])
    fn = Function("f", (x,), ops.cast(x, dtype=i32), ret_type=f32[4])
    _fails(fn, fn, r"declared return type f32\[4\], body has type i32\[4\]")
    assert describe_expr(fn) == "function f(x)"


def test_op_rule_errors_are_prefixed_with_the_call() -> None:
    x, y = Var("x", f32[4]), Var("y", f32[5])
    call = ops.add(x, y, span=Span("model.tf.py", 3, 9, "z", "add(x, y)"))
    text = _fails(Function("f", (x, y), call), call, r".")
    assert text.startswith("model.tf.py:3:9 z = add(x, y): ")
    arity = ops.apply(Add(), x)
    _fails(Function("g", (x,), arity), arity, r"add takes 2 operand\(s\), got 1")


def test_constant_shape_must_match_its_type() -> None:
    import torch

    x = Var("x", f32[3])
    c = Constant(torch.zeros(2), f32[3])
    _fails(Function("f", (x,), ops.add(x, c)), c, r"tensor of shape \[2\] does not match its type f32\[3\]")
    s = Constant(1.0, f32[2])
    _fails(Function("g", (x,), ops.add(x, s)), s, r"a Python scalar constant must have a rank-0 type, found f32\[2\]")


def test_recursive_function_is_refused() -> None:
    x = Var("x", f32[4])
    fn = Function("f", (x,), x)
    call = ops.call(fn, x)
    object.__setattr__(fn, "body", call)  # nodes are immutable: recursion needs a back door
    _fails(fn, call, r"recursive call of f is not supported")


def test_mutually_recursive_functions_are_refused() -> None:
    x = Var("x", f32[4])
    f = Function("f", (x,), x)
    g = Function("g", (x,), ops.call(f, x))
    back = ops.call(g, x)
    object.__setattr__(f, "body", back)
    _fails(g, back, r"recursive call of g is not supported")


def test_a_callee_runs_in_a_fresh_scope() -> None:
    """A callee body cannot read its caller's variables: only its own parameters are bound."""
    x = Var("x", f32[4])
    p = Var("p", f32[4])
    leaky = Function("leaky", (p,), ops.add(p, x))
    call = ops.call(leaky, x)
    _fails(Function("f", (x,), call), x, r"variable x is not bound here")
