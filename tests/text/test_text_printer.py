"""The printer on builder-made IR: sharing, names, inlining, loops, constants, callees.

Each case prints a program that was not parsed (no spans), parses the print back and
checks it is structurally equal, a fixed point, and (where it runs) evaluates the same."""

import pytest
import torch

from text_helpers import evaluates_identically, function_round_trip
from tfexec import (
    Call, Constant, ConstTensor, DimExpr, DimVar, Function, GridRegionExpr, IRModule, Layout, Span, Tuple,
    TupleGetItem, Var, b1, f16, f32, i32, i64, ops,
)
from tfexec.text import parse, print_ir
from tfexec.text.printer import INLINE_DEPTH

B = DimVar("B")


def test_shared_subdag_is_printed_once_and_bound() -> None:
    x = Var("x", f32[B, 4])
    s = ops.exp(x)
    fn = Function("shared", (x,), ops.add(s, ops.mul(s, s)))
    back, printed = function_round_trip(fn)
    assert printed.count("exp(") == 1
    assert "    v0 = exp(x)\n    return add(v0, mul(v0, v0))\n" in printed
    evaluates_identically(fn, back, torch.randn(3, 4))


def test_shared_weak_scalar_keeps_its_sharing() -> None:
    x = Var("x", f32[4])
    one = Constant(1.0, f32[()], weak=True)
    fn = Function("f", (x,), ops.add(ops.mul(x, one), one))
    _, printed = function_round_trip(fn)
    assert "v0 = 1.0" in printed


def test_single_use_nodes_are_inlined_up_to_the_depth_limit() -> None:
    x = Var("x", f32[4])
    y: Call | Var = x
    for _ in range(INLINE_DEPTH * 3):
        y = ops.neg(y)
    fn = Function("deep", (x,), y)
    _, printed = function_round_trip(fn)
    body = printed.splitlines()[1:]
    assert all(line.count("neg(") <= INLINE_DEPTH + 1 for line in body)
    assert len(body) == 3


def test_bindings_from_spans_name_statements_and_clashes_get_suffixes() -> None:
    x = Var("x", f32[4])
    a = ops.neg(x, span=Span("m.py", 2, 5, "h"))
    b = ops.exp(a, span=Span("m.py", 3, 5, "h"))
    c = ops.add(a, b, span=Span("m.py", 4, 5, "add"))
    fn = Function("named", (x,), ops.add(c, c))
    _, printed = function_round_trip(fn)
    assert "    h = neg(x)\n    h_1 = exp(h)\n    add_1 = add(h, h_1)\n" in printed


def test_parameter_names_are_made_usable_and_unique() -> None:
    params = (Var("x", f32[2]), Var("x", f32[2]), Var("add", f32[2]), Var("1st.in", f32[2]), Var("B", f32[B]))
    body = ops.add(ops.add(ops.add(params[0], params[1]), ops.add(params[2], params[3])), ops.reduce(params[4], kind="sum"))
    fn = Function("names", params, body)
    back, printed = function_round_trip(fn)
    assert printed.startswith("def names(x: f32[2], x_1: f32[2], add_1: f32[2], _1st_in: f32[2], B_1: f32[B]):")
    evaluates_identically(fn, back, torch.ones(2), torch.ones(2), torch.ones(2), torch.ones(2), torch.ones(5))


def test_constants_print_exactly() -> None:
    x = Var("x", f32[2, 2])
    consts = [
        Constant(torch.tensor([[1.0, float("nan")], [float("inf"), -0.0]]), f32[2, 2]),
        Constant(torch.tensor([[0.1, 2.5], [3.0, 4.0]], dtype=torch.bfloat16), TensorType_of(torch.bfloat16)),
        Constant(torch.tensor(2.0), f32[()]),
        Constant(2.0, f32[()], weak=True),
        Constant(2, f32[()]),
        Constant(True, b1[()], weak=True),
        Constant(torch.zeros(0, 2), f32[0, 2]),
        Constant(torch.tensor([[1, 2], [3, 4]], dtype=torch.uint8), f32[2, 2].with_layout(Layout((4,)))),
    ]
    body = x
    for c in consts[:6] + consts[7:]:
        body = ops.add(body, ops.cast(c, dtype=f32)) if c.type.rank else ops.add(body, c)
    fn = Function("consts", (x,), ops.concat(body, consts[6]))
    back, printed = function_round_trip(fn)
    assert "constant([[1.0, float(\"nan\")], [float(\"inf\"), -0.0]], dtype=f32)" in printed
    assert "constant([2.0], dtype=f32, shape=())" in printed
    assert ", 2.0)" in printed and ", True)" in printed  # weak constants of the literal's own dtype print as literals
    assert "constant(2, dtype=f32)" in printed
    assert "constant([], dtype=f32, shape=(0, 2))" in printed
    assert "constant([[1.0, 2.0], [3.0, 4.0]], type=f32[2, 2] @ Layout((4,)))" in printed
    evaluates_identically(fn, back, torch.ones(2, 2))


def TensorType_of(dtype: torch.dtype) -> "object":
    from tfexec import DType, TensorType

    return TensorType((2, 2), DType.from_torch(dtype))


def test_loop_with_ill_typed_carry_prints_its_types_and_index_type() -> None:
    x = Var("x", f32[4])
    k, acc = Var("k", i32[()]), Var("acc", f16[4])
    region = GridRegionExpr(3, k, (x,), (acc,), ops.add(acc, 1.0), (ops.add(acc, 1.0),))
    fn = Function("odd", (x,), region)
    _, printed = function_round_trip(fn)
    assert "grid(3, x, types=(f16[4],), index_type=i32[()])" in printed
    assert "carry(add(acc, 1.0), body=add(acc, 1.0))" in printed


def test_multi_carry_loop_read_whole_uses_a_walrus_name() -> None:
    x = Var("x", f32[4])
    k, a, b = Var("k", i64[()]), Var("a", f32[4]), Var("b", f32[4])
    ya, yb = ops.add(a, b), ops.mul(a, b)
    region = GridRegionExpr(DimExpr("mul", B, 2), k, (x, x), (a, b), Tuple((ya, yb)), (ya, yb))
    fn = Function("whole", (x,), Tuple((region, TupleGetItem(region, 1), TupleGetItem(region, 1))))
    back, printed = function_round_trip(fn)
    assert "for k, (a, b) in (loop0 := grid(B * 2, x, x)):" in printed
    assert "return (loop0, loop0[1], loop0[1])" in printed


def test_no_carry_loop_and_loops_reusing_var_objects() -> None:
    x = Var("x", f32[4])
    k, acc = Var("k", i64[()]), Var("acc", f32[4])
    first = GridRegionExpr(2, k, (x,), (acc,), ops.add(acc, x), (ops.add(acc, x),))
    second = GridRegionExpr(3, k, (first,), (acc,), ops.mul(acc, 2.0), (ops.mul(acc, 2.0),))
    last = GridRegionExpr(4, k, (), (), ops.add(second, ops.cast(k, dtype=f32)), ())
    fn = Function("reuse", (x,), ops.add(first, last))
    back, printed = function_round_trip(fn)
    assert "for k, acc in grid(2, x):" in printed and "for k_1, acc_1 in grid(3, acc):" in printed
    assert "for k_2, out0 in grid(4):" in printed and "value(add(acc_1, cast(k_2, dtype=f32)))" in printed
    evaluates_identically(fn, back, torch.arange(4.0))


def test_loop_invariant_values_are_printed_before_the_loop() -> None:
    x = Var("x", f32[4])
    k, acc = Var("k", i64[()]), Var("acc", f32[4])
    inv = ops.exp(x, span=Span("m.py", 1, 1, "inv"))
    region = GridRegionExpr(2, k, (x,), (acc,), ops.add(acc, inv), (ops.add(acc, inv),))
    fn = Function("hoist", (x,), region)
    _, printed = function_round_trip(fn)
    assert printed.index("inv = exp(x)") < printed.index("for k, acc")


def test_const_tensors_of_a_standalone_function_are_declared() -> None:
    x = Var("x", f32[4])
    w = ConstTensor("w", f32[4])
    w_again = ConstTensor("w", f32[4])
    dotted = ConstTensor("layers.0.b", f32[4])
    other_type = ConstTensor("w", f16[4])
    body = ops.add(ops.add(ops.mul(x, w), ops.mul(w, w_again)), ops.add(dotted, ops.cast(other_type, dtype=f32)))
    fn = Function("weights", (x,), body)
    back, printed = function_round_trip(fn)
    assert printed.startswith("w: f32[4] = const()\nlayers_0_b: f32[4] = const('layers.0.b')\n")
    assert "const('w', f32[4])" in printed and "const('w', f16[4])" in printed


def test_module_constants_and_undeclared_ones() -> None:
    x = Var("x", f32[4])
    fn = Function("f", (x,), ops.add(ops.add(x, ConstTensor("w", f32[4])), ConstTensor("missing", f32[4])))
    module = IRModule({"f": fn}, {"w": f32[4]})
    printed = print_ir(module)
    assert "return add(add(x, w), const('missing', f32[4]))" in printed
    assert print_ir(parse(printed)) == printed


def test_function_with_callees_marks_the_entry_and_renames_clashes() -> None:
    x = Var("x", f32[4])
    y = Var("y", f32[4])
    f1 = Function("f", (y,), ops.neg(y))
    z = Var("z", f32[4])
    f2 = Function("f", (z,), ops.call(f1, ops.exp(z)))
    main = Function("main", (x,), ops.add(ops.call(f1, x), ops.call(f2, x)))
    back, printed = function_round_trip(main)
    assert "def f(y: f32[4]):" in printed and "def f_1(z: f32[4]):" in printed
    assert "@entry\ndef main(x: f32[4]):" in printed
    evaluates_identically(main, back, torch.arange(4.0))


def test_module_function_calling_a_child_function_gets_a_copy() -> None:
    x = Var("x", f32[4])
    helper = Function("helper", (x,), ops.neg(x))
    y = Var("y", f32[4])
    main = Function("main", (y,), ops.call(helper, y))
    module = IRModule({"main": main}, {}, "main", {"child": IRModule({"helper": helper})})
    printed = print_ir(module)
    again = parse(printed)
    assert list(again.functions) == ["helper", "main"] and again.entry == "main"
    assert print_ir(again) == printed


def test_dim_var_names_are_not_taken_by_values() -> None:
    x = Var("x", f32[B])
    k = Var("k", i64[()])
    b = ops.neg(x, span=Span("m.py", 1, 1, "B"))
    fn = Function("dims", (x,), GridRegionExpr(B, k, (), (), ops.reshape(b, shape=(B,)), ()))
    _, printed = function_round_trip(fn)
    assert "B_1 = neg(x)" in printed


def test_print_ir_rejects_other_values() -> None:
    with pytest.raises(TypeError, match=r"print_ir\(\): argument target must be IRModule \| Function"):
        print_ir(Var("x", f32[4]))  # type: ignore[arg-type]


def test_str_of_a_function_is_its_text() -> None:
    x = Var("x", b1[4])
    fn = Function("f", (x,), ops.logical_and(x, True))
    assert str(fn) == "def f(x: b1[4]):\n    return logical_and(x, True)\n"
