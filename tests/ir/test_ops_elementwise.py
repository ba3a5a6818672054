"""Type rules of the elementwise ops (binary, comparisons, logical, unary, cast, where),
checked against what torch produces on CPU: result dtype and shape across every dtype,
broadcasting (rank 0, size-1 and size-0 axes), weak Python-scalar operands, and the
errors the rules raise where torch raises."""

from collections.abc import Callable
from itertools import product

import pytest
import torch

from tfexec import (
    Call,
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
from tfexec.ir.ops.catalogue import OPS_BY_NAME
from tfexec.ir.ops.elementwise import BINARY_OPS, UNARY_OPS, Add

from ir.op_helpers import DTYPES, TORCH_BINARY, TORCH_UNARY, infer, ones, rule_outcome, torch_outcome

B, C = DimVar("B"), DimVar("C")


def wrapped(x: torch.Tensor, s: bool | int | float) -> torch.Tensor:
    """A Python scalar as torch wraps it for an op that takes no scalar: the dtype it promotes to."""
    return torch.tensor(s, dtype=torch.result_type(x, s))


TAKES_SCALAR_RHS = {"add", "sub", "mul", "div", "pow", "eq", "ne", "lt", "le", "gt", "ge"}

# Kept on purpose (see the elementwise module docstring): the rule refuses pow with a bool
# result although torch's scalar fast path accepts ``bool ** True`` / ``bool ** False``.
KEPT_STRICTER = {("pow", DType.bool, True)}


def test_every_elementwise_op_has_a_torch_reference_here() -> None:
    assert {cls.name for cls in BINARY_OPS} == set(TORCH_BINARY)
    assert {cls.name for cls in UNARY_OPS} == set(TORCH_UNARY)


# -- binary ops: the full dtype matrix -------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TORCH_BINARY))
@pytest.mark.parametrize(
    "shapes",
    [((3,), (3,)), ((), (3,)), ((2, 1), (3,)), ((), ()), ((1, 0), (4, 1))],
    ids=["same", "rank0-lhs", "size1-broadcast", "both-rank0", "size0"],
)
def test_binary_dtype_and_shape_match_torch(name: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    fn = TORCH_BINARY[name][0]
    sa, sb = shapes
    mismatches = []
    for da, db in product(DTYPES, DTYPES):
        want = torch_outcome(lambda: fn(ones(sa, da), ones(sb, db)))
        got = rule_outcome(getattr(ops, name), TensorType(sa, da), TensorType(sb, db))
        if want != got:
            mismatches.append(f"{da}{list(sa)} {name} {db}{list(sb)}: torch {want}, rule {got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("name", sorted(TORCH_BINARY))
@pytest.mark.parametrize("scalar", [True, 2, 0.5], ids=["bool", "int", "float"])
@pytest.mark.parametrize("rank", [0, 1])
@pytest.mark.parametrize("side", ["right", "left"])
def test_binary_weak_scalar_promotes_as_torch_python_scalar(
    name: str, scalar: bool | int | float, rank: int, side: str
) -> None:
    fn, reflected = TORCH_BINARY[name]
    shape = (3,) * rank
    mismatches = []
    for dt in DTYPES:
        x = ones(shape, dt)
        if side == "right":
            compute = (lambda: fn(x, scalar)) if name in TAKES_SCALAR_RHS else (lambda: fn(x, wrapped(x, scalar)))
            got = rule_outcome(getattr(ops, name), TensorType(shape, dt), scalar)
        else:
            compute = (lambda: reflected(scalar, x)) if reflected is not None else (lambda: fn(wrapped(x, scalar), x))
            got = rule_outcome(getattr(ops, name), scalar, TensorType(shape, dt))
        want = torch_outcome(compute)
        if want != got and (name, dt, scalar) not in KEPT_STRICTER:
            mismatches.append(f"{dt}{list(shape)} {name} {scalar!r} ({side}): torch {want}, rule {got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize(
    ("build", "dtype", "scalar", "want"),
    [
        (ops.add, DType.float16, 0.5, DType.float16),
        (ops.add, DType.int32, 0.5, DType.float32),
        (ops.add, DType.int32, 2, DType.int32),
        (ops.add, DType.uint8, 2, DType.uint8),
        (ops.add, DType.bool, 2, DType.int64),
        (ops.mul, DType.bfloat16, 2.0, DType.bfloat16),
        (ops.div, DType.int8, 2, DType.float32),
        (ops.pow, DType.int32, 0.5, DType.float32),
        (ops.maximum, DType.float16, 1, DType.float16),
        (ops.lt, DType.float16, 0.5, DType.bool),
    ],
)
def test_weak_scalar_examples(build: Callable[..., Expr], dtype: DType, scalar: float, want: DType) -> None:
    assert infer(build, TensorType((4,), dtype), scalar) == TensorType((4,), want)
    # a rank-0 tensor is still stronger than a Python scalar of the same category
    assert infer(build, TensorType((), dtype), scalar) == TensorType((), want)


def test_rank0_tensor_promotion_against_dimensioned_tensors() -> None:
    # a rank-0 operand only wins across categories (f64[()] + f32[4] stays f32; f32[()] + i32[4] is f32)
    assert infer(ops.add, TensorType((), DType.float64), TensorType((4,), DType.float32)).dtype is DType.float32
    assert infer(ops.add, TensorType((), DType.float32), TensorType((4,), DType.int32)).dtype is DType.float32
    assert infer(ops.add, TensorType((), DType.int64), TensorType((4,), DType.uint8)).dtype is DType.uint8


def test_two_weak_scalars_promote_between_themselves() -> None:
    assert infer(ops.add, 1, 2) == TensorType((), DType.int64)
    assert infer(ops.add, 1, 0.5) == TensorType((), DType.float32)
    assert infer(ops.add, True, 2) == TensorType((), DType.int64)
    assert infer(ops.div, 1, 2) == TensorType((), DType.float32)
    assert infer(ops.logical_and, True, 0) == TensorType((), DType.bool)


# -- broadcasting ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ((B, 1), (1, 4), (B, 4)),
        ((1,), (B, C), (B, C)),
        ((), (B, 3), (B, 3)),
        ((B, 3), (B, 3), (B, 3)),
        ((2, 1, 3), (4, 1), (2, 4, 3)),
        ((0,), (1,), (0,)),
        ((5, 0), (1, 0), (5, 0)),
    ],
)
def test_broadcast_shapes(a: tuple[object, ...], b: tuple[object, ...], want: tuple[object, ...]) -> None:
    assert infer(ops.mul, TensorType(a, DType.float32), TensorType(b, DType.float32)).shape == want  # type: ignore[arg-type]
    assert infer(ops.mul, TensorType(b, DType.float32), TensorType(a, DType.float32)).shape == want  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ((3,), (4,), r"axis -1 has sizes 3 and 4"),
        ((0,), (3,), r"axis -1 has sizes 0 and 3"),
        ((2, 3), (3, 3), r"axis -2 has sizes 2 and 3"),
        ((B,), (C,), r"axis -1 has sizes B and C"),
        ((B,), (4,), r"axis -1 has sizes B and 4"),
    ],
)
def test_broadcast_errors_name_the_axis_and_sizes(a: tuple[object, ...], b: tuple[object, ...], message: str) -> None:
    pattern = r"^add\(x0, x1\): add: shapes \[.*\] and \[.*\] do not broadcast: " + message + r" \(sizes must be equal or 1"
    with pytest.raises(TypeInferenceError, match=pattern):
        infer(ops.add, TensorType(a, DType.float32), TensorType(b, DType.float32))  # type: ignore[arg-type]


def test_static_broadcast_errors_agree_with_torch() -> None:
    with pytest.raises(RuntimeError):
        torch.add(torch.ones(3), torch.ones(4))
    with pytest.raises(RuntimeError):
        torch.add(torch.ones(0), torch.ones(3))


# -- unary ops ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TORCH_UNARY))
@pytest.mark.parametrize("shape", [(), (2, 3), (0,)], ids=["rank0", "rank2", "size0"])
def test_unary_dtype_and_shape_match_torch(name: str, shape: tuple[int, ...]) -> None:
    fn = TORCH_UNARY[name]
    mismatches = []
    for dt in DTYPES:
        want = torch_outcome(lambda: fn(ones(shape, dt)))
        got = rule_outcome(getattr(ops, name), TensorType(shape, dt))
        if want != got:
            mismatches.append(f"{name}({dt}{list(shape)}): torch {want}, rule {got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("name", sorted(TORCH_UNARY))
@pytest.mark.parametrize("scalar", [True, 2, 0.5], ids=["bool", "int", "float"])
def test_unary_of_weak_scalar_matches_torch_on_its_tensor(name: str, scalar: bool | int | float) -> None:
    assert rule_outcome(getattr(ops, name), scalar) == torch_outcome(lambda: TORCH_UNARY[name](torch.tensor(scalar)))


def test_gelu_tanh_has_the_same_type_rule() -> None:
    def tanh_gelu(x: Expr) -> Call:
        return ops.gelu(x, approximate="tanh")

    assert infer(tanh_gelu, TensorType((2,), DType.bfloat16)) == TensorType((2,), DType.bfloat16)
    with pytest.raises(TypeInferenceError, match=r"gelu needs a floating operand, found i64\[2\]"):
        infer(tanh_gelu, TensorType((2,), DType.int64))


@pytest.mark.parametrize(
    ("name", "dtype", "message"),
    [
        ("neg", DType.bool, r"neg is not defined for bool \(torch rejects it\), found b1\[3\]"),
        ("abs", DType.bool, r"abs is not defined for bool .*found b1\[3\]"),
        ("relu", DType.bool, r"relu is not defined for bool .*found b1\[3\]"),
        ("silu", DType.int32, r"silu needs a floating operand, found i32\[3\] \(cast it first\)"),
        ("gelu", DType.uint8, r"gelu needs a floating operand, found u8\[3\]"),
    ],
)
def test_unary_errors_say_expected_and_found(name: str, dtype: DType, message: str) -> None:
    with pytest.raises(TypeInferenceError, match=rf"^{name}\(x0.*\): {message}"):
        infer(getattr(ops, name), TensorType((3,), dtype))


# -- binary errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "a", "b", "message"),
    [
        (ops.sub, DType.bool, DType.bool, r"sub is not defined for bool operands \(torch rejects it\), found b1\[3\] and b1\[3\]"),
        (ops.sub, DType.bool, DType.float32, r"found b1\[3\] and f32\[3\]"),
        (ops.sub, DType.int32, DType.bool, r"found i32\[3\] and b1\[3\]"),
        (ops.pow, DType.bool, DType.bool, r"pow is not defined for bool operands"),
    ],
)
def test_bool_arithmetic_errors(build: Callable[..., Expr], a: DType, b: DType, message: str) -> None:
    with pytest.raises(TypeInferenceError, match=message):
        infer(build, TensorType((3,), a), TensorType((3,), b))


def test_sub_refuses_a_python_bool_as_torch_does() -> None:
    with pytest.raises(RuntimeError, match="Subtraction"):
        torch.sub(torch.ones(3), True)
    with pytest.raises(TypeInferenceError, match=r"^sub\(x0, True\): .*found f32\[3\] and Python scalar b1\[\(\)\]"):
        infer(ops.sub, TensorType((3,), DType.float32), True)


def test_tuple_operand_is_refused_naming_the_operand() -> None:
    pair = TupleType((TensorType((3,), DType.float32), TensorType((3,), DType.float32)))
    with pytest.raises(TypeInferenceError, match=r"add: operand 0 must be a tensor, found tuple \(f32\[3\], f32\[3\]\)"):
        infer(ops.add, pair, TensorType((3,), DType.float32))


def test_arity_is_checked_before_the_rule() -> None:
    x = Var("x", TensorType((3,), DType.float32))
    call = ops.apply(Add(), x)
    with pytest.raises(TypeInferenceError, match=r"^add\(x\): add takes 2 operand\(s\), got 1$"):
        infer_types(Function("f", (x,), call))


# -- cast ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", DTYPES, ids=str)
def test_cast_gives_the_target_dtype_from_every_dtype(target: DType) -> None:
    for source in DTYPES:
        want = torch_outcome(lambda: ones((2, 0, 3), source).to(target.torch))
        assert rule_outcome(lambda x: ops.cast(x, dtype=target), TensorType((2, 0, 3), source)) == want
    assert infer(lambda: ops.cast(1.5, dtype=target)) == TensorType((), target)


# -- where -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shapes",
    [((3,), (3,), ()), ((), (2, 1), (3,)), ((2, 3), (), ())],
    ids=["scalar-b", "scalar-cond", "scalar-branches"],
)
def test_where_dtype_and_shape_match_torch(shapes: tuple[tuple[int, ...], ...]) -> None:
    sc, sa, sb = shapes
    mismatches = []
    for da, db in product(DTYPES, DTYPES):
        want = torch_outcome(lambda: torch.where(ones(sc, DType.bool), ones(sa, da), ones(sb, db)))
        got = rule_outcome(ops.where, TensorType(sc, DType.bool), TensorType(sa, da), TensorType(sb, db))
        if want != got:
            mismatches.append(f"where({list(sc)}, {da}{list(sa)}, {db}{list(sb)}): torch {want}, rule {got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("scalar", [True, 2, 0.5], ids=["bool", "int", "float"])
@pytest.mark.parametrize("rank", [0, 1])
def test_where_with_a_weak_scalar_branch_matches_torch(scalar: bool | int | float, rank: int) -> None:
    cond = torch.tensor([True, False, True])
    shape = (3,) * rank
    for dt in DTYPES:
        c, x = TensorType((3,), DType.bool), TensorType(shape, dt)
        assert rule_outcome(ops.where, c, x, scalar) == torch_outcome(lambda: torch.where(cond, ones(shape, dt), scalar))
        assert rule_outcome(ops.where, c, scalar, x) == torch_outcome(lambda: torch.where(cond, scalar, ones(shape, dt)))


@pytest.mark.parametrize(("a", "b"), list(product([True, 2, 0.5], repeat=2)))
def test_where_with_two_scalar_branches_matches_torch(a: bool | int | float, b: bool | int | float) -> None:
    cond = torch.tensor([True, False])
    want = torch_outcome(lambda: torch.where(cond, a, b))
    assert rule_outcome(ops.where, TensorType((2,), DType.bool), a, b) == want


@pytest.mark.parametrize("cond", [d for d in DTYPES if d is not DType.bool], ids=str)
def test_where_condition_must_be_bool(cond: DType) -> None:
    # torch refuses every non-bool condition except a deprecated uint8 one (kept stricter here)
    with pytest.raises(TypeInferenceError, match=rf"where condition must be bool, found {cond}\[3\]"):
        infer(ops.where, TensorType((3,), cond), TensorType((3,), DType.float32), 0.0)


def test_where_broadcast_error_names_all_three_shapes() -> None:
    with pytest.raises(TypeInferenceError, match=r"shapes \[3\] and \[4\] and \[3\] do not broadcast"):
        infer(ops.where, TensorType((3,), DType.bool), TensorType((4,), DType.float32), TensorType((3,), DType.float32))


def test_binary_op_classes_are_in_the_catalogue_by_name() -> None:
    for cls in (*BINARY_OPS, *UNARY_OPS):
        assert OPS_BY_NAME[cls.name] is cls


def test_tuple_operand_of_where_condition() -> None:
    t = TensorType((3,), DType.bool)
    x = Var("x", t)
    call = ops.where(Tuple((x,)), 1.0, 0.0)
    with pytest.raises(TypeInferenceError, match=r"where: operand 0 must be a tensor, found tuple \(b1\[3\],\)"):
        infer_types(Function("f", (x,), call))
