"""types §3: ``DimVar``/``DimExpr`` arithmetic, folding, ``resolve_dim`` and its errors."""

import ast
import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfexec import DimExpr, DimVar, TfexecError, resolve_dim
from tfexec.ir.dims import (
    DIM_OPS,
    DimError,
    apply_dim_op,
    dim_expr,
    dim_vars,
    is_shape_dim,
    product_factors,
    shape_product,
)

B = DimVar("B")
K = DimVar("K")


def test_python_operators_build_dim_exprs() -> None:
    assert B * 2 == DimExpr("mul", B, 2)
    assert K // 32 == DimExpr("floordiv", K, 32)
    assert B + K == DimExpr("add", B, K)
    assert B - 1 == DimExpr("sub", B, 1)
    assert B % 4 == DimExpr("mod", B, 4)
    assert 3 + B == DimExpr("add", 3, B)
    assert 3 - B == DimExpr("sub", 3, B)
    assert 2 * B == DimExpr("mul", 2, B)
    assert 64 // B == DimExpr("floordiv", 64, B)
    assert 64 % B == DimExpr("mod", 64, B)
    assert (B + 1) * K == DimExpr("mul", DimExpr("add", B, 1), K)


def test_ints_fold_and_identities_vanish() -> None:
    assert dim_expr("mul", 6, 7) == 42
    assert dim_expr("floordiv", -7, 2) == -4
    assert dim_expr("min", 3, 9) == 3 and dim_expr("max", 3, 9) == 9
    assert B + 0 is B and 0 + B is B and B - 0 is B
    assert B * 1 is B and 1 * B is B and B // 1 is B
    e = B * 2
    assert e + 0 is e and 1 * e is e
    # not identities: these stay symbolic
    assert 0 - B == DimExpr("sub", 0, B)
    assert 1 // B == DimExpr("floordiv", 1, B)


def test_dims_are_frozen_slotted_hashable_values() -> None:
    assert DimVar("B") == B and hash(DimVar("B")) == hash(B)
    assert B * 2 == DimVar("B") * 2 and hash(B * 2) == hash(DimVar("B") * 2)
    assert B * 2 != 2 * B  # structural, not algebraic
    assert {B, DimVar("B"), K} == {B, K}
    assert not hasattr(B, "__dict__") and not hasattr(B * 2, "__dict__")
    with pytest.raises(AttributeError):
        B.name = "C"  # type: ignore[misc]
    assert copy.deepcopy(B * K) == B * K


def test_str_is_the_text_spelling_and_valid_python() -> None:
    cases = {
        B: "B",
        B * 2: "B * 2",
        K // 32: "K // 32",
        (B + 1) * 2: "(B + 1) * 2",
        B - (K - 1): "B - (K - 1)",
        B % 3: "B % 3",
        dim_expr("min", B, 4): "min(B, 4)",
        dim_expr("max", B + 1, K): "max(B + 1, K)",
        dim_expr("add", B, -1): "B + -1",
        B * 2 + 1: "B * 2 + 1",
        B - K - 1: "B - K - 1",
        B // (K * 2): "B // (K * 2)",
        dim_expr("max", B, K) * 2: "max(B, K) * 2",
    }
    for dim, text in cases.items():
        assert str(dim) == text
        ast.parse(text, mode="eval")


def test_resolve_dim_uses_python_integer_semantics() -> None:
    bindings = {"B": -7, "K": 2}
    assert resolve_dim(5, {}) == 5
    assert resolve_dim(B, bindings) == -7
    assert resolve_dim(B // K, bindings) == -4  # floor division, not truncation
    assert resolve_dim(B % K, bindings) == 1  # sign follows the divisor
    assert resolve_dim(7 % DimVar("M"), {"M": -2}) == -1
    assert resolve_dim(-7 // DimVar("M"), {"M": 2}) == -4
    assert resolve_dim(dim_expr("min", B, K), bindings) == -7
    assert resolve_dim(dim_expr("max", B, K), bindings) == 2
    assert resolve_dim((B + 1) * K - 3, bindings) == -15


def test_unbound_dimvar_error_names_it_and_what_is_bound() -> None:
    with pytest.raises(DimError, match=r"dim B is not bound \(bound dims: K, M\)"):
        resolve_dim(B * 2 + K, {"M": 1, "K": 2})
    with pytest.raises(DimError, match=r"dim B is not bound \(bound dims: none\)"):
        resolve_dim(B, {})


@pytest.mark.parametrize(("op", "symbol"), [("floordiv", "//"), ("mod", "%")])
def test_division_by_zero_is_a_dim_error(op: str, symbol: str) -> None:
    with pytest.raises(DimError, match=rf"dim arithmetic: {op} by zero \(5 {symbol} 0\)"):
        apply_dim_op(op, 5, 0)
    with pytest.raises(DimError, match=rf"{op} by zero \(5 {symbol} 0\)"):
        resolve_dim(DimExpr(op, B, K), {"B": 5, "K": 0})  # type: ignore[arg-type]
    with pytest.raises(DimError, match=rf"{op} by zero"):
        dim_expr(op, 5, 0)


def test_dim_error_is_a_tfexec_error_and_a_value_error() -> None:
    with pytest.raises(TfexecError):
        resolve_dim(B, {})
    with pytest.raises(ValueError):
        resolve_dim(B, {})


def test_bad_operators_and_operands_are_refused() -> None:
    with pytest.raises(DimError, match=r"unknown dim operator 'pow'; expected one of add, sub"):
        apply_dim_op("pow", 2, 3)
    with pytest.raises(DimError, match=r"unknown dim operator 'pow'"):
        dim_expr("pow", 2, 3)
    with pytest.raises(DimError, match=r"unknown dim operator 'pow'"):
        dim_expr("pow", B, 0)
    with pytest.raises(TypeError, match=r"DimExpr op must be one of add, .*got 'pow'"):
        DimExpr("pow", B, 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"DimExpr operand must be int, DimVar or DimExpr, got 2.5"):
        DimExpr("add", B, 2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"dim arithmetic needs int/DimVar/DimExpr operands, got DimVar\(name='B'\) and True"):
        B + True
    with pytest.raises(TypeError, match=r"got DimVar\(name='B'\) and 'x'"):
        B * "x"  # type: ignore[operator]
    with pytest.raises(TypeError, match=r"DimVar name must be an identifier string, got '2B'"):
        DimVar("2B")
    with pytest.raises(TypeError, match=r"DimVar name must be an identifier string, got 3"):
        DimVar(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"resolve_dim needs an int, DimVar or DimExpr, got bool True"):
        resolve_dim(True, {})
    with pytest.raises(TypeError, match=r"resolve_dim needs an int, DimVar or DimExpr, got str 'B'"):
        resolve_dim("B", {"B": 1})  # type: ignore[arg-type]


def test_is_shape_dim_excludes_bool_and_floats() -> None:
    assert is_shape_dim(3) and is_shape_dim(B) and is_shape_dim(B + 1)
    assert not is_shape_dim(True) and not is_shape_dim(3.0) and not is_shape_dim("B")


def test_dim_vars_and_products() -> None:
    assert dim_vars(3) == set()
    assert dim_vars((B + 1) * K // 2) == {"B", "K"}
    assert product_factors(B * 4 * K) == (4, ("B", "K"))
    assert product_factors(2 * (K * B)) == (2, ("B", "K"))
    assert product_factors(B + 1) is None
    assert shape_product((B, 4, K * 2)) == (8, ("B", "K"))
    assert shape_product((B, K // 2)) is None
    assert shape_product(()) == (1, ())


_small = st.integers(min_value=-50, max_value=50)
_ops = st.sampled_from(DIM_OPS)


@settings(max_examples=60, deadline=None)
@given(op=_ops, a=_small, b=_small)
def test_dim_expr_agrees_with_apply_dim_op(op: str, a: int, b: int) -> None:
    """``dim_expr`` over symbolic dims, resolved, computes what ``apply_dim_op`` computes on ints."""
    try:
        want = apply_dim_op(op, a, b)
    except DimError:
        with pytest.raises(DimError, match="by zero"):
            resolve_dim(dim_expr(op, B, K), {"B": a, "K": b})
        return
    assert dim_expr(op, a, b) == want
    for lhs, rhs in ((B, K), (B, b), (a, K)):
        assert resolve_dim(dim_expr(op, lhs, rhs), {"B": a, "K": b}) == want
    python = {"add": a + b, "sub": a - b, "mul": a * b, "min": min(a, b), "max": max(a, b)}
    if b != 0:
        python |= {"floordiv": a // b, "mod": a % b}
    assert want == python[op]


@settings(max_examples=40, deadline=None)
@given(a=_small, b=_small.filter(lambda v: v != 0), c=_small)
def test_python_operators_resolve_like_python_ints(a: int, b: int, c: int) -> None:
    x, y, z = DimVar("x"), DimVar("y"), DimVar("z")
    bindings = {"x": a, "y": b, "z": c}
    assert resolve_dim((x + z) // y, bindings) == (a + c) // b
    assert resolve_dim(x * z % y, bindings) == a * c % b
    assert resolve_dim(c - x * 2 + y, bindings) == c - a * 2 + b


_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floordiv", ast.Mod: "mod"}


def _from_ast(node: ast.expr) -> object:
    """Rebuild a dim from its parsed text (no eval): the inverse of ``str``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = node.operand.value
        assert isinstance(value, int)
        return -value
    if isinstance(node, ast.Name):
        return DimVar(node.id)
    if isinstance(node, ast.BinOp):
        return DimExpr(_BINOPS[type(node.op)], _from_ast(node.left), _from_ast(node.right))  # type: ignore[arg-type]
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return DimExpr(node.func.id, _from_ast(node.args[0]), _from_ast(node.args[1]))  # type: ignore[arg-type]


_leaf = st.one_of(st.integers(min_value=-9, max_value=9), st.sampled_from([B, K, DimVar("N")]))
_tree = st.recursive(
    _leaf, lambda inner: st.builds(DimExpr, _ops, inner, inner), max_leaves=8
)


@settings(max_examples=80, deadline=None)
@given(dim=_tree)
def test_str_parses_back_to_the_same_dim(dim: object) -> None:
    """Parenthesisation is exactly what Python needs: the text's AST is the same tree."""
    text = str(dim)
    assert _from_ast(ast.parse(text, mode="eval").body) == dim
