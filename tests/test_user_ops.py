"""The spec's extension point works the first time: a user's ``Op`` subclass and its
``register_eval`` handler, on both routes; and the README's "Add an op" walk-through runs."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import tfexec
from tfexec import EvaluateContext, Function, IRConstructionError, Op, TensorType, TensorValue, TypeInferenceError, Value, Var, f32, ops

ROOT = Path(__file__).resolve().parent.parent


class Bare(Op):
    """A user op that declares nothing: its name is its class name, any operand count."""


@tfexec.register_eval(Bare)
def _bare(ctx: EvaluateContext) -> Value:
    first = ctx.args[0]
    assert isinstance(first, TensorValue)
    total = first.data
    for v in ctx.args[1:]:
        assert isinstance(v, TensorValue)
        total = total + v.data
    return TensorValue(total, first.type)


def test_a_bare_user_op_is_named_after_its_class_and_takes_any_number_of_operands() -> None:
    assert Bare.name == "Bare" and Bare.min_args == 0 and Bare.max_args is None
    x = Var("x", f32[2])
    for n in (1, 3):
        fn = Function("f", (x,), ops.apply(Bare(), *([x] * n)))
        assert torch.equal(tfexec.evaluate(fn, torch.ones(2)), torch.full((2,), float(n)))  # type: ignore[arg-type]


def test_a_user_op_without_a_type_rule_evaluates_but_does_not_lower() -> None:
    x = Var("x", f32[2])
    fn = Function("f", (x,), ops.apply(Bare(), x))
    with pytest.raises(TypeInferenceError, match="op Bare has no type rule"):
        tfexec.lower(fn)


def test_the_type_rule_operand_and_every_error_class_are_importable_from_tfexec() -> None:
    assert tfexec.Operand(f32[2]).type == f32[2]
    for name in ("TfexecError", "ParseError", "TypeInferenceError", "LoweringError", "EvalError", "ModuleLoadError",
                 "EquivalenceError", "IRConstructionError", "ArgumentTypeError", "TypeRuleError", "DimError",
                 "RegistryError", "TypeCheckError"):
        assert issubclass(getattr(tfexec, name), tfexec.TfexecError), name


def test_tensor_value_refuses_a_type_that_is_not_a_tensor_type() -> None:
    with pytest.raises(IRConstructionError, match="TensorValue.type must be a TensorType, got NoneType"):
        TensorValue(torch.ones(2), None)  # type: ignore[arg-type]
    assert TensorValue(torch.ones(2), TensorType((2,), tfexec.DType.float32)).type.rank == 1


def test_register_eval_states_the_handler_contract() -> None:
    doc = tfexec.register_eval.__doc__ or ""
    for phrase in ("ctx.op", "ctx.args", "ctx.result_type", "None", "type inference has", "ctx.device",
                   "ctx.dim_bindings", "ctx.loaded_module", "EvalError", "describe_expr", "Both routes"):
        assert phrase in doc, phrase


def test_the_readme_walk_through_runs(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Add an op") :]
    section = section[: section.index("\n## ", 1)] if "\n## " in section[1:] else section
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 3
    script = tmp_path / "add_an_op.py"
    script.write_text("\n".join(blocks), encoding="utf-8")
    done = subprocess.run([sys.executable, "-W", "ignore", str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "OK: 1 node(s) compared, 0 mismatch(es)" in done.stdout
    assert "clip (C1): bound -1.0 is negative" in done.stdout
