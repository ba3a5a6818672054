"""Binding values to variables, written once for both routes: a run's inputs to the entry's
parameters (evaluator spec §2: count, device, dtype cast, rank, static dims, ``DimVar``
bindings), a call's arguments to its callee's parameters (the Function-boundary rules of
hir §1.1), and a function's result to its declared return type (the same rules)."""

from collections.abc import Mapping, Sequence

import torch

from tfexec.errors import EvalError
from tfexec.ir.boundary import boundary_mismatch, call_mismatch
from tfexec.ir.describe import describe_expr
from tfexec.ir.dims import DimError, DimExpr, DimVar, ShapeDim, resolve_dim
from tfexec.ir.expr import Call, Function, Var
from tfexec.ir.ops.promotion import default_dtype_refusal
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.semantics.values import I64_MAX, TensorValue, TupleValue, Value, type_of_value
from tfexec.wording import a


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
            raise EvalError(f"{label}: expected {a(f'{len(t.fields)}-tuple')} for {t}, found {type(value).__name__}")
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


def bind_inputs(
    fn: Function, inputs: Sequence[object], given: Mapping[str, int] | None = None
) -> tuple[list[Value], str | None, dict[str, int]]:
    """Bind ``inputs`` to ``fn``'s parameters (spec §2): count, device, dtype cast, rank,
    static dims and ``DimVar`` bindings. Returns the values, the run's device and the dims.

    ``given`` sizes dims up front — a dim the body uses that no parameter axis binds, say;
    an input axis annotated with such a dim must agree with it."""
    if len(inputs) != len(fn.params):
        names = ", ".join(p.name for p in fn.params) or "none"
        raise EvalError(
            f"{describe_expr(fn)}: expects {len(fn.params)} input(s) ({names}), got {len(inputs)}"
        )
    refusal = default_dtype_refusal()
    if refusal is not None:
        raise EvalError(f"{describe_expr(fn)}: {refusal}")
    device = run_device(fn, inputs)
    dims: dict[str, int] = {}
    first: dict[str, str] = {}
    for name, size in (given or {}).items():
        if not isinstance(name, str) or isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= I64_MAX:
            raise EvalError(
                f"{describe_expr(fn)}: dims= maps dim names to sizes (ints from 0 to {I64_MAX}), got {name!r}: {size!r}"
            )
        dims[name] = size
        first[name] = "dims="
    values = [
        _bind_value(value, p.type, device, _param_label(fn, i, p), dims, first)
        for i, (p, value) in enumerate(zip(fn.params, inputs))
    ]
    for i, (p, v) in enumerate(zip(fn.params, values)):
        _check_dim_exprs(p.type, v, _param_label(fn, i, p), dims)
    return values, device, dims


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


def check_return(fn: Function, value: Value, dims: Mapping[str, int]) -> None:
    """Refuse a result that does not fit ``fn``'s declared return type under the
    Function-boundary rules (its ``DimVar``s as the inputs bound them), naming the function."""
    declared = fn.ret_type
    if declared is None:
        return
    bindings: dict[str, ShapeDim] = dict(dims)
    why = boundary_mismatch(declared, type_of_value(value), bindings, "")
    if why is not None:
        raise EvalError(f"{describe_expr(fn)}: the result does not have the declared return type {declared}: {why}")
