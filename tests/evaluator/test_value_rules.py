"""Value rules of the op catalogue (hir.md §ops, "Value rules are torch's, by name").

Three things are checked: that each op's value rule and type rule agree (the evaluated
data has the dtype and concrete shape of the inferred ``checked_type``, DimVars
resolved); that values equal torch's own, bitwise; and the decisions hir.md fixes where
torch leaves them open (empty reductions, ``axes=()``, first maximal index, true
division, truncating casts, no wrap-around indices, refused windows, dim arithmetic with
Python integer semantics).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import product

import pytest
import torch
import torch.nn.functional as F

from tfexec import (
    DimExpr,
    DimVar,
    DType,
    EvalError,
    Expr,
    Function,
    Layout,
    Mesh,
    Replicate,
    ShardLayout,
    Split,
    TensorType,
    Var,
    describe_expr,
    evaluate,
    infer_types,
    ops,
    resolve_dim,
)

from ir.op_helpers import TORCH_BINARY, TORCH_UNARY
from ir.value_helpers import assert_same, function_of, sample

B, S = DimVar("B"), DimVar("S")
F32, F16, BF16, F64 = DType.float32, DType.float16, DType.bfloat16, DType.float64
I8, I32, I64, U8, BOOL = DType.int8, DType.int32, DType.int64, DType.uint8, DType.bool


def run(build: Callable[..., Expr], *operands: object, infer: bool = True) -> tuple[torch.Tensor, Expr]:
    """Evaluate ``build`` applied to one parameter per tensor operand (``function_of``); when
    ``infer``, also check that the result has the inferred type."""
    fn, inputs, types = function_of(build, operands)
    body = fn.body
    if infer:
        infer_types(fn)
    out = evaluate(fn, *inputs)
    assert isinstance(out, torch.Tensor)
    if infer:
        t = body.checked_type
        assert isinstance(t, TensorType)
        bindings = {d.name: n for t_, x in zip(types, inputs) for d, n in zip(t_.shape, x.shape) if isinstance(d, DimVar)}
        assert (out.dtype, tuple(out.shape)) == (t.dtype.torch, tuple(resolve_dim(d, bindings) for d in t.shape))
    return out, body


# -- value rule and type rule agree, for every op -----------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[..., Expr]
    operands: tuple[object, ...]
    reference: Callable[..., torch.Tensor] | None = None


# the torch function of each binary op (the reference tables are shared with the type-rule tests)
BINARY_TORCH: dict[str, Callable[..., torch.Tensor]] = {name: fn for name, (fn, _) in TORCH_BINARY.items()}
BINARY_DTYPES = [(F32, F32), (F16, F16), (BF16, BF16), (F64, F32), (I32, I32), (I64, I8), (U8, I8), (BOOL, I32), (I32, F16), (BOOL, BOOL)]
UNARY_DTYPES = [F32, F16, BF16, F64, I32, I64, U8, BOOL]
SYM = TensorType((B, 3), F32)


def _cases() -> list[Case]:
    cases: list[Case] = []
    for name, fn in BINARY_TORCH.items():
        for da, db in BINARY_DTYPES:
            if name in ("sub", "pow") and BOOL in (da, db):
                continue
            hi = 3 if name == "pow" else 5
            a, b = sample((2, 3), da, 1, low=0 if name == "pow" else -4, high=hi), sample((3,), db, 2, low=0, high=hi)
            cases.append(Case(name, getattr(ops, name), (a, b), fn))
        cases.append(Case(name, getattr(ops, name), ((SYM, sample((4, 3), F32)), sample((), F16)), fn))
    for name, fn in TORCH_UNARY.items():
        for dt in UNARY_DTYPES:
            if dt is BOOL and name in ("neg", "abs", "relu") or not dt.is_floating and name in ("silu", "gelu"):
                continue  # torch rejects these; the type rule tests cover the refusal
            cases.append(Case(name, getattr(ops, name), (sample((2, 3), dt, 3),), fn))
    c = torch.tensor([True, False, True])
    cases += [
        Case("cast", lambda x: ops.cast(x, dtype=I8), (sample((5,), F32),), lambda x: x.to(torch.int8)),
        Case("cast", lambda x: ops.cast(x, dtype=BOOL), (sample((5,), BF16),), lambda x: x.to(torch.bool)),
        Case("cast", lambda x: ops.cast(x, dtype=F16), ((SYM, sample((2, 3), F32)),), lambda x: x.to(torch.float16)),
        Case("where", ops.where, (c, sample((3,), F16), sample((), F32)), torch.where),
        Case("where", ops.where, (c, sample((2, 3), I32), sample((3,), U8)), torch.where),
        Case("matmul", ops.matmul, (sample((2, 3), F32), sample((3, 4), F32)), torch.matmul),
        Case("matmul", ops.matmul, (sample((5, 1, 2, 3), I64), sample((4, 3, 2), I64)), torch.matmul),
        Case("matmul", ops.matmul, (sample((3,), F64), sample((3,), F64)), torch.matmul),
        Case("matmul", ops.matmul, ((TensorType((B, 3), F32), sample((4, 3), F32)), sample((3,), F32)), torch.matmul),
        Case("reduce", lambda x: ops.reduce(x, kind="sum", axes=(0, -1)), (sample((2, 3, 4), I32),), lambda x: x.sum((0, 2))),
        Case("reduce", lambda x: ops.reduce(x, kind="mean", keepdims=True), (sample((2, 3), BF16),), lambda x: x.mean((0, 1), keepdim=True)),
        Case("reduce", lambda x: ops.reduce(x, kind="max", axes=(1,)), ((SYM, sample((5, 3), F32)),), lambda x: x.amax(1)),
        Case("reduce", lambda x: ops.reduce(x, kind="min", axes=(0,)), (sample((4, 3), U8),), lambda x: x.amin(0)),
        Case("reduce", lambda x: ops.reduce(x, kind="prod", axes=(1, 0)), (sample((2, 3), I8),), lambda x: x.prod(1).prod(0)),
        Case("reduce", lambda x: ops.reduce(x, kind="sum"), (sample((2, 3), BOOL),), lambda x: x.sum()),
        Case("argmax", lambda x: ops.argmax(x, axis=0, keepdims=True), (sample((4, 3), F16),), lambda x: x.argmax(0, keepdim=True)),
        Case("argmax", ops.argmax, (sample((4, 3), I32),), lambda x: x.argmax(-1)),
        Case("softmax", lambda x: ops.softmax(x, axis=0), (sample((4, 3), F32),), lambda x: torch.softmax(x, 0)),
        Case("softmax", ops.softmax, (sample((4, 3), BF16),), lambda x: torch.softmax(x, -1)),
        Case("rms_norm", ops.rms_norm, (sample((4, 8), F32), sample((8,), F32, 5)), lambda x, w: F.rms_norm(x, [8], w)),
        Case("rms_norm", ops.rms_norm, ((TensorType((B, 8), F16), sample((2, 8), F16)),), lambda x: F.rms_norm(x, [8])),
        Case("layer_norm", lambda x, w, b: ops.layer_norm(x, w, b, axes=(-2, -1)),
             (sample((2, 3, 4), F32), sample((3, 4), F32, 1), sample((3, 4), F32, 2)),
             lambda x, w, b: F.layer_norm(x, [3, 4], w, b)),
        Case("layer_norm", ops.layer_norm, (sample((2, 4), BF16),), lambda x: F.layer_norm(x, [4])),
        Case("reshape", lambda x: ops.reshape(x, shape=(3, 2)), (sample((2, 3), I32),), lambda x: x.reshape(3, 2)),
        Case("reshape", lambda x: ops.reshape(x, shape=(B * 3,)), ((SYM, sample((2, 3), F32)),), lambda x: x.reshape(-1)),
        Case("transpose", lambda x: ops.transpose(x, perm=(2, 0, 1)), (sample((2, 3, 4), BF16),), lambda x: x.permute(2, 0, 1)),
        Case("broadcast_to", lambda x: ops.broadcast_to(x, shape=(2, B, 3)), ((TensorType((B, 1), F32), sample((4, 1), F32)),),
             lambda x: x.broadcast_to(2, 4, 3)),
        Case("concat", lambda a, b: ops.concat(a, b, axis=1), (sample((2, 3), I32), sample((2, 2), F16)), lambda a, b: torch.cat([a, b], 1)),
        Case("concat", lambda a, b: ops.concat(a, b), ((SYM, sample((2, 3), F32)), sample((1, 3), F32)), lambda a, b: torch.cat([a, b])),
        Case("slice", lambda x: ops.slice(x, (1, 0), sizes=(2, 2), strides=(1, 2)), (sample((4, 4), F32),), lambda x: x[1:3, 0:3:2]),
        Case("slice", lambda x: ops.slice(x, (1, 0), sizes=(2, 3)), ((TensorType((B, 3), I8), sample((3, 3), I8)),), lambda x: x[1:3, 0:3]),
        Case("take", ops.take, (sample((5, 3), BF16), torch.tensor([[4, 0], [2, 2]])), lambda x, i: x[i]),
        Case("take", lambda x, i: ops.take(x, i, axis=-1), (sample((2, 3), F32), torch.tensor([2, 0], dtype=torch.int32)),
             lambda x, i: x[:, i.long()]),
        Case("full", lambda: ops.full(shape=(2, 3), value=1.5, dtype=I32), (), lambda: torch.full((2, 3), 1.5, dtype=torch.int32)),
        Case("full", lambda: ops.full(shape=(2,), value=0.1, dtype=BF16), (), lambda: torch.full((2,), 0.1, dtype=torch.bfloat16)),
        Case("arange", lambda: ops.arange(extent=5, dtype=F16), (), lambda: torch.arange(5, dtype=torch.float16)),
        Case("arange", lambda x: ops.add(x, ops.arange(extent=B)), ((TensorType((B,), I64), sample((4,), I64)),),
             lambda x: x + torch.arange(4)),
        Case("reshard", lambda x: ops.reshard(x, layout=Layout((2, 3))), (sample((6,), F32),), lambda x: x),
        Case("reshard", lambda x: ops.reshard(x, layout=ShardLayout(Mesh((2,), ("tp",)), (Split(0),))), (sample((6,), F32),), lambda x: x),
        Case("local", ops.local, ((TensorType((4,), F32, ShardLayout(Mesh((2,), ("dp",)), (Replicate(),))), sample((4,), F32)),),
             lambda x: x),
    ]
    for name in ("dim_add", "dim_sub", "dim_mul", "dim_floordiv", "dim_mod", "dim_min", "dim_max"):
        cases.append(Case(name, getattr(ops, name), (torch.tensor(-7), torch.tensor(3, dtype=torch.int32)), None))
    return cases


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c.name}-{i}" for i, c in enumerate(CASES)])
def test_value_rule_agrees_with_type_rule_and_torch(case: Case) -> None:
    out, _ = run(case.build, *case.operands)
    if case.reference is not None:
        tensors = [op[1] if isinstance(op, tuple) else op for op in case.operands if isinstance(op, (tuple, torch.Tensor))]
        assert_same(out, case.reference(*tensors))


@pytest.mark.parametrize("name", sorted(BINARY_TORCH))
def test_binary_value_rules_over_dtype_pairs(name: str) -> None:
    fn = BINARY_TORCH[name]
    for da, db in product([F32, F16, BF16, I32, I64, U8, BOOL], repeat=2):
        a, b = sample((3, 4), da, 1, low=0 if name == "pow" else -4, high=3), sample((4,), db, 2, low=0, high=3)
        try:
            want = fn(a, b)
        except RuntimeError:
            continue
        out, _ = run(getattr(ops, name), a, b)
        assert_same(out, want)


# -- weak Python scalars: torch's own scalar path --------------------------------------------------------


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "eq", "lt", "ge"])
@pytest.mark.parametrize("scalar", [2, 0.1, -3.7], ids=["int", "float", "negfloat"])
@pytest.mark.parametrize("dtype", [F16, BF16, F32, I32, U8], ids=str)
def test_weak_scalar_right_is_torchs_python_scalar(name: str, scalar: float, dtype: DType) -> None:
    x = sample((6,), dtype, 4, low=1)
    try:
        want = BINARY_TORCH[name](x, scalar)
    except RuntimeError:
        return
    out, _ = run(getattr(ops, name), x, scalar)
    assert_same(out, want)


@pytest.mark.parametrize(
    ("build", "reference"),
    [
        (lambda x: ops.add(0.1, x), lambda x: 0.1 + x),
        (lambda x: ops.sub(0.1, x), lambda x: 0.1 - x),
        (lambda x: ops.mul(3, x), lambda x: 3 * x),
        (lambda x: ops.pow(2, x), lambda x: 2**x),
        (lambda x: ops.lt(0.5, x), lambda x: 0.5 < x),
        (lambda x: ops.maximum(x, 0.25), lambda x: torch.maximum(x, torch.tensor(0.25, dtype=torch.result_type(x, 0.25)))),
        (lambda x: ops.minimum(1, x), lambda x: torch.minimum(torch.tensor(1, dtype=torch.result_type(x, 1)), x)),
        (lambda x: ops.logical_and(x, True), lambda x: torch.logical_and(x, torch.tensor(True))),
    ],
)
@pytest.mark.parametrize("dtype", [F16, F32, I32], ids=str)
def test_weak_scalar_left_and_non_scalar_ops(
    build: Callable[[Expr], Expr], reference: Callable[[torch.Tensor], torch.Tensor], dtype: DType
) -> None:
    x = sample((6,), dtype, 5, low=0)
    out, _ = run(build, x)
    assert_same(out, reference(x))


def test_weak_scalar_examples_from_core_ir() -> None:
    x16 = sample((4,), F16)
    assert run(lambda x: ops.add(x, 0.5), x16)[0].dtype == torch.float16
    assert run(lambda x: ops.add(x, 0.5), sample((4,), I32))[0].dtype == torch.float32
    assert run(lambda x: ops.add(x, 2.0), sample((), F16))[0].dtype == torch.float16
    out, _ = run(lambda: ops.add(1, 0.5))
    assert_same(out, torch.tensor(1.5))
    out, _ = run(lambda: ops.neg(3))
    assert_same(out, torch.tensor(-3))


# -- hir.md decisions -------------------------------------------------------------------------------------


def test_reduce_axes_none_reduces_every_axis() -> None:
    x = sample((2, 3, 4), F32)
    for kind, ref in [("sum", x.sum()), ("mean", x.mean()), ("max", x.amax()), ("min", x.amin()), ("prod", x.prod())]:
        out, _ = run(lambda t: ops.reduce(t, kind=kind), x)  # type: ignore[arg-type]
        assert_same(out, ref)
    out, _ = run(lambda t: ops.reduce(t, kind="sum", keepdims=True), x)
    assert_same(out, x.sum((0, 1, 2), keepdim=True))


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("dtype", [I32, F16, BOOL], ids=str)
def test_reduce_empty_axes_is_the_identity(kind: str, dtype: DType) -> None:
    x = sample((2, 3), dtype)
    out, _ = run(lambda t: ops.reduce(t, kind=kind, axes=()), x)  # type: ignore[arg-type]
    assert_same(out, x)
    assert torch.sum(x, dim=()).shape == ()  # what torch would have done instead


def test_prod_over_several_axes_is_one_reduction_over_them_flattened() -> None:
    # torch.prod takes one axis; over several it is one product over the reduced axes, moved last
    x = sample((2, 3, 4), F32)
    out, _ = run(lambda t: ops.reduce(t, kind="prod", axes=(2, 0)), x)
    assert_same(out, x.permute(1, 0, 2).reshape(3, 8).prod(-1))
    out, _ = run(lambda t: ops.reduce(t, kind="prod", axes=(0, 2), keepdims=True), x)
    assert_same(out, x.permute(1, 0, 2).reshape(3, 8).prod(-1).reshape(1, 3, 1))
    assert_same(run(lambda t: ops.reduce(t, kind="prod"), x)[0], torch.prod(x))
    empty = torch.zeros(2, 0, 4)
    assert_same(run(lambda t: ops.reduce(t, kind="prod", axes=(0, 2)), empty)[0], torch.ones(0))
    assert_same(run(lambda t: ops.reduce(t, kind="prod", axes=(0, 2), keepdims=True), empty)[0], torch.ones(1, 0, 1))


def test_reduce_over_a_zero_length_axis() -> None:
    x = torch.zeros(0, 3)
    assert_same(run(lambda t: ops.reduce(t, kind="sum", axes=(0,)), x)[0], torch.zeros(3))
    assert_same(run(lambda t: ops.reduce(t, kind="prod", axes=(0,)), x)[0], torch.ones(3))
    assert_same(run(lambda t: ops.reduce(t, kind="mean", axes=(0,)), x)[0], torch.full((3,), float("nan")))
    assert_same(run(lambda t: ops.reduce(t, kind="sum", axes=(0,)), torch.zeros(0, 2, dtype=torch.int32))[0], torch.zeros(2, dtype=torch.int64))
    assert_same(run(lambda t: ops.reduce(t, kind="mean"), torch.zeros(0))[0], torch.tensor(float("nan")))


@pytest.mark.parametrize("kind", ["max", "min"])
def test_max_min_over_a_runtime_zero_length_axis_is_an_eval_error(kind: str) -> None:
    # B = 0 only at run time, so type inference passes and evaluation must refuse
    x = Var("x", TensorType((B, 3), F32))
    call = ops.reduce(x, kind=kind, axes=(0,))  # type: ignore[arg-type]
    fn = infer_types(Function("f", (x,), call))
    prefix = re.escape(describe_expr(call))
    with pytest.raises(EvalError, match=rf"^{prefix}: reduce {kind} over axis 0 of length 0 has no value"):
        evaluate(fn, torch.zeros(0, 3))
    assert_same(evaluate(fn, torch.ones(2, 3)), torch.ones(3))  # type: ignore[arg-type]


def test_argmax_returns_the_first_maximal_index() -> None:
    x = torch.tensor([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 5.0], [0.0, -1.0, 5.0, 0.0]])
    assert run(ops.argmax, x)[0].tolist() == [1, 0, 2]
    assert run(lambda t: ops.argmax(t, axis=0, keepdims=True), x)[0].tolist() == [[1, 1, 1, 1]]
    ties = torch.tensor([[2.0, 7.0], [2.0, 7.0], [1.0, 7.0]])
    assert run(lambda t: ops.argmax(t, axis=0), ties)[0].tolist() == [0, 0]
    ints = torch.tensor([2, 7, 7, 1, 7], dtype=torch.int8)
    assert run(ops.argmax, ints)[0].item() == 1
    with pytest.raises(EvalError, match=r"argmax over axis 0 of length 0 has no value"):
        run(ops.argmax, (TensorType((B,), F32), torch.zeros(0)))


def test_div_is_true_division() -> None:
    a, b = torch.tensor([7, -7, 1, 0], dtype=torch.int32), torch.tensor([2, 2, 3, 5], dtype=torch.int32)
    out, _ = run(ops.div, a, b)
    assert_same(out, torch.tensor([3.5, -3.5, 1 / 3, 0.0]))
    out, _ = run(lambda x: ops.div(x, 2), torch.tensor([True, False]))
    assert_same(out, torch.tensor([0.5, 0.0]))


def test_cast_float_to_int_truncates_toward_zero() -> None:
    x = torch.tensor([-1.7, 1.7, -0.5, 2.9, -2.0])
    assert run(lambda t: ops.cast(t, dtype=I32), x)[0].tolist() == [-1, 1, 0, 2, -2]
    assert run(lambda t: ops.cast(t, dtype=BOOL), torch.tensor([0.0, -0.1, 2.0]))[0].tolist() == [False, True, True]


@pytest.mark.parametrize(("index", "bad"), [([0, 5], 5), ([-1, 2], -1), ([[1], [7]], 7)])
def test_take_out_of_range_or_negative_is_an_eval_error(index: list[object], bad: int) -> None:
    x = sample((5, 2), F32)
    idx = torch.tensor(index)
    with pytest.raises(EvalError, match=rf"^take\(x0, x1, axis=0\): take: index {bad} is out of range for axis 0 of length 5 \(expected 0..4; indices never wrap around\)"):
        run(ops.take, x, idx)


def test_take_with_empty_indices() -> None:
    out, _ = run(ops.take, sample((5, 2), F32), torch.zeros(0, dtype=torch.int64))
    assert out.shape == (0, 2)


def _window(x_type: TensorType, sizes: tuple[object, ...], strides: tuple[object, ...] | None = None) -> tuple[Function, Expr]:
    x, k = Var("x", x_type), Var("k", TensorType((), I64))
    call = ops.slice(x, (0, k), sizes=sizes, strides=strides)  # type: ignore[arg-type]
    return infer_types(Function("f", (x, k), call)), call


@pytest.mark.parametrize(
    ("start", "message"),
    [
        (3, r"slice \(C2\): window \[3, 5\) with stride 1 runs past axis 1 of length 4"),
        (-1, r"slice \(C2\): start -1 on axis 1 is negative \(starts never count from the end\)"),
    ],
)
def test_slice_window_past_the_axis_or_negative_start_is_an_eval_error(start: int, message: str) -> None:
    fn, call = _window(TensorType((2, 4), F32), (2, 2))
    x = sample((2, 4), F32)
    assert_same(evaluate(fn, x, torch.tensor(2)), x[:, 2:4])  # type: ignore[arg-type]
    with pytest.raises(EvalError, match=r"^slice\(x, <Tuple>, sizes=\(2, 2\), strides=None\): " + message):
        evaluate(fn, x, torch.tensor(start))


def test_slice_strided_window_and_symbolic_size() -> None:
    fn, _ = _window(TensorType((2, S), F32), (2, S // 2), (1, 2))
    x = sample((2, 6), F32)
    assert_same(evaluate(fn, x, torch.tensor(0)), x[:, 0:5:2])  # type: ignore[arg-type]
    five = sample((2, 5), F32)
    assert_same(evaluate(fn, five, torch.tensor(2)), five[:, 2:5:2])  # type: ignore[arg-type]
    with pytest.raises(EvalError, match=r"window \[3, 6\) with stride 2 runs past axis 1 of length 5"):
        evaluate(fn, five, torch.tensor(3))


def test_slice_start_computed_by_dim_arithmetic() -> None:
    x, k = Var("x", TensorType((8,), F32)), Var("k", TensorType((), I64))
    call = ops.slice(x, (ops.dim_mul(k, 2),), sizes=(2,))
    fn = infer_types(Function("f", (x, k), call))
    data = sample((8,), F32)
    assert_same(evaluate(fn, data, torch.tensor(3)), data[6:8])  # type: ignore[arg-type]
    with pytest.raises(EvalError, match=r"window \[8, 10\) with stride 1 runs past axis 0 of length 8"):
        evaluate(fn, data, torch.tensor(4))


def test_reshape_with_a_wrong_runtime_element_count_is_an_eval_error() -> None:
    x = Var("x", TensorType((B,), F32))
    call = ops.reshape(x, shape=(2, 3))
    fn = infer_types(Function("f", (x,), call))  # B is unknown: inference cannot tell
    assert_same(evaluate(fn, torch.arange(6.0)), torch.arange(6.0).reshape(2, 3))  # type: ignore[arg-type]
    with pytest.raises(
        EvalError,
        match=r"^reshape\(x, shape=\(2, 3\)\): reshape cannot change the element count: input \[5\] has 5 elements, target shape \[2, 3\] has 6$",
    ):
        evaluate(fn, torch.arange(5.0))


def test_reshape_to_a_negative_resolved_size_is_an_eval_error() -> None:
    x = Var("x", TensorType((B,), F32))
    fn = Function("f", (x,), ops.reshape(x, shape=(B - 3,)))
    with pytest.raises(EvalError, match=r"size B - 3 resolves to -1, which is negative"):
        evaluate(fn, torch.zeros(2))


def test_gelu_tanh_approximation() -> None:
    x = sample((64,), F32)
    exact, _ = run(ops.gelu, x)
    approx, _ = run(lambda t: ops.gelu(t, approximate="tanh"), x)
    assert_same(exact, F.gelu(x))
    assert_same(approx, F.gelu(x, approximate="tanh"))
    assert not torch.equal(exact, approx)


@pytest.mark.parametrize(("dtype", "eps_dtype"), [(F32, F32), (F64, F64), (F16, F32), (BF16, F32)], ids=str)
def test_rms_norm_default_eps_is_torchs_machine_epsilon(dtype: DType, eps_dtype: DType) -> None:
    # torch's default is the machine epsilon of the dtype it computes in: f32 for f16/bf16 inputs
    x = (torch.ones(2, 4, dtype=torch.float64) * 1e-3).to(dtype.torch)
    out, _ = run(ops.rms_norm, x)
    assert_same(out, F.rms_norm(x, [4]))
    eps = torch.finfo(eps_dtype.torch).eps
    x64 = x.double()
    manual = x64 / torch.sqrt((x64 * x64).mean(-1, keepdim=True) + eps)
    torch.testing.assert_close(out.double(), manual, rtol=2e-2, atol=0)
    other, _ = run(lambda t: ops.rms_norm(t, eps=1e-2), x)
    assert not torch.equal(out, other)


def test_layer_norm_with_weight_and_bias_over_trailing_two_axes() -> None:
    x, w, b = sample((2, 3, 4), F32), sample((3, 4), F32, 1), sample((3, 4), F32, 2)
    out, _ = run(lambda *t: ops.layer_norm(*t, axes=(1, 2), eps=1e-3), x, w, b)
    assert_same(out, F.layer_norm(x, [3, 4], w, b, 1e-3))
    mean = x.mean((1, 2), keepdim=True)
    var = x.var((1, 2), unbiased=False, keepdim=True)  # biased variance
    torch.testing.assert_close(out, (x - mean) / torch.sqrt(var + 1e-3) * w + b, rtol=1e-5, atol=1e-5)


def test_concat_promotes_its_operands() -> None:
    a, b, c = torch.tensor([1, 2], dtype=torch.int32), torch.tensor([0.5], dtype=torch.float16), torch.tensor([True])
    out, _ = run(lambda *t: ops.concat(*t), a, b, c)
    assert_same(out, torch.cat([a, b, c]))
    assert out.dtype == torch.float16


def test_where_with_scalar_branches() -> None:
    c = torch.tensor([True, False, True])
    assert_same(run(lambda t: ops.where(t, 1.0, 0), c)[0], torch.where(c, 1.0, 0))
    assert_same(run(lambda t: ops.where(t, 3, 4), c)[0], torch.tensor([3, 4, 3]))
    x16 = sample((3,), F16)
    assert_same(run(lambda t, x: ops.where(t, x, 0.1), c, x16)[0], torch.where(c, x16, 0.1))
    assert_same(run(lambda t, x: ops.where(t, 7, x), c, sample((3,), I8))[0], torch.where(c, 7, sample((3,), I8)))


DIM_NAMES = {"add": "dim_add", "sub": "dim_sub", "mul": "dim_mul", "floordiv": "dim_floordiv", "mod": "dim_mod", "min": "dim_min", "max": "dim_max"}


@pytest.mark.parametrize("op", sorted(DIM_NAMES))
@pytest.mark.parametrize(("a", "b"), [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3), (5, 5), (-1, 7)])
def test_dim_ops_compute_what_resolve_dim_computes(op: str, a: int, b: int) -> None:
    want = resolve_dim(DimExpr(op, DimVar("a"), DimVar("b")), {"a": a, "b": b})  # type: ignore[arg-type]
    py = {"add": a + b, "sub": a - b, "mul": a * b, "floordiv": a // b, "mod": a % b, "min": min(a, b), "max": max(a, b)}[op]
    assert want == py
    va, vb = Var("a", TensorType((), I64)), Var("b", TensorType((), I32))
    call = getattr(ops, DIM_NAMES[op])(va, vb)
    fn = infer_types(Function("f", (va, vb), call))
    out = evaluate(fn, torch.tensor(a), torch.tensor(b, dtype=torch.int32))
    assert_same(out, torch.tensor(py))
    # weak Python operands give the same answer
    assert_same(evaluate(Function("g", (), getattr(ops, DIM_NAMES[op])(a, b))), torch.tensor(py))  # type: ignore[arg-type]


@pytest.mark.parametrize("op", ["floordiv", "mod"])
def test_dim_division_by_zero_is_an_eval_error(op: str) -> None:
    k = Var("k", TensorType((), I64))
    call = getattr(ops, DIM_NAMES[op])(7, k)
    fn = infer_types(Function("f", (k,), call))
    symbol = "//" if op == "floordiv" else "%"
    with pytest.raises(EvalError, match=rf"^{DIM_NAMES[op]}\(7, k\): {DIM_NAMES[op]}: dim arithmetic: {op} by zero \(7 {symbol} 0\)"):
        evaluate(fn, torch.tensor(0))


def test_value_rules_do_not_need_type_inference() -> None:
    # a handler MUST NOT depend on type inference having run (evaluator spec §3)
    x = sample((2, 3), F16)
    out, _ = run(lambda t: ops.reduce(ops.mul(t, 2.0), kind="sum", axes=(1,)), x, infer=False)
    assert_same(out, (x * 2.0).sum(1))


def test_local_of_a_split_value_is_refused_naming_the_section() -> None:
    t = TensorType((4,), F32, ShardLayout(Mesh((2,), ("tp",)), (Split(0),)))
    with pytest.raises(EvalError, match=r"evaluator models one mesh participant \(evaluator spec §6"):
        run(ops.local, (t, torch.zeros(4)), infer=False)


def test_pow_of_integers_to_a_negative_scalar_power_is_an_eval_error() -> None:
    with pytest.raises(EvalError, match=r"^pow\(x0, -1\): RuntimeError: Integers to negative integer powers are not allowed"):
        run(lambda x: ops.pow(x, -1), torch.tensor([2, 3]))
    # with a tensor exponent torch computes (and so does the value rule)
    a, b = torch.tensor([2, 1]), torch.tensor([1, -1])
    assert_same(run(ops.pow, a, b)[0], torch.pow(a, b))
