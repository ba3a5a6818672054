"""The builders of ``tfexec.ops`` (hir.md §ops, core-ir §2): one per catalogue op, named
as the op; Python scalars become weak constants; wrong operand kinds and malformed
attributes are refused at construction, naming the operand or attribute."""

import inspect
from collections.abc import Callable

import pytest
import torch

from tfexec import (
    Call,
    Constant,
    DType,
    Function,
    IRConstructionError,
    Layout,
    Span,
    TensorType,
    Tuple,
    Var,
    f16,
    f32,
    i64,
    ops,
)
from tfexec.ir.ops.base import Op
from tfexec.ir.ops.catalogue import ALL_OPS

X = Var("x", f32[2, 3])
Y = Var("y", f32[3, 2])
K = Var("k", i64[()])


def sample_call(name: str) -> Call:
    """A call of builder ``name`` with operands of the right kinds (types need not check)."""
    builder = getattr(ops, name)
    special: dict[str, Callable[[], Call]] = {
        "cast": lambda: builder(X, dtype=f16),
        "where": lambda: builder(X, X, Y),
        "reduce": lambda: builder(X, kind="sum"),
        "rms_norm": lambda: builder(X, Y),
        "layer_norm": lambda: builder(X, Y, Y),
        "reshape": lambda: builder(X, shape=(6,)),
        "transpose": lambda: builder(X, perm=(1, 0)),
        "broadcast_to": lambda: builder(X, shape=(4, 2, 3)),
        "concat": lambda: builder(X, X, Y, axis=1),
        "slice": lambda: builder(X, (0, K), sizes=(1, 1)),
        "full": lambda: builder(shape=(2,), value=0.0, dtype=f32),
        "arange": lambda: builder(extent=4),
        "reshard": lambda: builder(X, layout=Layout((6,))),
    }
    if name in special:
        return special[name]()
    signature = inspect.signature(builder).parameters.values()
    params = [p for p in signature if p.kind is p.POSITIONAL_OR_KEYWORD]
    required = {p.name: REQUIRED_ATTRIBUTES[p.name] for p in signature if p.kind is p.KEYWORD_ONLY and p.default is p.empty}
    return builder(*([X] * len(params)), **required)  # type: ignore[no-any-return]


REQUIRED_ATTRIBUTES: dict[str, object] = {
    "axis": 0, "axes": (0,), "k": 1, "kernel": (2,), "output_size": (1,), "size": (4,), "pads": (1, 1),
    "shifts": (1,), "groups": 1,
}
"""A value for each attribute a catalogue v2 builder requires (by attribute name)."""


# -- one builder per op ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ALL_OPS, ids=lambda c: c.name)
def test_every_catalogue_op_has_a_builder_named_as_the_op(cls: type[Op]) -> None:
    builder = getattr(ops, cls.name, None)
    assert callable(builder), f"tfexec.ops has no builder {cls.name}"
    call = sample_call(cls.name)
    assert isinstance(call, Call) and type(call.target) is cls
    assert call.checked_type is None  # builders never run type inference
    assert getattr(ops, cls.__name__) is cls  # the op class is importable from tfexec.ops


def test_ops_all_lists_builders_helpers_and_op_classes() -> None:
    exported = set(ops.__all__)
    assert {"apply", "call", "as_expr"} <= exported
    assert {cls.name for cls in ALL_OPS} <= exported
    assert {cls.__name__ for cls in ALL_OPS} <= exported
    assert len(ops.__all__) == len(exported), "duplicates in tfexec.ops.__all__"
    missing = [name for name in ops.__all__ if not hasattr(ops, name)]
    assert not missing


def test_each_builder_lives_beside_its_op_class() -> None:
    """``tfexec.ops`` re-exports each family module: the builder of an op is the one its class's
    module defines (a star import of a later family cannot shadow it), and the helpers are the
    builders' own (``ops.Operand`` is what a builder takes, not the type rules' ``Operand``)."""
    import sys

    from tfexec.ir import operands

    for cls in ALL_OPS:
        family = sys.modules[cls.__module__]
        assert getattr(ops, cls.name) is getattr(family, cls.name), cls.name
    assert (ops.Operand, ops.apply, ops.as_expr, ops.Op) == (operands.Operand, operands.apply, operands.as_expr, Op)


def test_builders_attach_the_span() -> None:
    span = Span("m.tf.py", 3, 5, "h", "add(x, 1)")
    assert ops.add(X, 1, span=span).span is span
    assert ops.slice(X, (0, 0), sizes=(1, 1), span=span).span is span
    assert ops.full(shape=(), value=1, dtype=i64, span=span).span is span


def test_builders_build_without_checking_types() -> None:
    call = ops.add(X, Y)  # f32[2, 3] + f32[3, 2] does not broadcast: only infer_types says so
    assert call.args == (X, Y)
    assert ops.matmul(X, X).args == (X, X)


# -- Python scalars become weak constants ----------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "dtype"),
    [(True, DType.bool), (False, DType.bool), (0, DType.int64), (-7, DType.int64), (0.5, DType.float32), (float("inf"), DType.float32)],
)
def test_python_scalars_become_weak_rank0_constants(value: bool | int | float, dtype: DType) -> None:
    for c in (ops.as_expr(value), ops.add(X, value).args[1], ops.add(value, X).args[0]):
        assert isinstance(c, Constant)
        assert c.weak is True
        assert c.type == TensorType((), dtype)
        assert c.value == value and type(c.value) is type(value)


def test_exprs_pass_through_and_explicit_constants_stay_strong() -> None:
    strong = Constant(2, i64[()])
    call = ops.mul(X, strong)
    assert call.args[0] is X and call.args[1] is strong and not strong.weak
    assert Constant(2, i64[()], weak=True).weak


def test_each_scalar_operand_is_its_own_node() -> None:
    a, b = ops.add(1, 1).args
    assert a is not b


# -- wrong operand kinds ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "shown"),
    [("x", r"str 'x'"), ([1, 2], r"list \[1, 2\]"), (None, r"NoneType None"), ({"a": 1}, r"dict"), (1 + 2j, r"complex")],
)
def test_bad_operands_name_the_operand_and_what_was_expected(bad: object, shown: str) -> None:
    with pytest.raises(IRConstructionError, match=rf"^add operand 1 must be an Expr or a Python bool/int/float, got {shown}"):
        ops.add(X, bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=rf"^where operand 0 must be an Expr or a Python bool/int/float, got {shown}"):
        ops.where(bad, X, X)  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=rf"^neg operand 0 must be an Expr"):
        ops.neg(bad)  # type: ignore[arg-type]


def test_a_tensor_operand_is_refused_with_a_hint() -> None:
    with pytest.raises(IRConstructionError, match=r"^matmul operand 1 must be an Expr .*got Tensor of shape \[3, 2\] and dtype torch.float32 \(wrap a tensor in tfexec.Constant"):
        ops.matmul(X, torch.ones(3, 2))  # type: ignore[arg-type]


def test_an_int_beyond_int64_is_refused() -> None:
    with pytest.raises(IRConstructionError, match=r"^mul operand 1: Python int 9223372036854775808 does not fit i64"):
        ops.mul(X, 2**63)
    assert ops.as_expr(2**63 - 1).type == i64[()]  # type: ignore[union-attr]


def test_slice_starts_and_call_arguments_are_named() -> None:
    with pytest.raises(IRConstructionError, match=r"^slice starts\[1\] must be an Expr or a Python bool/int/float, got str"):
        ops.slice(X, (0, "1"), sizes=(1, 1))  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"^slice starts must be a tuple of ints and Exprs, or a Tuple, got list"):
        ops.slice(X, [0, 0], sizes=(1, 1))  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"^slice operand 0 must be an Expr"):
        ops.slice("x", (0,), sizes=(1,))  # type: ignore[arg-type]
    starts = ops.slice(X, (0, K), sizes=(1, 1)).args[1]
    assert isinstance(starts, Tuple) and starts.fields[1] is K
    fn = Function("g", (X,), X)
    with pytest.raises(IRConstructionError, match=r"^call of g: argument 0 must be an Expr .*got str"):
        ops.call(fn, "x")  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"^call: the callee must be a Function"):
        ops.call(ops.Add(), X)  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"^apply: op must be an Op instance"):
        ops.apply(ops.Add, X, X)  # type: ignore[arg-type]


def test_layer_norm_bias_without_weight_is_refused() -> None:
    with pytest.raises(IRConstructionError, match=r"layer_norm: a bias needs a weight"):
        ops.layer_norm(X, None, Y)


# -- malformed attributes: TypeError naming the attribute --------------------------------------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: ops.reduce(X, kind="median"), r"reduce kind must be one of sum, mean, max, min, prod, got 'median'"),
        (lambda: ops.reduce(X, kind="sum", axes=[1]), r"reduce axes must be None or a tuple of ints, got \[1\]"),
        (lambda: ops.reduce(X, kind="sum", axes=(True,)), r"reduce axes must be None or a tuple of ints"),
        (lambda: ops.reduce(X, kind="sum", keepdims=1), r"reduce keepdims must be a bool, got 1"),
        (lambda: ops.slice(X, (0,), sizes=(2,), strides=0), r"slice strides must be a tuple of int/DimVar/DimExpr, got 0"),
        (lambda: ops.slice(X, (0,), sizes=(2,), strides=(0,)), r"slice strides must be positive, got \(0,\)"),
        (lambda: ops.slice(X, (0,), sizes=(2,), strides=(1, 1)), r"slice needs one stride per size"),
        (lambda: ops.slice(X, (0,), sizes=[2]), r"slice sizes must be a tuple of int/DimVar/DimExpr, got \[2\]"),
        (lambda: ops.slice(X, (0,), sizes=(-1,)), r"slice sizes must not contain negative sizes"),
        (lambda: ops.reshape(X, shape=[3, 2]), r"reshape shape must be a tuple of int/DimVar/DimExpr, got \[3, 2\]"),
        (lambda: ops.reshape(X, shape=(-1, 2)), r"reshape shape must not contain negative sizes"),
        (lambda: ops.reshape(X, shape=6), r"reshape shape must be a tuple"),
        (lambda: ops.broadcast_to(X, shape=(2, "3")), r"broadcast_to shape must be a tuple of int/DimVar/DimExpr"),
        (lambda: ops.transpose(X, perm=[1, 0]), r"transpose perm must be a tuple of ints, got \[1, 0\]"),
        (lambda: ops.gelu(X, approximate="fast"), r"gelu approximate must be 'none' or 'tanh', got 'fast'"),
        (lambda: ops.cast(X, dtype="f32"), r"cast dtype must be a dtype such as f32 or DType.float32, got 'f32'"),
        (lambda: ops.cast(X, dtype=torch.float32), r"cast dtype must be a dtype"),
        (lambda: ops.full(shape=(2,), value="1", dtype=f32), r"full value must be a bool, int or float, got '1'"),
        (lambda: ops.full(shape=(2,), value=1, dtype=None), r"full dtype must be a dtype"),
        (lambda: ops.full(shape=2, value=1, dtype=f32), r"full shape must be a tuple of int/DimVar/DimExpr, got 2"),
        (lambda: ops.arange(extent=1.5), r"arange extent must be an int/DimVar/DimExpr, got 1.5"),
        (lambda: ops.concat(X, axis=True), r"concat axis must be an int, got True"),
        (lambda: ops.argmax(X, axis="0"), r"argmax axis must be an int, got '0'"),
        (lambda: ops.argmax(X, keepdims=None), r"argmax keepdims must be a bool, got None"),
        (lambda: ops.softmax(X, axis=1.0), r"softmax axis must be an int, got 1.0"),
        (lambda: ops.take(X, K, axis=None), r"take axis must be an int, got None"),
        (lambda: ops.rms_norm(X, eps="1e-6"), r"rms_norm eps must be a float or None, got '1e-6'"),
        (lambda: ops.rms_norm(X, axes=-1), r"rms_norm axes must be a tuple of ints, got -1"),
        (lambda: ops.layer_norm(X, eps=None), r"layer_norm eps must be a float"),
        (lambda: ops.reshard(X, layout=(2, 3)), r"reshard layout must be a Layout, ShardLayout or None, got \(2, 3\)"),
    ],
)
def test_malformed_attributes_raise_type_error_naming_the_attribute(build: Callable[[], object], message: str) -> None:
    with pytest.raises(TypeError, match="^" + message):
        build()
