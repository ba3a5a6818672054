"""Evaluator spec §2 (parameters and inputs): binding, casting, DimVars, devices.

A run happens where its inputs are; the evaluator never picks or moves a device. ``meta``
tensors stand in for a second device (they hold no data, so only shape/dtype/device work).
"""

import pytest
import torch
from spec_helpers import tensor, tensors

from tfexec import (
    Constant,
    DimVar,
    EvalError,
    Function,
    TensorType,
    TfexecError,
    Tuple,
    Var,
    evaluate,
    f32,
    f64,
    i32,
    i64,
    ops,
)
from tfexec.ir.types import TupleType

B = DimVar("B")


def _add_fn() -> Function:
    x, y = Var("x", f32[B, 4]), Var("y", f32[B, 4])
    return Function("f", (x, y), ops.add(x, y))


# -- convertibility and dtype ---------------------------------------------------------


@pytest.mark.spec("s2.input-convertible-and-cast")
def test_s2_input_cast_to_param_dtype() -> None:
    x = Var("x", f32[3])
    fn = Function("f", (x,), x)
    out = evaluate(fn, torch.tensor([1, 2, 3], dtype=torch.int64))
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    assert torch.equal(out, torch.tensor([1.0, 2.0, 3.0]))
    y = Var("y", i32[2])
    out2 = evaluate(Function("g", (y,), y), torch.tensor([1.9, -1.9], dtype=torch.float64))
    assert isinstance(out2, torch.Tensor) and out2.dtype == torch.int32
    assert out2.tolist() == [1, -1]  # Tensor.to truncates toward zero


@pytest.mark.spec("s2.input-convertible-and-cast")
def test_s2_python_list_input_is_converted_and_cast() -> None:
    x = Var("x", f64[2, 2])
    out = evaluate(Function("f", (x,), x), [[1, 2], [3, 4]])
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    assert out.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.spec("s2.input-convertible-and-cast")
def test_s2_python_scalar_input_binds_rank0_param() -> None:
    x = Var("x", i64[()])
    out = evaluate(Function("f", (x,), ops.add(x, 1)), 41)
    assert isinstance(out, torch.Tensor) and out.dim() == 0 and out.dtype == torch.int64 and out.item() == 42


@pytest.mark.parametrize(
    ("bad", "found"),
    [("abc", "str"), (None, "NoneType"), ([[1.0, 2.0, 3.0, 4.0], [1.0]], "list"), ({"a": 1}, "dict"), (object(), "object")],
    ids=["str", "None", "ragged-list", "dict", "object"],
)
@pytest.mark.spec("s2.input-convertible-and-cast")
def test_s2_non_convertible_input_refused_naming_parameter(bad: object, found: str) -> None:
    fn = _add_fn()
    with pytest.raises(EvalError, match=rf"^f: parameter x \(input 0\): .*{found}") as info:
        evaluate(fn, bad, torch.ones(2, 4))
    assert "f32[B, 4]" in str(info.value)


@pytest.mark.spec("s2.weights-bound-like-activations")
def test_s2_weights_bound_like_activations() -> None:
    # a weight is an ordinary parameter: same binding, same cast, same checks
    x, w = Var("x", f32[2, 3]), Var("w", f32[3, 4])
    fn = Function("f", (x, w), ops.matmul(x, w))
    xv, wv = torch.randn(2, 3), torch.randn(3, 4, dtype=torch.float64)
    out = evaluate(fn, xv, wv)
    assert torch.equal(tensor(out), xv @ wv.float())
    with pytest.raises(EvalError, match=r"parameter w \(input 1\): axis 0 must have size 3"):
        evaluate(fn, xv, torch.randn(4, 4))


# -- count, rank, static dims -----------------------------------------------------------


@pytest.mark.spec("s2.one-input-per-parameter")
def test_s2_wrong_input_count_refused() -> None:
    fn = _add_fn()
    with pytest.raises(EvalError, match=r"function f\(x, y\): expects 2 input\(s\) \(x, y\), got 1"):
        evaluate(fn, torch.ones(2, 4))
    with pytest.raises(EvalError, match=r"expects 2 input\(s\) \(x, y\), got 3"):
        evaluate(fn, torch.ones(2, 4), torch.ones(2, 4), torch.ones(2, 4))


@pytest.mark.spec("s2.dimvar-bound-from-input")
def test_s2_wrong_rank_refused() -> None:
    with pytest.raises(EvalError, match=r"parameter y \(input 1\): expected rank 2 \(f32\[B, 4\]\), found rank 1 shape \[4\]"):
        evaluate(_add_fn(), torch.ones(2, 4), torch.ones(4))


@pytest.mark.spec("s2.dimvar-bound-from-input")
def test_s2_wrong_static_dim_refused() -> None:
    with pytest.raises(EvalError, match=r"parameter x \(input 0\): axis 1 must have size 4 \(f32\[B, 4\]\), found 5"):
        evaluate(_add_fn(), torch.ones(2, 5), torch.ones(2, 4))


# -- DimVars ------------------------------------------------------------------------------


@pytest.mark.spec("s2.dimvar-bound-from-input")
def test_s2_dimvar_bound_from_input_axis() -> None:
    # B is bound from x's axis 0 and used as a size in a shape attribute
    x = Var("x", f32[B, 2])
    fn = Function("f", (x,), ops.full(shape=(B, B), value=1.0, dtype=f32))
    out = evaluate(fn, torch.ones(3, 2))
    assert isinstance(out, torch.Tensor) and tuple(out.shape) == (3, 3)


@pytest.mark.spec("s2.dimvar-agree")
def test_s2_dimvar_later_occurrence_must_agree() -> None:
    fn = _add_fn()
    out = evaluate(fn, torch.ones(3, 4), torch.ones(3, 4))
    assert isinstance(out, torch.Tensor) and tuple(out.shape) == (3, 4)
    with pytest.raises(
        EvalError,
        match=r"^f: parameter y \(input 1\): dim B is 2 \(bound by f: parameter x \(input 0\) axis 0\) but axis 0 has size 3",
    ):
        evaluate(fn, torch.ones(2, 4), torch.ones(3, 4))


@pytest.mark.spec("s2.dimvar-agree")
def test_s2_dimvar_later_occurrence_within_one_input_must_agree() -> None:
    x = Var("x", f32[B, B])
    fn = Function("sq", (x,), x)
    assert tuple(tensor(evaluate(fn, torch.ones(2, 2))).shape) == (2, 2)
    with pytest.raises(EvalError, match=r"dim B is 2 \(bound by sq: parameter x \(input 0\) axis 0\) but axis 1 has size 3"):
        evaluate(fn, torch.ones(2, 3))


@pytest.mark.spec("s2.dimvar-agree")
def test_s2_dim_expression_in_parameter_checked_against_binding() -> None:
    x, y = Var("x", f32[B]), Var("y", f32[B * 2])
    fn = Function("f", (x, y), ops.concat(x, y, axis=0))
    assert tuple(tensor(evaluate(fn, torch.ones(2), torch.ones(4))).shape) == (6,)
    with pytest.raises(EvalError, match=r"parameter y \(input 1\): axis 0 must have size B \* 2 = 4, found 5"):
        evaluate(fn, torch.ones(2), torch.ones(5))


@pytest.mark.spec("s0.bind-in-order")
def test_s2_tuple_parameter_binds_field_by_field() -> None:
    p = Var("p", TupleType((f32[2], i64[()])))
    fn = Function("f", (p,), p)
    out = evaluate(fn, (torch.ones(2, dtype=torch.float64), 3))
    values, count = tensors(out)
    assert values.dtype == torch.float32 and count.item() == 3
    with pytest.raises(EvalError, match=r"parameter p \(input 0\): expected a 2-tuple"):
        evaluate(fn, torch.ones(2))


# -- devices ------------------------------------------------------------------------------


@pytest.mark.spec("s2.inputs-one-device")
def test_s2_inputs_on_two_devices_refused_naming_each() -> None:
    with pytest.raises(EvalError, match=r"more than one device: x \(input 0\) on cpu, y \(input 1\) on meta") as info:
        evaluate(_add_fn(), torch.ones(2, 4), torch.ones(2, 4, device="meta"))
    assert "never moves" in str(info.value)


@pytest.mark.spec("s0.selects-no-device")
def test_s2_run_happens_on_the_inputs_device() -> None:
    x = Var("x", f32[2, 4])
    out = evaluate(Function("f", (x,), ops.exp(ops.add(x, 1.0))), torch.ones(2, 4, device="meta"))
    assert isinstance(out, torch.Tensor) and out.device.type == "meta" and tuple(out.shape) == (2, 4)


@pytest.mark.spec("s0.selects-no-device")
def test_s2_constants_created_on_run_device() -> None:
    x = Var("x", f32[2, 4])
    const = Constant(torch.ones(2, 4), f32[2, 4])  # a CPU literal: materialised where the run is
    full = ops.full(shape=(2, 4), value=3.0, dtype=f32)
    fn = Function("f", (x,), Tuple((full, const, ops.add(Constant(1.0, f32[()]), x))))
    out = evaluate(fn, torch.ones(2, 4, device="meta"))
    assert isinstance(out, tuple)
    for t in out:
        assert isinstance(t, torch.Tensor) and t.device.type == "meta"


@pytest.mark.spec("s0.no-tensor-default-device")
def test_s2_no_tensor_inputs_use_torch_default_device() -> None:
    x = Var("x", f32[2])
    const = Constant(torch.ones(2), f32[2])
    fn = Function("f", (x,), Tuple((ops.add(x, 1.0), ops.full(shape=(2,), value=0.0, dtype=f32), const)))
    out = evaluate(fn, [1.0, 2.0])
    assert all(t.device.type == "cpu" for t in tensors(out))
    with torch.device("meta"):  # torch's default device, set by the caller, decides
        out = evaluate(fn, [1.0, 2.0])
    assert isinstance(out, tuple)
    for t in out:
        assert isinstance(t, torch.Tensor) and t.device.type == "meta"


@pytest.mark.spec("s2.no-implicit-move", "s0.selects-no-device")
def test_s2_tensor_input_is_not_moved_to_the_default_device() -> None:
    x = Var("x", f32[2])
    with torch.device("meta"):
        out = evaluate(Function("f", (x,), ops.add(x, 1.0)), torch.ones(2, device="cpu"))
    assert isinstance(out, torch.Tensor) and out.device.type == "cpu"
    assert torch.equal(out, torch.full((2,), 2.0))


@pytest.mark.spec("s2.input-convertible-and-cast")
def test_s2_errors_are_tfexec_errors() -> None:
    with pytest.raises(TfexecError):
        evaluate(_add_fn(), "no", torch.ones(2, 4))


@pytest.mark.spec("s4.constant-materialises")
def test_s2_constant_of_declared_type() -> None:
    # core-ir §2: a Constant materialises as a tensor of its TensorType (dtype cast included)
    x = Var("x", f32[()])
    c = Constant(torch.tensor([1, 2]), TensorType((2,), f64[()].dtype))
    out = evaluate(Function("f", (x,), c), 0.0)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64 and out.tolist() == [1.0, 2.0]
