"""Evaluator spec §2 and preamble, loaded-module clauses: ``evaluate(LoadedModule)`` binds
activation inputs only, supplies each ``ConstTensor`` lazily by name, runs the declared
entry, refuses a module with no entry, and refuses a weight that is not where the inputs
are at its first use, naming it."""

from collections.abc import Callable

import pytest
import torch
from shared_helpers import CountingReading
from spec_helpers import tensor

from tfexec import ConstTensor, EvalError, Function, IRModule, LoadedModule, Tuple, Var, evaluate, f32, ops


def _linear_module(entry: str | None = "forward") -> IRModule:
    x = Var("x", f32[2, 3])
    w = ConstTensor("w", f32[3, 4])
    fwd = Function("forward", (x,), ops.matmul(x, w))
    y = Var("y", f32[4])
    b = ConstTensor("b", f32[4])
    bias = Function("bias", (y,), ops.add(y, b))
    return IRModule({"forward": fwd, "bias": bias}, {"w": f32[3, 4], "b": f32[4]}, entry=entry)


@pytest.mark.spec("s0.loaded-activations-lazy-constants", "s2.loaded-constants-by-name")
def test_s2_loaded_module_binds_activations_only() -> None:
    w = torch.randn(3, 4)
    loaded = LoadedModule.from_reading(_linear_module(), {"w": w, "b": torch.zeros(4)})
    x = torch.randn(2, 3)
    out = evaluate(loaded, x)
    assert torch.equal(tensor(out), x @ w)
    with pytest.raises(EvalError, match=r"expects 1 input\(s\) \(x\), got 2"):
        evaluate(loaded, x, w)  # the weight is not an input


@pytest.mark.spec("s0.loaded-activations-lazy-constants", "s2.loaded-constants-by-name")
def test_s2_loaded_constants_read_lazily_at_first_use_once() -> None:
    reading = CountingReading({"w": torch.randn(3, 4), "b": torch.zeros(4)})
    loaded = LoadedModule.from_reading(_linear_module(), reading)
    assert reading.lookups == []  # nothing read when the module is bound
    evaluate(loaded, torch.randn(2, 3))
    assert reading.lookups == ["w"]  # only the constant the entry uses
    evaluate(loaded, torch.randn(2, 3))
    assert reading.lookups == ["w"]  # read at most once per loaded module


@pytest.mark.spec("s0.loaded-runs-entry")
def test_s2_loaded_module_runs_declared_entry() -> None:
    reading = {"w": torch.ones(3, 4), "b": torch.zeros(4)}
    loaded = LoadedModule.from_reading(_linear_module(entry="forward"), reading)
    out = evaluate(loaded, torch.ones(2, 3))
    assert isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 4)


@pytest.mark.spec("s2.loaded-needs-entry")
def test_s2_loaded_module_without_entry_refused_as_having_no_default_step() -> None:
    loaded = LoadedModule.from_reading(_linear_module(entry=None), {"w": torch.ones(3, 4), "b": torch.zeros(4)})
    with pytest.raises(EvalError, match=r"no default step"):
        evaluate(loaded, torch.ones(2, 3))


@pytest.mark.spec("s0.loaded-runs-entry", "s2.select-before-evaluation")
def test_s2_loaded_module_select_function_before_evaluate() -> None:
    reading = CountingReading({"w": torch.ones(3, 4), "b": torch.tensor([1.0, 2.0, 3.0, 4.0])})
    loaded = LoadedModule.from_reading(_linear_module(entry=None), reading)
    out = evaluate(loaded.function("bias"), torch.zeros(4))
    assert torch.equal(tensor(out), torch.tensor([1.0, 2.0, 3.0, 4.0]))
    assert reading.lookups == ["b"]


@pytest.mark.spec("s0.loaded-runs-entry", "s2.select-before-evaluation")
def test_s2_loaded_module_select_child_before_evaluate() -> None:
    y = Var("y", f32[2])
    scale = ConstTensor("scale", f32[2])
    child = IRModule({"forward": Function("forward", (y,), ops.mul(y, scale))}, {"scale": f32[2]}, entry="forward")
    top = IRModule({}, {}, children={"block": child})
    reading = CountingReading({"block.scale": torch.tensor([2.0, 3.0])})
    loaded = LoadedModule.from_reading(top, reading)
    with pytest.raises(EvalError, match=r"no default step"):
        evaluate(loaded, torch.ones(2))
    out = evaluate(loaded.child("block"), torch.ones(2))
    assert torch.equal(tensor(out), torch.tensor([2.0, 3.0]))
    assert reading.lookups == ["block.scale"]  # the child's constant, by its dotted name


@pytest.mark.spec("s2.weight-device-at-first-use")
def test_s2_loaded_weight_on_other_device_refused_at_first_use_naming_it() -> None:
    x = Var("x", f32[2, 3])
    w = ConstTensor("w", f32[3, 4])
    probe_before = ops.exp(x)
    fn = Function("forward", (x,), ops.matmul(probe_before, w))
    module = IRModule({"forward": fn}, {"w": f32[3, 4]}, entry="forward")
    loaded = LoadedModule.from_reading(module, {"w": torch.ones(3, 4, device="meta")})
    with pytest.raises(EvalError, match=r"^const_tensor w: f32\[3, 4\]: weight w is on meta but the inputs are on cpu"):
        evaluate(loaded, torch.ones(2, 3))


@pytest.mark.spec("s2.weight-device-at-first-use")
def test_s2_loaded_weight_elsewhere_but_unused_is_not_refused() -> None:
    # refused at first *use*: a weight the run never reads is never checked
    reading = {"w": torch.ones(3, 4), "b": torch.zeros(4, device="meta")}
    loaded = LoadedModule.from_reading(_linear_module(), reading)
    out = evaluate(loaded, torch.ones(2, 3))
    assert isinstance(out, torch.Tensor) and out.device.type == "cpu"


@pytest.mark.spec("s0.selects-no-device")
def test_s2_loaded_weight_and_inputs_on_same_device_run_there() -> None:
    loaded = LoadedModule.from_reading(_linear_module(), {"w": torch.ones(3, 4, device="meta"), "b": torch.zeros(4)})
    out = evaluate(loaded, torch.ones(2, 3, device="meta"))
    assert isinstance(out, torch.Tensor) and out.device.type == "meta" and tuple(out.shape) == (2, 4)


@pytest.mark.spec("s2.weight-device-at-first-use", "s2.no-implicit-move")
def test_s2_loaded_weight_on_meta_refused_with_cpu_inputs_even_when_used_twice() -> None:
    x = Var("x", f32[4])
    b = ConstTensor("b", f32[4])
    fn = Function("forward", (x,), Tuple((ops.add(x, b), ops.mul(x, b))))
    loaded = LoadedModule.from_reading(IRModule({"forward": fn}, {"b": f32[4]}, entry="forward"), {"b": torch.ones(4, device="meta")})
    with pytest.raises(EvalError, match=r"weight b is on meta"):
        evaluate(loaded, torch.ones(4))


@pytest.mark.spec("s2.loaded-constants-by-name")
def test_s2_const_tensor_without_loaded_module_refused() -> None:
    x = Var("x", f32[3])
    fn = Function("f", (x,), ops.add(x, ConstTensor("b", f32[3])))
    with pytest.raises(EvalError, match=r"^const_tensor b: f32\[3\]: constant b needs a loaded module"):
        evaluate(fn, torch.ones(3))


@pytest.mark.spec("s2.loaded-constants-by-name")
def test_s2_missing_constant_in_reading_refused_naming_it() -> None:
    loaded = LoadedModule.from_reading(_linear_module(), {"b": torch.zeros(4)})
    with pytest.raises(EvalError, match=r"^const_tensor w: f32\[3, 4\]: .*\bw\b.*missing"):
        evaluate(loaded, torch.ones(2, 3))


@pytest.mark.spec("s2.loaded-constants-by-name")
def test_s2_constant_of_wrong_shape_in_reading_refused_naming_it() -> None:
    loaded = LoadedModule.from_reading(_linear_module(), {"w": torch.ones(4, 3), "b": torch.zeros(4)})
    with pytest.raises(EvalError, match=r"^const_tensor w: f32\[3, 4\]: .*\bw\b.*declared f32\[3, 4\]"):
        evaluate(loaded, torch.ones(2, 3))


@pytest.mark.parametrize(
    "target",
    [lambda: _linear_module(), lambda: LoadedModule.from_reading(_linear_module(), {}).function, lambda: "forward"],
    ids=["IRModule", "orchestration-method", "name"],
)
@pytest.mark.spec("s2.select-before-evaluation")
def test_s2_only_functions_and_loaded_modules_are_evaluator_targets(target: Callable[[], object]) -> None:
    # orchestration methods are host Python: selecting happens on the LoadedModule value first
    with pytest.raises(TypeError, match=r"evaluate\(\): argument target must be Function \| LoadedModule"):
        evaluate(target(), torch.ones(2, 3))  # type: ignore[arg-type]  # deliberately wrong
