"""ONNX's ``ReferenceEvaluator`` as a peer executor of W1 and W3, when ``onnx`` is installed.

``onnx`` is optional (``pip install -e '.[bench]'``): without it W1 and W3 print the
one-line ``ABSENT`` note instead of the row. The models are built with ``onnx.helper`` by each workload,
checked with ``onnx.checker``, and fed numpy inputs converted once, outside the timed call.
Its result is compared with eager's within a tolerance the workload states, not bitwise:
the reference evaluator computes with numpy, whose ``exp``, ``tanh`` and ``matmul`` may
round differently from torch's.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING

import torch

import harness

if TYPE_CHECKING:  # onnx is optional: imported in ``executor``, only when installed
    import onnx

NAME = "onnx ReferenceEvaluator"
OPSET = 18  # the models' opset: every op they use has its current form there, and onnx >= 1.16 runs it
ABSENT = f"{NAME}: row absent — onnx is not installed (`.venv/bin/pip install -e '.[bench]'`)"


def available() -> bool:
    """Whether ``onnx`` and its reference evaluator (and with them numpy) import here."""
    try:
        import onnx.reference  # noqa: F401
    except ImportError:
        return False
    return True


def executor(
    model: "onnx.ModelProto", feeds: Mapping[str, torch.Tensor], ref: torch.Tensor, *, ref_name: str, rtol: float, atol: float
) -> tuple[harness.Executor, str]:
    """The timed call of ``model`` on ``feeds`` (numpy copies made here, once), after checking its
    one output against ``ref``; and a line saying how far from ``ref`` it came, and the tolerance."""
    import numpy as np  # only with onnx installed: numpy is none of tfexec's dependencies
    import onnx
    from onnx.reference import ReferenceEvaluator

    onnx.checker.check_model(model, full_check=True)
    evaluator = ReferenceEvaluator(model)
    arrays: dict[str, np.ndarray] = {name: t.numpy() for name, t in feeds.items()}

    def call() -> object:
        return evaluator.run(None, arrays)

    outputs = call()
    assert isinstance(outputs, list) and len(outputs) == 1, f"{NAME}: expected one output, got {outputs!r}"
    out = torch.from_numpy(np.asarray(outputs[0]))
    worst = harness.max_deviation(out, ref, name=NAME, ref_name=ref_name, rtol=rtol, atol=atol)
    note = (
        f"{NAME}: onnx {onnx.__version__}, opset {OPSET}; result within rtol={rtol:g}, atol={atol:g} "
        f"of {ref_name} (max |Δ| {worst:.3g}; every other row is bitwise equal to it)"
    )
    return harness.Executor(NAME, call), note


__all__ = ["ABSENT", "NAME", "OPSET", "available", "executor"]
