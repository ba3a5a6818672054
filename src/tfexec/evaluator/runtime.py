"""Run-time rules both routes share: binding inputs, devices, constants, weights, function
boundaries and loop trip counts. Each rule is written once here, so the visitor and the
lowered graph accept and refuse exactly the same things with the same messages."""

from collections.abc import Sequence

import torch

from tfexec.errors import EvalError, TfexecError
from tfexec.evaluator.context import EvaluateContext
from tfexec.evaluator.value import TensorValue, TupleValue, Value
from tfexec.ir.boundary import call_mismatch
from tfexec.ir.describe import describe_expr
from tfexec.ir.dims import DimError, DimExpr, DimVar, resolve_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, ConstTensor, Function, GridRegionExpr, Var
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.loading import LoadedModule


def _param_label(fn: Function, index: int, param: Var) -> str:
    where = f"{param.span.location()} " if param.span is not None else ""
    return f"{where}{fn.name}: parameter {param.name} (input {index})"


def _collect_devices(value: object, label: str, found: list[tuple[str, str]]) -> None:
    if isinstance(value, torch.Tensor):
        found.append((label, str(value.device)))
    elif isinstance(value, (tuple, list)):
        for item in value:
            _collect_devices(item, label, found)


def run_device(fn: Function, inputs: Sequence[object]) -> str | None:
    """The device every tensor input is on; None when no input is a tensor. Inputs on more
    than one device are refused, naming each input and where it is (spec §2)."""
    found: list[tuple[str, str]] = []
    for i, (param, value) in enumerate(zip(fn.params, inputs)):
        _collect_devices(value, f"{param.name} (input {i})", found)
    devices = {d for _, d in found}
    if len(devices) > 1:
        listing = ", ".join(f"{label} on {device}" for label, device in found)
        raise EvalError(
            f"{fn.name}: inputs are on more than one device: {listing}. tfexec computes where its inputs are "
            "and never moves them: put every input on one device"
        )
    return found[0][1] if found else None


def _to_tensor(value: object, t: TensorType, device: str | None, label: str) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value if value.dtype == t.dtype.torch else value.to(t.dtype.torch)
    if value is None or isinstance(value, (str, bytes, dict, set)):
        raise EvalError(f"{label}: expected a tensor for {t}, found {type(value).__name__}")
    try:
        return torch.as_tensor(value, dtype=t.dtype.torch, device=device)
    except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise EvalError(f"{label}: cannot convert {type(value).__name__} to a tensor for {t}: {exc}") from exc


def _bind_value(
    value: object, t: Type, device: str | None, label: str, dims: dict[str, int], first: dict[str, str]
) -> Value:
    if isinstance(t, TupleType):
        if not isinstance(value, (tuple, list)) or len(value) != len(t.fields):
            raise EvalError(f"{label}: expected a {len(t.fields)}-tuple for {t}, found {type(value).__name__}")
        return TupleValue(
            tuple(_bind_value(v, f, device, f"{label} field {i}", dims, first) for i, (v, f) in enumerate(zip(value, t.fields)))
        )
    data = _to_tensor(value, t, device, label)
    if data.dim() != t.rank:
        raise EvalError(f"{label}: expected rank {t.rank} ({t}), found rank {data.dim()} shape {list(data.shape)}")
    for axis, (want, size) in enumerate(zip(t.shape, data.shape)):
        if isinstance(want, DimVar):
            bound = dims.get(want.name)
            if bound is None:
                dims[want.name] = size
                first[want.name] = f"{label} axis {axis}"
            elif bound != size:
                raise EvalError(
                    f"{label}: dim {want.name} is {bound} (bound by {first[want.name]}) but axis {axis} has size {size}"
                    f" (shape {list(data.shape)}, declared {t})"
                )
        elif isinstance(want, int) and want != size:
            raise EvalError(f"{label}: axis {axis} must have size {want} ({t}), found {size} (shape {list(data.shape)})")
    return TensorValue(data, TensorType(tuple(data.shape), t.dtype, t.layout))


def _check_dim_exprs(t: Type, value: Value, label: str, dims: dict[str, int]) -> None:
    if isinstance(t, TupleType) and isinstance(value, TupleValue):
        for f, v in zip(t.fields, value.elements):
            _check_dim_exprs(f, v, label, dims)
        return
    if isinstance(t, TensorType) and isinstance(value, TensorValue):
        for axis, want in enumerate(t.shape):
            if isinstance(want, DimExpr):
                try:
                    expected = resolve_dim(want, dims)
                except DimError as exc:
                    raise EvalError(f"{label}: axis {axis} size {want}: {exc}") from None
                if expected != value.data.shape[axis]:
                    raise EvalError(
                        f"{label}: axis {axis} must have size {want} = {expected}, found {value.data.shape[axis]}"
                    )


def bind_inputs(fn: Function, inputs: Sequence[object]) -> tuple[list[Value], str | None, dict[str, int]]:
    """Bind ``inputs`` to ``fn``'s parameters (spec §2): count, device, dtype cast, rank,
    static dims and ``DimVar`` bindings. Returns the values, the run's device and the dims."""
    if len(inputs) != len(fn.params):
        names = ", ".join(p.name for p in fn.params) or "none"
        raise EvalError(
            f"{describe_expr(fn)}: expects {len(fn.params)} input(s) ({names}), got {len(inputs)}"
        )
    device = run_device(fn, inputs)
    dims: dict[str, int] = {}
    first: dict[str, str] = {}
    values = [
        _bind_value(value, p.type, device, _param_label(fn, i, p), dims, first)
        for i, (p, value) in enumerate(zip(fn.params, inputs))
    ]
    for i, (p, v) in enumerate(zip(fn.params, values)):
        _check_dim_exprs(p.type, v, _param_label(fn, i, p), dims)
    return values, device, dims


def type_of_value(value: Value) -> Type:
    """The (concrete) type of a value."""
    if isinstance(value, TensorValue):
        return value.type
    assert isinstance(value, TupleValue)
    return TupleType(tuple(type_of_value(v) for v in value.elements))


def rebind(value: Value, var: Var) -> Value:
    """A value as bound to ``var``: it takes the var's declared layout(s) and is never weak."""
    return _rebind(value, var.type)


def _rebind(value: Value, declared: Type) -> Value:
    if isinstance(value, TensorValue):
        layout = declared.layout if isinstance(declared, TensorType) else None
        if value.scalar is None and value.type.layout == layout:
            return value
        return TensorValue(value.data, value.type.with_layout(layout))
    assert isinstance(value, TupleValue)
    if not isinstance(declared, TupleType):
        return value
    return TupleValue(tuple(_rebind(v, t) for v, t in zip(value.elements, declared.fields)) + value.elements[len(declared.fields):])


def call_bindings(call: Call, callee: Function, args: Sequence[Value]) -> dict[str, int]:
    """Check each argument against its parameter under the Function-boundary rules (hir §1.1)
    before the callee runs, and return the callee's fresh dim bindings."""
    if len(args) != len(callee.params):
        raise EvalError(
            f"{describe_expr(call)}: {callee.name} takes {len(callee.params)} argument(s), got {len(args)}"
        )
    why, bindings = call_mismatch([(p.name, p.type) for p in callee.params], [type_of_value(a) for a in args])
    if why is not None:
        raise EvalError(f"{describe_expr(call)}: {why}")
    return {k: v for k, v in bindings.items() if isinstance(v, int)}


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
        raise EvalError(f"{describe_expr(node)}: cannot make {node.value!r} a {t}: {exc}") from exc
    scalar = node.value if node.weak and not isinstance(node.value, torch.Tensor) else None
    return TensorValue(data, TensorType(tuple(data.shape), t.dtype, t.layout), scalar=scalar)


def _same_device(a: torch.device, b: torch.device) -> bool:
    return a.type == b.type and (a.index == b.index or None in (a.index, b.index))


def const_tensor_value(node: ConstTensor, ctx: EvaluateContext) -> TensorValue:
    """A module constant, loaded lazily (at most once) from the run's loaded module and
    refused at first use when it lives somewhere other than the run (spec §2)."""
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
    return TensorValue(data, TensorType(tuple(data.shape), DType.from_torch(data.dtype), node.type.layout))


def trip_count(region: GridRegionExpr, ctx: EvaluateContext) -> int:
    """How many times a loop runs; a negative extent, or zero trips without carries, is an error."""
    try:
        n = resolve_dim(region.extent, ctx.dim_bindings)
    except DimError as exc:
        raise EvalError(f"{describe_expr(region)}: extent {region.extent}: {exc}") from None
    if n < 0:
        raise EvalError(f"{describe_expr(region)}: extent {region.extent} = {n} is negative")
    if n == 0 and not region.carried_args:
        raise EvalError(
            f"{describe_expr(region)}: the loop runs zero times and has no carried values, so it has no value"
        )
    return n


def index_tensor(i: int, device: str | None) -> torch.Tensor:
    """A rank-0 int64 on the run's device: the induction variable's value, a ``dim_*`` result.

    ``torch.scalar_tensor`` makes the same tensor as ``torch.tensor`` for an int64 in range,
    at less than half the cost (this runs per loop iteration and per index op).
    """
    return torch.scalar_tensor(i, dtype=torch.int64, device=device)


def index_value(i: int, device: str | None) -> TensorValue:
    """The induction variable's value for iteration ``i``: a rank-0 int64 on the run's device."""
    return TensorValue(index_tensor(i, device), _INDEX_TYPE)


_INDEX_TYPE = TensorType((), DType.int64)


def unbound_var_error(var: Var) -> EvalError:
    """The error for a ``Var`` with no binding in the current environment."""
    return EvalError(
        f"{describe_expr(var)}: variable {var.name} is not bound here "
        "(not a parameter, nor an index or carry of an enclosing loop)"
    )
