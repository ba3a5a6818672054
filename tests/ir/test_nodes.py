# mypy: disable-error-code="arg-type"
# (the bad-input tables pass the wrong kinds of fields on purpose)
"""core-ir §1, hir §1.1–§1.2: nodes are immutable, compared by identity, and their
constructors check the kinds of their fields (never types); nothing on a node recurses."""

import copy
import dataclasses
import weakref

import pytest
import torch

from tfexec import (
    Call,
    Constant,
    ConstTensor,
    DimVar,
    Function,
    GridRegionExpr,
    IRConstructionError,
    Span,
    Tuple,
    TupleGetItem,
    TupleType,
    Var,
    f32,
    i64,
    ops,
)
from tfexec.ir.expr import is_expr
from tfexec.ir.ops.elementwise import Add

X = Var("x", f32[4])
I = Var("i", i64[()])
ACC = Var("acc", f32[4])


def _loop(**changes: object) -> GridRegionExpr:
    fields: dict[str, object] = dict(
        extent=3, induction_var=I, init_args=(X,), carried_args=(ACC,), body=ACC, yield_values=(ACC,)
    )
    fields.update(changes)
    return GridRegionExpr(**fields)


def _all_nodes() -> list[object]:
    call = ops.add(X, X)
    return [
        X,
        Constant(1.0, f32[()]),
        call,
        Tuple((X, call)),
        TupleGetItem(Tuple((X,)), 0),
        ConstTensor("w", f32[4]),
        _loop(),
        Function("f", (X,), call),
    ]


def test_nodes_compare_by_identity() -> None:
    a, b = ops.add(X, X), ops.add(X, X)
    assert a == a and a != b
    assert hash(a) == hash(a) and len({a, b, a}) == 2
    assert Var("x", f32[4]) != Var("x", f32[4])
    assert {Constant(1, i64[()]), Constant(1, i64[()])}.__len__() == 2


@pytest.mark.parametrize("node", _all_nodes(), ids=lambda n: type(n).__name__)
def test_nodes_are_frozen_slotted_and_weakly_referenceable(node: object) -> None:
    assert not hasattr(node, "__dict__")
    first = dataclasses.fields(node)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(node, first, None)
    assert weakref.ref(node)() is node
    assert copy.copy(node) is node and copy.deepcopy(node) is node


def test_deepcopy_of_a_container_keeps_nodes_shared() -> None:
    call = ops.add(X, X)
    copied = copy.deepcopy({"a": [call, X], "b": (call,)})
    assert copied["a"][0] is call and copied["b"][0] is call and copied["a"][1] is X


def test_repr_is_shallow() -> None:
    assert repr(X) == "Var(x: f32[4])"
    assert repr(Constant(1.5, f32[()])) == "Constant(1.5: f32[()])"
    assert repr(Constant(1, i64[()], True)) == "Constant(1: i64[()], weak)"
    assert repr(Constant(torch.zeros(2, 3), f32[2, 3])) == "Constant(tensor(2, 3): f32[2, 3])"
    assert repr(ops.add(X, X)) == "Call(Add, 2 args)"
    assert repr(Tuple((X, X, X))) == "Tuple(3 fields)"
    assert repr(TupleGetItem(Tuple((X,)), 0)) == "TupleGetItem([0])"
    assert repr(ConstTensor("w", f32[4])) == "ConstTensor(w: f32[4])"
    assert repr(_loop(extent=DimVar("K") // 32)) == "GridRegionExpr(extent=K // 32, 1 carries)"
    fn = Function("f", (X,), X)
    assert repr(fn) == "Function(f, 1 params)"
    assert repr(ops.call(fn, X)) == "Call(f, 1 args)"


def test_with_checked_type_records_the_inferred_type() -> None:
    call = ops.add(X, X)
    seen = [call.checked_type]
    call.with_checked_type(f32[4])
    seen.append(call.checked_type)
    call.with_checked_type(None)
    seen.append(call.checked_type)
    assert seen == [None, f32[4], None]


def test_span_and_checked_type_are_keyword_fields() -> None:
    span = Span("m.tf.py", 3, 5, "h", "add(x, x)")
    call = Call(Add(), (X, X), span=span, checked_type=f32[4])
    assert call.span is span and call.checked_type == f32[4]
    assert Var("x", f32[4], span=span).span is span


def test_is_expr() -> None:
    assert all(is_expr(n) for n in _all_nodes()[:-1])
    assert not is_expr(Function("f", (X,), X)) and not is_expr(f32[4]) and not is_expr(1.0)


# -- bad input: each constructor names the field and what was expected -----------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Var(3, f32[4]), r"Var.name must be a str, got int 3"),
        (lambda: Var("x", "f32[4]"), r"Var.type must be a TensorType or TupleType, got str 'f32\[4\]'"),
        (lambda: Var("x", f32), r"Var.type must be a TensorType or TupleType, got DTypeSpelling f32"),
        (lambda: Var("x", f32[4], span="m.py:1"), r"Var.span must be a Span or None, got str 'm.py:1'"),
        (lambda: Var("x", f32[4], checked_type="f32"), r"Var.checked_type must be a TensorType, TupleType or None"),
        (lambda: Constant("1", f32[()]), r"Constant.value must be a bool, int, float or torch.Tensor, got str '1'"),
        (lambda: Constant(1.0, TupleType((f32[4],))), r"Constant.type must be a TensorType, got TupleType"),
        (lambda: Constant(1.0, f32[()], 1), r"Constant.weak must be a bool, got int 1"),
        (lambda: Call("add", (X,)), r"Call.target must be an Op or a Function, got str 'add'"),
        (lambda: Call(Add, (X, X)), r"Call.target must be an Op or a Function, got type"),
        (lambda: Call(Add(), (X, "y")), r"Call.args\[1\] must be an Expr, got str 'y'"),
        (lambda: Call(Add(), (X, 1.0)), r"Call.args\[1\] must be an Expr, got float 1.0"),
        (lambda: Call(Add(), [X, X]), r"Call.args must be a tuple of Expr, got list"),
        (lambda: Call(Add(), (X, f32[4])), r"Call.args\[1\] must be an Expr, got TensorType"),
        (lambda: Call(Add(), (X, Function("f", (), X))), r"Call.args\[1\] must be an Expr, got Function"),
        (lambda: Tuple((X, "y")), r"Tuple.fields\[1\] must be an Expr, got str 'y'"),
        (lambda: Tuple(X), r"Tuple.fields must be a tuple of Expr, got Var"),
        (lambda: TupleGetItem("t", 0), r"TupleGetItem.tuple must be an Expr, got str 't'"),
        (lambda: TupleGetItem(X, -1), r"TupleGetItem.index must be a non-negative int, got -1"),
        (lambda: TupleGetItem(X, True), r"TupleGetItem.index must be a non-negative int, got True"),
        (lambda: TupleGetItem(X, 0.0), r"TupleGetItem.index must be a non-negative int, got 0.0"),
        (lambda: ConstTensor(1, f32[4]), r"ConstTensor.name must be a str, got int 1"),
        (lambda: ConstTensor("w", TupleType((f32[4],))), r"ConstTensor.type must be a TensorType, got TupleType"),
        (lambda: _loop(extent=2.0), r"GridRegionExpr.extent must be an int, DimVar or DimExpr, got 2.0"),
        (lambda: _loop(extent="K"), r"GridRegionExpr.extent must be an int, DimVar or DimExpr, got 'K'"),
        (lambda: _loop(induction_var=ops.add(X, X)), r"GridRegionExpr.induction_var must be a Var, got Call"),
        (lambda: _loop(init_args=[X]), r"GridRegionExpr.init_args must be a tuple of Expr, got list"),
        (lambda: _loop(init_args=(1.0,)), r"GridRegionExpr.init_args\[0\] must be an Expr, got float 1.0"),
        (lambda: _loop(carried_args=(ops.add(X, X),)), r"GridRegionExpr.carried_args must be a tuple of Var"),
        (lambda: _loop(body="acc"), r"GridRegionExpr.body must be an Expr, got str 'acc'"),
        (lambda: _loop(yield_values=("acc",)), r"GridRegionExpr.yield_values\[0\] must be an Expr, got str"),
        (
            lambda: _loop(init_args=(X, X)),
            r"GridRegionExpr needs one init arg and one yield value per carried arg: "
            r"got 2 init_args, 1 carried_args, 1 yield_values",
        ),
        (
            lambda: _loop(yield_values=()),
            r"got 1 init_args, 1 carried_args, 0 yield_values",
        ),
        (
            lambda: _loop(init_args=(X, X), carried_args=(ACC, ACC), yield_values=(ACC, ACC)),
            r"GridRegionExpr: the induction variable and carried args must be distinct Vars, "
            r"but acc appears at positions 1 and 2",
        ),
        (
            lambda: _loop(carried_args=(I,), init_args=(X,)),
            r"but i appears at positions 0 and 1",
        ),
        (lambda: _loop(span=(1, 2)), r"GridRegionExpr.span must be a Span or None, got tuple"),
        (lambda: Function(1, (X,), X), r"Function.name must be a str, got int 1"),
        (lambda: Function("f", [X], X), r"Function.params must be a tuple of Var, got \[Var\(x: f32\[4\]\)\]"),
        (lambda: Function("f", (X, "y"), X), r"Function.params must be a tuple of Var, got \(Var\(x: f32\[4\]\), 'y'\)"),
        (lambda: Function("f", (ops.add(X, X),), X), r"Function.params must be a tuple of Var"),
        (lambda: Function("f", (X, X), X), r"Function: params must be distinct Vars, but x appears at positions 0 and 1"),
        (lambda: Function("f", (X,), "x"), r"Function.body must be an Expr, got str 'x'"),
        (lambda: Function("f", (X,), X, "f32[4]"), r"Function.ret_type must be a type or None, got 'f32\[4\]'"),
        (lambda: Function("f", (X,), X, span="here"), r"Function.span must be a Span or None, got str 'here'"),
        (lambda: Span(1, 1, 1), r"Span.file must be a str, got int 1"),
        (lambda: Span("m.py", "1", 1), r"Span.line must be a non-negative int \(1-based\), got '1'"),
        (lambda: Span("m.py", 1, -1), r"Span.column must be a non-negative int \(1-based\), got -1"),
        (lambda: Span("m.py", 1, 1, 3), r"Span.binding must be a str or None, got 3"),
        (lambda: Span("m.py", 1, 1, "h", None), r"Span.op must be a str, got None"),
    ],
)
def test_construction_with_the_wrong_kind_of_field_fails_naming_it(build: object, message: str) -> None:
    with pytest.raises(IRConstructionError, match=message):
        build()  # type: ignore[operator]


def test_construction_errors_are_type_errors() -> None:
    with pytest.raises(TypeError, match=r"Call.args\[0\] must be an Expr"):
        Call(Add(), ("x",))


def test_long_values_are_shortened_in_messages() -> None:
    with pytest.raises(IRConstructionError, match=r"got str '" + "a" * 56 + r"\.\.\.$"):
        Var("x", "a" * 500)


def test_ill_typed_programs_can_be_built() -> None:
    """Constructors check kinds, never types: the mismatch is found by infer_types, later."""
    call = Call(Add(), (Var("a", f32[4]), Var("b", i64[7, 2])))
    loop = _loop(init_args=(Var("z", i64[9]),), extent=-1)
    Function("g", (), Tuple((call, loop)), ret_type=f32[1])
    assert call.checked_type is None


_DEPTH = 20_000  # well past Python's recursion limit


def _chain(n: int) -> Call:
    c = Constant(1.0, f32[()])
    h: Call | Var = X
    for _ in range(n):
        h = ops.add(h, c)
    assert isinstance(h, Call)
    return h


def test_repr_eq_hash_copy_do_not_recurse_on_a_deep_chain() -> None:
    deep = _chain(_DEPTH)
    other = _chain(_DEPTH)
    fn = Function("chain", (X,), deep)
    assert repr(deep) == "Call(Add, 2 args)"
    assert repr(fn) == "Function(chain, 1 params)"
    assert deep == deep and deep != other
    assert hash(deep) != hash(other) or deep is not other
    assert {deep: 1}[deep] == 1
    assert copy.copy(deep) is deep and copy.deepcopy(deep) is deep
    assert copy.deepcopy(fn) is fn and copy.copy(fn) is fn
