"""Helpers of the catalogue v2 value-rule tests: deterministic samples, bitwise comparison,
and evaluating one op call on both routes with its inferred type checked against the data.

Import it as ``from ir.value_helpers import ...`` (``tests/`` is on ``sys.path``)."""

from collections.abc import Callable

import torch

import tfexec
from tfexec import DimVar, DType, Expr, Function, TensorType, Var, infer_types, resolve_dim

BOOL = DType.bool


def sample(shape: tuple[int, ...], dtype: DType, seed: int = 0, low: int = -4, high: int = 5) -> torch.Tensor:
    """Deterministic data of ``shape`` and ``dtype`` (small integers for integer dtypes)."""
    g = torch.Generator().manual_seed(seed)
    if dtype is BOOL:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating:
        return (torch.randn(shape, generator=g, dtype=torch.float64) * 2).to(dtype.torch)
    lo = max(low, 0) if dtype is DType.uint8 else low
    return torch.randint(lo, high, shape, generator=g).to(dtype.torch)


def assert_same(got: object, want: torch.Tensor) -> None:
    """Same dtype, shape and bits (NaNs equal)."""
    assert isinstance(got, torch.Tensor)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


Operands = tuple[object, ...]
"""Operands of a case: tensors (a parameter typed from the tensor), ``(TensorType, tensor)``
pairs (a parameter of that type, e.g. with DimVars), or anything else passed as it is."""


def function_of(build: Callable[..., Expr], operands: Operands) -> tuple[Function, list[torch.Tensor], list[TensorType]]:
    """``Function("f", params, build(*args))`` with one parameter per tensor operand."""
    types: list[TensorType] = []
    inputs: list[torch.Tensor] = []
    args: list[object] = []
    for op in operands:
        if isinstance(op, tuple) and len(op) == 2 and isinstance(op[0], TensorType):
            t, x = op
        elif isinstance(op, torch.Tensor):
            t, x = TensorType(tuple(op.shape), DType.from_torch(op.dtype)), op
        else:
            args.append(op)
            continue
        var = Var(f"x{len(types)}", t)
        types.append(t)
        inputs.append(x)
        args.append(var)
    params = tuple(a for a in args if isinstance(a, Var))
    return Function("f", params, build(*args)), inputs, types


def evaluate_both(build: Callable[..., Expr], *operands: object) -> torch.Tensor:
    """Evaluate ``build`` on the direct route and lowered, check the two agree bitwise
    (``assert_equivalent``) and that the value has the inferred type (DimVars resolved)."""
    fn, inputs, types = function_of(build, operands)
    infer_types(fn)
    out = tfexec.evaluate(fn, *inputs)
    assert isinstance(out, torch.Tensor)
    assert_same(tfexec.lower(fn).run(*inputs), out)
    tfexec.assert_equivalent(fn, *inputs)
    bindings = {d.name: n for t, x in zip(types, inputs) for d, n in zip(t.shape, x.shape) if isinstance(d, DimVar)}
    t = fn.body.checked_type
    assert isinstance(t, TensorType)
    assert (out.dtype, tuple(out.shape)) == (t.dtype.torch, tuple(resolve_dim(d, bindings) for d in t.shape))
    return out


def errors_of(build: Callable[..., Expr], *operands: object) -> tuple[str, str]:
    """The errors of both routes on a bad program, each as ``Class: message``: ``evaluate``
    (no type inference) and ``lower(fn).run``."""
    fn, inputs, _ = function_of(build, operands)
    messages = []
    for attempt in (lambda: tfexec.evaluate(fn, *inputs), lambda: tfexec.lower(fn).run(*inputs)):
        try:
            attempt()
        except tfexec.TfexecError as exc:
            messages.append(f"{type(exc).__name__}: {exc}")
        else:
            raise AssertionError("the program did not fail")
    return messages[0], messages[1]
