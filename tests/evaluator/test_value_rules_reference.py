"""Value rules against the torch function an op class names (``Op.reference``), on the op's
docstring examples, on both routes — so an op with a reference is tested without an entry
here — and the one check that every op of the catalogue has value tests somewhere."""

import pytest
import torch

import tfexec
from tfexec import Call, Constant, Var
from tfexec.ir.ops.base import Op
from tfexec.ir.ops.catalogue import ALL_OPS

import test_value_rules as agreement  # the value-rule cases of these directories (tests/evaluator)
import test_value_rules_against_torch as against_torch
from ir.catalogue_examples import example_function, example_ids, op_examples
from ir.value_helpers import assert_same

WITH_REFERENCE = [(cls, program) for cls, program in op_examples() if cls.reference is not None]


def test_every_op_has_value_rule_tests() -> None:
    """Hand-written cases (test_value_rules.py, test_value_rules_against_torch.py), or a reference."""
    covered = {c.name for c in agreement.CASES} | {c.name for c in against_torch.CASES}
    covered |= {cls.name for cls in ALL_OPS if cls.reference is not None}
    assert {cls.name for cls in ALL_OPS} - covered == set()


@pytest.mark.parametrize(("cls", "program"), WITH_REFERENCE, ids=example_ids(WITH_REFERENCE))
def test_value_rule_is_the_reference_on_the_examples(cls: type[Op], program: str) -> None:
    fn, inputs = example_function(program)
    call = fn.body
    assert isinstance(call, Call) and isinstance(call.target, cls), f"the example is not one {cls.name} call"
    by_param = dict(zip(fn.params, inputs))
    operands: list[object] = []
    for arg in call.args:
        if isinstance(arg, Var):
            operands.append(by_param[arg])
        else:
            assert isinstance(arg, Constant) and arg.weak, f"{cls.name}: example operands are parameters or scalars"
            # a 0-d tensor of the constant's dtype: torch promotes it as it does the Python
            # scalar, and every torch function takes it (torch.logical_xor takes no int)
            operands.append(torch.tensor(arg.value, dtype=arg.type.dtype.torch))
    assert cls.reference is not None
    want = cls.reference(*operands, **call.target.attributes())
    direct = tfexec.evaluate(fn, *inputs)
    lowered = tfexec.lower(fn).run(*inputs)
    assert isinstance(want, torch.Tensor)
    assert_same(direct, want)
    assert_same(lowered, want)
