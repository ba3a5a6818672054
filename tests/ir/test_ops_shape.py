"""Type rules of the shape ops — ``reshape``, ``transpose``, ``broadcast_to``, ``concat``,
``slice``, ``take`` — checked against torch on CPU where torch has the op, with symbolic
dims, negative axes, promotion in ``concat`` and the errors the rules raise."""

from itertools import product

import pytest
import torch

from tfexec import (
    DimExpr,
    DimVar,
    DType,
    Expr,
    Function,
    TensorType,
    Tuple,
    TupleType,
    TypeInferenceError,
    Var,
    infer_types,
    ops,
)

from ir.op_helpers import DTYPES, infer, rule_outcome, torch_outcome

B, S, H, D = DimVar("B"), DimVar("S"), DimVar("H"), DimVar("D")
F32 = DType.float32


# -- reshape -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_reshape_keeps_the_dtype(dtype: DType) -> None:
    assert infer(lambda x: ops.reshape(x, shape=(3, 2)), TensorType((2, 3), dtype)) == TensorType((3, 2), dtype)
    assert infer(lambda x: ops.reshape(x, shape=()), TensorType((1, 1), dtype)) == TensorType((), dtype)
    assert infer(lambda x: ops.reshape(x, shape=(0, 5)), TensorType((2, 0), dtype)) == TensorType((0, 5), dtype)


def test_reshape_regroups_symbolic_axes() -> None:
    t = TensorType((S, H * D), F32)
    assert infer(lambda x: ops.reshape(x, shape=(S, H, D)), t) == TensorType((S, H, D), F32)
    assert infer(lambda x: ops.reshape(x, shape=(S * H, D)), t) == TensorType((S * H, D), F32)
    # counts that may agree at run time are left to run time: B + 1 is not a product, and
    # B against 6 or S*H against S*4 agree for some bindings (evaluation checks them)
    assert infer(lambda x: ops.reshape(x, shape=(B + 1,)), TensorType((B,), F32)).shape == (B + 1,)  # type: ignore[union-attr]
    assert infer(lambda x: ops.reshape(x, shape=(2, 3)), TensorType((B,), F32)) == TensorType((2, 3), F32)
    assert infer(lambda x: ops.reshape(x, shape=(S, 4)), TensorType((S, H), F32)) == TensorType((S, 4), F32)


@pytest.mark.parametrize(
    ("before", "after", "message"),
    [
        ((2, 3), (4, 2), r"f32\[2, 3\] has 6 elements, shape \[4, 2\] has 8"),
        ((S, H, 2), (S, H, 3), r"f32\[S, H, 2\] has 2\*H\*S elements, shape \[S, H, 3\] has 3\*H\*S"),
        ((S, 4), (4, S, 2), r"f32\[S, 4\] has 4\*S elements, shape \[4, S, 2\] has 8\*S"),
        ((2, 3), (), r"f32\[2, 3\] has 6 elements, shape \[\(\)\] has 1"),
    ],
)
def test_reshape_element_count_errors(before: tuple[object, ...], after: tuple[object, ...], message: str) -> None:
    with pytest.raises(TypeInferenceError, match=r"reshape cannot change the element count: " + message):
        infer(lambda x: ops.reshape(x, shape=after), TensorType(before, F32))  # type: ignore[arg-type]


# -- transpose ---------------------------------------------------------------------------------


@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1), (-1, 0, 1), (0, -2, -1)])
def test_transpose_matches_torch_permute(perm: tuple[int, ...]) -> None:
    want = torch_outcome(lambda: torch.ones(2, 3, 4).permute(perm))
    assert rule_outcome(lambda x: ops.transpose(x, perm=perm), TensorType((2, 3, 4), F32)) == want
    assert infer(lambda x: ops.transpose(x, perm=perm), TensorType((B, 3, S), DType.bfloat16)).dtype is DType.bfloat16  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("perm", "message"),
    [
        ((0, 1), r"transpose perm \(0, 1\) is not a permutation of the 3 axes of f32\[2, 3, 4\]"),
        ((0, 0, 1), r"transpose perm \(0, 0, 1\) is not a permutation of the 3 axes of f32\[2, 3, 4\]"),
        ((0, 2, -1), r"transpose perm \(0, 2, -1\) is not a permutation"),
        ((0, 1, 3), r"transpose: axis 3 is out of range for rank 3 \(valid: -3..2\)"),
    ],
)
def test_transpose_refuses_what_is_not_a_permutation(perm: tuple[int, ...], message: str) -> None:
    assert torch_outcome(lambda: torch.ones(2, 3, 4).permute(perm)) == "error"
    with pytest.raises(TypeInferenceError, match=message):
        infer(lambda x: ops.transpose(x, perm=perm), TensorType((2, 3, 4), F32))


# -- broadcast_to --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "target"),
    [((3,), (2, 3)), ((1, 3), (4, 3)), ((), (2, 2)), ((2, 1), (2, 5)), ((1,), (0,)), ((3,), (3,))],
)
def test_broadcast_to_matches_torch(source: tuple[int, ...], target: tuple[int, ...]) -> None:
    want = torch_outcome(lambda: torch.ones(source, dtype=torch.int8).broadcast_to(target))
    assert rule_outcome(lambda x: ops.broadcast_to(x, shape=target), TensorType(source, DType.int8)) == want


@pytest.mark.parametrize(
    ("source", "target", "message"),
    [
        ((2, 3), (3,), r"broadcast_to cannot lower the rank: f32\[2, 3\] to \[3\]"),
        ((3,), (2, 4), r"broadcast_to: axis 0 of f32\[3\] has size 3, target \[2, 4\] needs 4 \(or 1\)"),
        ((2,), (0,), r"axis 0 of f32\[2\] has size 2, target \[0\] needs 0"),
    ],
)
def test_broadcast_to_errors_match_torch(source: tuple[int, ...], target: tuple[int, ...], message: str) -> None:
    assert torch_outcome(lambda: torch.ones(source).broadcast_to(target)) == "error"
    with pytest.raises(TypeInferenceError, match=message):
        infer(lambda x: ops.broadcast_to(x, shape=target), TensorType(source, F32))


def test_broadcast_to_symbolic_target() -> None:
    assert infer(lambda x: ops.broadcast_to(x, shape=(B, 4)), TensorType((1, 4), F32)) == TensorType((B, 4), F32)
    assert infer(lambda x: ops.broadcast_to(x, shape=(B, 4)), TensorType((B, 1), F32)) == TensorType((B, 4), F32)


# -- concat ------------------------------------------------------------------------------------------


def test_concat_promotes_as_torch_cat_for_every_dtype_pair() -> None:
    mismatches = []
    for da, db in product(DTYPES, DTYPES):
        a, b = torch.ones(2, 3, dtype=da.torch), torch.ones(1, 3, dtype=db.torch)
        want = torch_outcome(lambda: torch.cat([a, b]))
        got = rule_outcome(lambda x, y: ops.concat(x, y), TensorType((2, 3), da), TensorType((1, 3), db))
        if want != got:
            mismatches.append(f"concat {da} {db}: torch {want}, rule {got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_concat_axes_and_sizes_match_torch(axis: int) -> None:
    shapes = [(2, 3), (2, 3), (2, 3)]
    want = torch_outcome(lambda: torch.cat([torch.ones(s) for s in shapes], dim=axis))
    assert rule_outcome(lambda *xs: ops.concat(*xs, axis=axis), *(TensorType(s, F32) for s in shapes)) == want


def test_concat_sums_symbolic_sizes() -> None:
    t = infer(lambda a, b, c: ops.concat(a, b, c, axis=1), TensorType((2, S), F32), TensorType((2, 3), F32), TensorType((2, B), F32))
    assert t == TensorType((2, DimExpr("add", DimExpr("add", S, 3), B)), F32)
    assert infer(lambda a: ops.concat(a), TensorType((2, 3), DType.int8)) == TensorType((2, 3), DType.int8)


@pytest.mark.parametrize(
    ("shapes", "axis", "message"),
    [
        (((2, 3), (2, 4)), 0, r"concat operands differ off axis 0: f32\[2, 3\] and f32\[2, 4\] at axis 1"),
        (((2, 3), (3,)), 0, r"concat operands must share a rank, found f32\[2, 3\] and f32\[3\]"),
        (((2, 3), (2, 3)), 2, r"concat: axis 2 is out of range for rank 2"),
        (((), ()), 0, r"concat: axis 0 is out of range for rank 0"),
    ],
)
def test_concat_errors(shapes: tuple[tuple[int, ...], ...], axis: int, message: str) -> None:
    assert torch_outcome(lambda: torch.cat([torch.ones(s) for s in shapes], dim=axis)) == "error"
    with pytest.raises(TypeInferenceError, match=message):
        infer(lambda *xs: ops.concat(*xs, axis=axis), *(TensorType(s, F32) for s in shapes))


def test_concat_without_operands_is_an_arity_error() -> None:
    with pytest.raises(TypeInferenceError, match=r"concat takes at least 1 operand\(s\), got 0"):
        infer(lambda: ops.concat())


# -- slice -------------------------------------------------------------------------------------------


def test_slice_type_is_its_sizes() -> None:
    x = TensorType((8, S), DType.float16)
    k = TensorType((), DType.int64)
    t = infer(lambda a, i: ops.slice(a, (0, ops.dim_mul(i, 4)), sizes=(2, 4)), x, k)
    assert t == TensorType((2, 4), DType.float16)
    assert infer(lambda a: ops.slice(a, (1, 0), sizes=(3, S), strides=(2, 1)), x) == TensorType((3, S), DType.float16)
    assert infer(lambda a: ops.slice(a, (0,), sizes=(0,)), TensorType((0,), F32)) == TensorType((0,), F32)


@pytest.mark.parametrize("start_dtype", [DType.int8, DType.int32, DType.uint8], ids=str)
def test_slice_starts_may_be_any_rank0_integer(start_dtype: DType) -> None:
    t = infer(lambda a, s: ops.slice(a, (s,), sizes=(2,)), TensorType((4,), F32), TensorType((), start_dtype))
    assert t == TensorType((2,), F32)


@pytest.mark.parametrize(
    ("start", "message"),
    [
        (TensorType((), DType.float32), r"slice start 0 must be a rank-0 integer, found f32\[\(\)\]"),
        (TensorType((), DType.bool), r"slice start 0 must be a rank-0 integer, found b1\[\(\)\]"),
        (TensorType((1,), DType.int64), r"slice start 0 must be a rank-0 integer, found i64\[1\]"),
    ],
)
def test_slice_start_errors(start: TensorType, message: str) -> None:
    with pytest.raises(TypeInferenceError, match=message):
        infer(lambda a, s: ops.slice(a, (s,), sizes=(2,)), TensorType((4,), F32), start)


def test_slice_rank_and_starts_errors() -> None:
    with pytest.raises(TypeInferenceError, match=r"slice \(C1\): f32\[4, 4\] has rank 2 but got 1 starts and 1 sizes"):
        infer(lambda a: ops.slice(a, (0,), sizes=(2,)), TensorType((4, 4), F32))
    with pytest.raises(TypeInferenceError, match=r"slice starts must be a tuple of rank-0 integers, found i64\[\(\)\]"):
        infer(lambda a, s: ops.slice(a, s, sizes=(2,)), TensorType((4,), F32), TensorType((), DType.int64))
    pair = TupleType((TensorType((), DType.int64),))
    assert infer(lambda a, s: ops.slice(a, s, sizes=(2,)), TensorType((4,), F32), pair) == TensorType((2,), F32)


@pytest.mark.parametrize(
    ("dim", "size", "stride", "ok"),
    [(4, 4, 1, True), (4, 5, 1, False), (7, 4, 2, True), (6, 4, 2, False), (4, 1, 9, True), (0, 0, 1, True), (0, 1, 1, False)],
)
def test_slice_window_that_cannot_fit_even_at_start_0_is_a_type_error(dim: int, size: int, stride: int, ok: bool) -> None:
    def build(a: Expr) -> Expr:
        return ops.slice(a, (0,), sizes=(size,), strides=(stride,))

    if ok:
        assert infer(build, TensorType((dim,), F32)) == TensorType((size,), F32)
        assert torch.ones(dim)[0 : (size - 1) * stride + 1 : stride].shape == (size,) or size == 0
    else:
        with pytest.raises(TypeInferenceError, match=rf"slice \(C3\): a window of {size} with stride {stride} spans .* axis 0 of f32\[{dim}\] has only {dim}"):
            infer(build, TensorType((dim,), F32))


def test_slice_of_a_tuple_operand() -> None:
    pair = TupleType((TensorType((4,), F32),))
    with pytest.raises(TypeInferenceError, match=r"slice operand must be a tensor, found tuple \(f32\[4\],\)"):
        infer(lambda a: ops.slice(a, (0,), sizes=(2,)), pair)


# -- take ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, -1, -3])
def test_take_matches_index_select_for_1d_indices(axis: int) -> None:
    for dt in (DType.float32, DType.bfloat16, DType.bool, DType.int8):
        want = torch_outcome(lambda: torch.index_select(torch.ones(2, 3, 4, dtype=dt.torch), axis, torch.tensor([0, 1, 0, 1, 1])))
        got = rule_outcome(lambda x, i: ops.take(x, i, axis=axis), TensorType((2, 3, 4), dt), TensorType((5,), DType.int64))
        assert got == want, (dt, axis)


def test_take_generalises_to_any_index_shape() -> None:
    emb = TensorType((100, 64), DType.bfloat16)
    ids = TensorType((B, S), DType.int32)
    assert infer(ops.take, emb, ids) == TensorType((B, S, 64), DType.bfloat16)
    assert infer(ops.take, emb, TensorType((), DType.int64)) == TensorType((64,), DType.bfloat16)
    assert infer(lambda x, i: ops.take(x, i, axis=-1), emb, TensorType((2, 3), DType.uint8)) == TensorType((100, 2, 3), DType.bfloat16)


@pytest.mark.parametrize("dtype", [DType.float32, DType.bool, DType.float16], ids=str)
def test_take_indices_must_be_integers(dtype: DType) -> None:
    assert torch_outcome(lambda: torch.index_select(torch.ones(4), 0, torch.zeros(2, dtype=dtype.torch))) == "error"
    with pytest.raises(TypeInferenceError, match=rf"take indices must be integers, found {dtype}\[2\]"):
        infer(ops.take, TensorType((4,), F32), TensorType((2,), dtype))


def test_take_axis_out_of_range() -> None:
    with pytest.raises(TypeInferenceError, match=r"take: axis 2 is out of range for rank 2 \(valid: -2..1\)"):
        infer(lambda x, i: ops.take(x, i, axis=2), TensorType((4, 4), F32), TensorType((2,), DType.int64))


def test_shape_ops_refuse_tuple_operands() -> None:
    pair = TupleType((TensorType((4,), F32),))
    for build in (
        lambda a: ops.reshape(a, shape=(4,)),
        lambda a: ops.transpose(a, perm=(0,)),
        lambda a: ops.broadcast_to(a, shape=(4,)),
        lambda a: ops.concat(a),
    ):
        with pytest.raises(TypeInferenceError, match=r"operand 0 must be a tensor, found tuple \(f32\[4\],\)"):
            infer(build, pair)


def test_starts_given_as_a_tuple_node() -> None:
    x = Var("x", TensorType((4,), F32))
    call = ops.slice(x, Tuple((ops.as_expr(1),)), sizes=(3,))
    infer_types(Function("f", (x,), call))
    assert call.checked_type == TensorType((3,), F32)
