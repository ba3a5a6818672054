"""The values a run makes itself, written once for both routes: constants (core-ir §2), module
weights (read lazily from the loaded module, refused where they are not on the run's
device, evaluator spec §2) and index values (the induction variable, ``dim_*`` results)."""

import torch

from tfexec.errors import EvalError, TfexecError
from tfexec.ir.describe import describe_expr
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Constant, ConstTensor
from tfexec.ir.weak import weak_source
from tfexec.ir.types import TensorType
from tfexec.loading import LoadedModule
from tfexec.semantics.context import EvaluateContext
from tfexec.semantics.values import IndexValue, LazyTensorValue, TensorValue, host_indices, index_tensor as index_tensor
from tfexec.wording import a


def materialize_constant(node: Constant, device: str | None) -> TensorValue:
    """A ``Constant`` as a tensor of its type, created where the run happens (core-ir §2)."""
    t = node.type
    try:
        if isinstance(node.value, torch.Tensor):
            where = device if device is not None else torch.get_default_device()
            data = node.value.to(device=where, dtype=t.dtype.torch, copy=True)
            if tuple(data.shape) != t.shape:
                raise EvalError(f"tensor of shape {list(data.shape)} does not match its type {t}")
        else:
            if t.rank != 0:
                raise EvalError(f"a Python scalar constant must have a rank-0 type, found {t}")
            data = torch.tensor(node.value, dtype=t.dtype.torch, device=device)
    except TfexecError as exc:
        raise EvalError(f"{describe_expr(node)}: {exc}") from None
    except (RuntimeError, TypeError, ValueError, OverflowError) as exc:
        raise EvalError(f"{describe_expr(node)}: cannot make {node.value!r} {a(t)}: {exc}") from exc
    return TensorValue(data, t)  # its shape is the type's (checked above, or rank 0)


def constant_value(node: Constant, device: str | None) -> TensorValue:
    """What the direct route binds a ``Constant`` to: a weak Python scalar's tensor is made
    only if something reads it as a tensor (kernels receive the Python value); any other
    constant is made now, where an error of it belongs."""
    if weak_source(node) is node:
        return WeakScalarValue(node, device)
    return materialize_constant(node, device)


class WeakScalarValue(LazyTensorValue):
    """A weak Python-scalar constant's value (core-ir §2): its tensor is made when first read.
    Op kernels take the Python value from their call's plan and never read it, so a
    ``mul(x, 0.5)`` makes no tensor for its ``0.5``. Making it cannot fail: a weak constant
    whose value does not fit its dtype is refused where it is built."""

    __slots__ = ("_node", "_device")

    def __init__(self, node: Constant, device: str | None) -> None:  # noqa: D107
        self._node = node
        self._device = device

    def make_data(self) -> torch.Tensor:
        return materialize_constant(self._node, self._device).data

    @property
    def type(self) -> TensorType:
        return self._node.type

    @type.setter
    def type(self, value: TensorType) -> None:
        raise AttributeError("a constant's type is its node's")


def _same_device(a: torch.device, b: torch.device) -> bool:
    return a.type == b.type and (a.index == b.index or None in (a.index, b.index))


def const_tensor_value(node: ConstTensor, ctx: EvaluateContext) -> TensorValue:
    """A module constant, loaded lazily (at most once) from the run's loaded module and
    refused at first use when it lives somewhere other than the run (spec §2)."""
    data = const_tensor_data(node, ctx)
    return TensorValue(data, TensorType(tuple(data.shape), DType.from_torch(data.dtype), node.type.layout))


def const_tensor_data(node: ConstTensor, ctx: EvaluateContext) -> torch.Tensor:
    """``const_tensor_value``'s tensor (what the lowered graph's weight node holds)."""
    loaded: "LoadedModule | None" = ctx.loaded_module
    if loaded is None:
        raise EvalError(
            f"{describe_expr(node)}: constant {node.name} needs a loaded module; evaluate a LoadedModule "
            "(LoadedModule.from_reading or load_module), or pass the weight as a parameter"
        )
    try:
        data = loaded.constant(node.name, node.type)
    except TfexecError as exc:
        raise EvalError(f"{describe_expr(node)}: {exc}") from exc
    run = torch.device(ctx.device) if ctx.device is not None else torch.get_default_device()
    if not _same_device(data.device, run):
        raise EvalError(
            f"{describe_expr(node)}: weight {node.name} is on {data.device} but the inputs are on {run}; "
            "tfexec never moves tensors: load the module on the inputs' device (load_module(path, device=...))"
        )
    return data


def index_value(i: int, device: str | None) -> TensorValue:
    """The induction variable's value for iteration ``i``: a rank-0 int64 on the run's device,
    held as the host int while nothing reads its tensor (``IndexValue``)."""
    return IndexValue(i, device) if host_indices(device) else TensorValue(index_tensor(i, device), _INDEX_TYPE)


_INDEX_TYPE = TensorType((), DType.int64)


