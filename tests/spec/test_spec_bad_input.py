"""Bad input never leaks a raw torch or Python exception: each documented kind of bad
program or input ends in a ``TfexecError`` (an ``EvalError`` from evaluation) whose message
starts with ``describe_expr`` of the node and says what is wrong."""

from collections.abc import Callable

import pytest
import torch

from tfexec import (
    Constant,
    DimVar,
    EvalError,
    Expr,
    Function,
    GridRegionExpr,
    TfexecError,
    Tuple,
    TupleGetItem,
    Var,
    describe_expr,
    evaluate,
    f32,
    i64,
    ops,
)

N = DimVar("N")


def _fails(fn: Function, node: Expr, *inputs: object) -> str:
    """Evaluate ``fn``, expecting an ``EvalError`` about ``node``; return its message."""
    with pytest.raises(TfexecError) as info:
        evaluate(fn, *inputs)
    assert isinstance(info.value, EvalError)
    message = str(info.value)
    assert message.startswith(describe_expr(node) + ": "), message
    return message


@pytest.mark.spec("s4.var-binding", "s3.other-failure-contracts")
def test_bad_input_unbound_var() -> None:
    x, ghost = Var("x", f32[2]), Var("ghost", f32[2])
    msg = _fails(Function("f", (x,), ops.mul(x, ghost)), ghost, torch.ones(2))
    assert "variable ghost is not bound here" in msg


@pytest.mark.spec("s1.tuple-elements")
def test_bad_input_tuple_get_item_out_of_range() -> None:
    x = Var("x", f32[2])
    item = TupleGetItem(Tuple((x, x)), 2)
    msg = _fails(Function("f", (x,), item), item, torch.ones(2))
    assert "index 2 is out of range for a 2-tuple" in msg


@pytest.mark.spec("s1.tuple-elements")
def test_bad_input_tuple_get_item_of_a_tensor() -> None:
    x = Var("x", f32[2])
    item = TupleGetItem(x, 0)
    msg = _fails(Function("f", (x,), item), item, torch.ones(2))
    assert "projection [0] of a tensor, not a tuple" in msg


@pytest.mark.spec("s3.dispatch-failure-evalerror")
def test_bad_input_reshape_wrong_element_count() -> None:
    x = Var("x", f32[N, 3])
    call = ops.reshape(x, shape=(N, 4))
    msg = _fails(Function("f", (x,), call), call, torch.ones(2, 3))
    assert "element count" in msg and "[2, 3]" in msg and "[2, 4]" in msg


@pytest.mark.spec("s3.dispatch-failure-evalerror")
def test_bad_input_reduce_over_missing_axis() -> None:
    x = Var("x", f32[2, 3])
    call = ops.reduce(x, kind="sum", axes=(2,))
    msg = _fails(Function("f", (x,), call), call, torch.ones(2, 3))
    assert "axis 2" in msg and "rank-2" in msg


@pytest.mark.spec("s4.dim-arith-operand", "s3.dispatch-failure-evalerror")
def test_bad_input_division_by_zero_in_dim_arithmetic_operand() -> None:
    a, b = Var("a", i64[()]), Var("b", i64[()])
    call = ops.dim_floordiv(a, b)
    msg = _fails(Function("f", (a, b), call), call, 7, 0)
    assert "floordiv by zero" in msg


@pytest.mark.spec("s4.dim-bindings")
def test_bad_input_division_by_zero_in_shape_dim() -> None:
    x, z = Var("x", f32[N]), Var("z", f32[N - N])
    call = ops.full(shape=(N // (N - N),), value=0.0, dtype=f32)
    msg = _fails(Function("f", (x, z), call), call, torch.ones(3), torch.ones(0))
    assert "by zero" in msg


@pytest.mark.spec("s5.loop-over-domain")
def test_bad_input_division_by_zero_in_loop_extent() -> None:
    x, z = Var("x", f32[N]), Var("z", f32[N - N])
    k = Var("k", i64[()])
    loop = GridRegionExpr(N // (N - N), k, (), (), k, ())
    msg = _fails(Function("f", (x, z), loop), loop, torch.ones(3), torch.ones(0))
    assert "by zero" in msg


@pytest.mark.spec("s2.dimvar-bound-from-input")
def test_bad_input_division_by_zero_in_parameter_type() -> None:
    x, y = Var("x", f32[N]), Var("y", f32[N // (N - N)])
    fn = Function("f", (x, y), x)
    with pytest.raises(EvalError, match=r"^f: parameter y \(input 1\): axis 0 size N // \(N - N\): .*by zero"):
        evaluate(fn, torch.ones(3), torch.ones(1))


@pytest.mark.spec("s3.dispatch-failure-evalerror")
def test_bad_input_matmul_shape_mismatch() -> None:
    a, b = Var("a", f32[2, 3]), Var("b", f32[2, 3])
    call = ops.matmul(a, b)
    _fails(Function("f", (a, b), call), call, torch.ones(2, 3), torch.ones(2, 3))


@pytest.mark.spec("s3.dispatch-failure-evalerror")
def test_bad_input_take_index_out_of_range() -> None:
    x, idx = Var("x", f32[4]), Var("idx", i64[2])
    call = ops.take(x, idx)
    msg = _fails(Function("f", (x, idx), call), call, torch.ones(4), torch.tensor([1, 4]))
    assert "index 4 is out of range" in msg


@pytest.mark.spec("s3.dispatch-failure-evalerror")
def test_bad_input_index_read_on_meta_device() -> None:
    # core-ir §2: reading an index on a device without data is an EvalError saying so
    x, s = Var("x", f32[4]), Var("s", i64[()])
    call = ops.slice(x, (s,), sizes=(2,))
    msg = _fails(Function("f", (x, s), call), call, torch.ones(4, device="meta"), torch.tensor(1, device="meta"))
    assert "meta" in msg


_BUILDERS: list[tuple[str, Callable[[Var], Expr]]] = [
    ("broadcast", lambda x: ops.broadcast_to(x, shape=(3, 2))),
    ("transpose", lambda x: ops.transpose(x, perm=(0, 0))),
    ("concat-axis", lambda x: ops.concat(x, x, axis=3)),
    ("softmax-axis", lambda x: ops.softmax(x, axis=5)),
    ("add-shapes", lambda x: ops.add(x, Constant(torch.ones(4), f32[4]))),
]


@pytest.mark.spec("s3.dispatch-failure-evalerror")
@pytest.mark.parametrize("build", [b for _, b in _BUILDERS], ids=[n for n, _ in _BUILDERS])
def test_bad_input_op_misuse_is_evalerror_never_raw(build: Callable[[Var], Expr]) -> None:
    x = Var("x", f32[2, 3])
    call = build(x)
    _fails(Function("f", (x,), call), call, torch.ones(2, 3))
