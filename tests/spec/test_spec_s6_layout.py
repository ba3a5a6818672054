"""Evaluator spec §6 (layout domain): one mesh participant, logical values, axis ops on
logical axes, ``reshard`` keeps the value, ``local`` is the identity unless an axis is split,
``as_layout_view`` / ``from_layout_view``."""

import inspect
import pkgutil

import pytest
import torch
from spec_helpers import tensor

import tfexec.semantics.rules as handlers_pkg
from tfexec import (
    Constant,
    DimVar,
    EvalError,
    EvaluateContext,
    EvaluatorVisitor,
    Expr,
    Function,
    Layout,
    Mesh,
    Replicate,
    ShardLayout,
    Split,
    TensorType,
    TensorValue,
    TfexecError,
    Var,
    as_layout_view,
    describe_expr,
    evaluate,
    f32,
    from_layout_view,
    ops,
)
from tfexec.ir.dtypes import DType

MESH = Mesh((2,), ("tp",))
SPLIT0 = ShardLayout(MESH, (Split(0),))
REPLICATED = ShardLayout(MESH, (Replicate(),))
TILED = Layout((8, 3))
LAYOUTS = [None, TILED, SPLIT0, REPLICATED, ShardLayout(MESH, (Replicate(),), Layout((3, 8)))]
LAYOUT_IDS = ["none", "layout", "split", "replicate", "replicate+layout"]


def _value(expr: Expr) -> TensorValue:
    v = EvaluatorVisitor().visit(expr, EvaluateContext())
    assert isinstance(v, TensorValue)
    return v


def _data() -> torch.Tensor:
    return torch.arange(24.0).reshape(4, 6) ** 1.5


# -- axis ops address logical axes ----------------------------------------------------------------


@pytest.mark.spec("s6.logical-axes", "s6.reshard-never-changes-what-an-op-reads")
@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
def test_s6_axis_ops_address_logical_axes_whatever_the_layout(layout: Layout | ShardLayout | None) -> None:
    x = Var("x", f32[4, 6])
    held = ops.reshard(x, layout=layout)
    fn_cases = {
        "reduce": (ops.reduce(held, kind="sum", axes=(1,)), lambda t: t.sum(dim=1)),
        "reduce-max-0": (ops.reduce(held, kind="max", axes=(0,), keepdims=True), lambda t: t.amax(dim=0, keepdim=True)),
        "softmax": (ops.softmax(held, axis=0), lambda t: torch.softmax(t, dim=0)),
        "argmax": (ops.argmax(held, axis=1), lambda t: t.argmax(dim=1)),
        "rms_norm": (ops.rms_norm(held, axes=(-1,)), lambda t: torch.nn.functional.rms_norm(t, [6])),
        "layer_norm": (ops.layer_norm(held, axes=(-1,)), lambda t: torch.nn.functional.layer_norm(t, [6])),
    }
    data = _data()
    for name, (call, reference) in fn_cases.items():
        out = evaluate(Function(name.replace("-", "_"), (x,), call), data)
        want = reference(data)
        assert isinstance(out, torch.Tensor) and out.shape == want.shape, name
        assert torch.equal(out, want), name


@pytest.mark.spec("s6.regroup-by-reshape")
def test_s6_regroup_axis_by_logical_reshape_before_per_head_norm() -> None:
    s, h, d = 3, 2, 4
    x = Var("x", f32[s, h * d])
    heads = ops.reshape(ops.reshard(x, layout=Layout((h * d, s))), shape=(s, h, d))
    out = evaluate(Function("f", (x,), ops.rms_norm(heads, axes=(-1,), eps=1e-6)), _flat(s, h * d))
    want = torch.nn.functional.rms_norm(_flat(s, h * d).reshape(s, h, d), [d], eps=1e-6)
    assert isinstance(out, torch.Tensor) and torch.equal(out, want)
    # without the reshape the op normalises the whole logical row: a different value
    whole = evaluate(Function("g", (x,), ops.rms_norm(x, axes=(-1,), eps=1e-6)), _flat(s, h * d))
    assert isinstance(whole, torch.Tensor) and not torch.allclose(whole.reshape(s, h, d), want)


def _flat(rows: int, cols: int) -> torch.Tensor:
    return torch.linspace(-2.0, 3.0, rows * cols).reshape(rows, cols)


# -- reshard -----------------------------------------------------------------------------------------------


@pytest.mark.spec("s6.reshard-keeps-value")
@pytest.mark.parametrize("layout", LAYOUTS, ids=LAYOUT_IDS)
def test_s6_reshard_preserves_the_logical_value(layout: Layout | ShardLayout | None) -> None:
    data = _data()
    v = _value(ops.reshard(Constant(data, f32[4, 6]), layout=layout))
    assert torch.equal(v.data, data)  # same values, same logical shape
    assert v.type == TensorType((4, 6), DType.float32, layout)


@pytest.mark.spec("s6.reshard-keeps-value")
def test_s6_reshard_chain_round_trips_the_value() -> None:
    x = Var("x", f32[4, 6])
    chain = ops.reshard(ops.reshard(ops.reshard(x, layout=TILED), layout=SPLIT0), layout=None)
    assert torch.equal(tensor(evaluate(Function("f", (x,), chain), _data())), _data())


# -- local -------------------------------------------------------------------------------------------------


@pytest.mark.spec("s6.local-identity-without-split")
def test_s6_local_without_split_is_the_identity() -> None:
    data = _data()
    plain = _value(ops.local(Constant(data, f32[4, 6])))
    assert torch.equal(plain.data, data) and plain.type.layout is None
    replicated = _value(ops.local(ops.reshard(Constant(data, f32[4, 6]), layout=REPLICATED)))
    assert torch.equal(replicated.data, data)
    assert replicated.type.layout is None  # the local view's layout: the ShardLayout's own (none)
    with_layout = ShardLayout(MESH, (Replicate(),), Layout((3, 8)))
    tiled = _value(ops.local(ops.reshard(Constant(data, f32[4, 6]), layout=with_layout)))
    assert torch.equal(tiled.data, data) and tiled.type.layout == Layout((3, 8))


@pytest.mark.spec("s6.local-split-refused")
def test_s6_local_on_split_axis_raises_one_participant_error() -> None:
    x = Var("x", f32[4, 6])
    call = ops.local(ops.reshard(x, layout=SPLIT0))
    with pytest.raises(EvalError) as info:
        evaluate(Function("f", (x,), call), _data())
    message = str(info.value)
    assert message.startswith(describe_expr(call) + ": ")
    assert "one mesh participant" in message and "§6" in message
    assert "Split(0)" in message


@pytest.mark.spec("s6.local-split-refused")
def test_s6_local_on_split_of_two_axis_mesh_raises() -> None:
    mesh = Mesh((2, 2), ("dp", "tp"))
    x = Var("x", f32[4, 6])
    call = ops.local(ops.reshard(x, layout=ShardLayout(mesh, (Replicate(), Split(1)))))
    with pytest.raises(EvalError, match=r"one mesh participant.*§6"):
        evaluate(Function("f", (x,), call), _data())


@pytest.mark.spec("s6.unmodelled-identifies-itself")
def test_s6_unmodelled_path_identifies_itself_not_a_torch_error() -> None:
    x = Var("x", f32[4, 6])
    call = ops.local(ops.reshard(x, layout=SPLIT0))
    with pytest.raises(TfexecError) as info:
        evaluate(Function("f", (x,), call), torch.zeros(4, 6, device="meta"))
    assert isinstance(info.value, EvalError) and "one mesh participant" in str(info.value)


# -- layout views --------------------------------------------------------------------------------------


@pytest.mark.spec("s6.layout-views", "s1.layout-drives-projection")
def test_s6_as_layout_view_reshapes_to_layout_shape_contiguously() -> None:
    data = torch.arange(24.0).reshape(4, 6)
    v = TensorValue(data, TensorType((4, 6), DType.float32, TILED))
    view = as_layout_view(v)
    assert tuple(view.shape) == (8, 3) and torch.equal(view, data.reshape(8, 3))
    back = from_layout_view(view, v.type)
    assert torch.equal(back.data, data) and back.type.shape == (4, 6) and back.type.layout == TILED


@pytest.mark.spec("s6.layout-views", "s1.layout-drives-projection")
def test_s6_as_layout_view_of_shard_layout_uses_its_layout_shape() -> None:
    data = torch.arange(24.0).reshape(4, 6)
    t = TensorType((4, 6), DType.float32, ShardLayout(MESH, (Replicate(),), Layout((2, 3, 4))))
    view = as_layout_view(TensorValue(data, t))
    assert tuple(view.shape) == (2, 3, 4) and torch.equal(view.reshape(-1), data.reshape(-1))
    assert torch.equal(from_layout_view(view, t).data, data)


@pytest.mark.spec("s6.layout-views")
def test_s6_layout_view_without_layout_is_the_data() -> None:
    data = torch.arange(6.0).reshape(2, 3)
    for layout in (None, SPLIT0):
        v = TensorValue(data, TensorType((2, 3), DType.float32, layout))
        assert as_layout_view(v) is data


@pytest.mark.spec("s6.layout-views")
def test_s6_layout_view_resolves_dims_through_bindings() -> None:
    n = DimVar("N")
    data = torch.arange(12.0).reshape(3, 4)
    t = TensorType((n, 4), DType.float32, Layout((n * 2, 2)))
    view = as_layout_view(TensorValue(data, t), {"N": 3})
    assert tuple(view.shape) == (6, 2)
    back = from_layout_view(view, t, {"N": 3})
    assert torch.equal(back.data, data) and back.type.shape == (3, 4)


@pytest.mark.spec("s6.layout-views")
def test_s6_layout_view_errors_are_evalerrors() -> None:
    data = torch.arange(12.0).reshape(3, 4)
    wrong = TensorValue(data, TensorType((3, 4), DType.float32, Layout((5, 2))))
    with pytest.raises(EvalError, match=r"layout Layout\(\(5, 2\)\) holds 10 elements, the value has 12"):
        as_layout_view(wrong)
    n = DimVar("N")
    unbound = TensorValue(data, TensorType((3, 4), DType.float32, Layout((n, 4))))
    with pytest.raises(EvalError, match=r"dim N is not bound"):
        as_layout_view(unbound)
    with pytest.raises(EvalError, match=r"dim N is not bound"):
        from_layout_view(data, TensorType((n, 4), DType.float32, Layout((3, 4))))
    with pytest.raises(EvalError, match=r"does not fill logical shape \[2, 4\]"):
        from_layout_view(data, TensorType((2, 4), DType.float32, Layout((3, 4))))


@pytest.mark.spec("s6.no-layout-domain-op")
def test_s6_no_current_op_computes_in_the_layout_domain() -> None:
    # "no op in the current set is layout-domain, so none of them call these helpers"
    for info in pkgutil.iter_modules(handlers_pkg.__path__):
        module = __import__(f"{handlers_pkg.__name__}.{info.name}", fromlist=["_"])
        source = inspect.getsource(module)
        assert "as_layout_view" not in source and "from_layout_view" not in source, info.name
