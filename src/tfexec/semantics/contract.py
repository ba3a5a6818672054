"""What user code must return, checked once here and used by both routes.

* A user value rule's **kernel** (one from outside the catalogue) returns a tensor of a dtype
  the IR names — or, for a ``host_index`` kernel, a Python int in i64's range (an index value).
  ``plan_call`` wraps such a kernel with ``checked_kernel``, so every call of it, on either
  route, is checked.
* A plain ``register_eval`` **handler** returns a ``Value`` whose tuple fields are ``Value``s
  and whose every tensor leaf's data agrees with its claimed type: a ``torch.Tensor`` of the
  type's dtype and shape (a ``DimVar`` or ``DimExpr`` in it resolved under the call's dim
  bindings); and, when the call has an inferred type, with that type's tuple tree
  (``check_handler_result``, called by ``apply_handler``).

Anything else is an ``EvalError`` prefixed by ``describe_expr(call)`` — the same message on both
routes, because both call these functions. The catalogue's kernels are not wrapped: they return
what their value rule's docstring says by construction (proofs_notes, Lemma 5). A value's
layout is not the handler's to choose: the call's value carries the layout its op gives
(``relabel``), whatever the handler claimed.
"""

import dataclasses
from collections.abc import Mapping

import torch

from tfexec.errors import EvalError
from tfexec.ir.describe import describe_expr
from tfexec.ir.dims import DimError, DimExpr, DimVar, resolve_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call
from tfexec.ir.types import MAX_TUPLE_DEPTH, TensorType, TupleType, Type
from tfexec.semantics.registry import Kernel
from tfexec.semantics.values import I64_MAX, I64_MIN, TensorValue, TupleValue


def kernel_result_error(out: object, host_index: bool) -> str | None:
    """Why ``out`` is not what a kernel may return (None: it is)."""
    if isinstance(out, torch.Tensor):
        try:
            DType.from_torch(out.dtype)
        except TypeError as exc:
            return str(exc)
        return None
    if host_index and type(out) is int:
        if I64_MIN <= out <= I64_MAX:
            return None
        return f"returned the index {out}, which does not fit in i64 ({I64_MIN} .. {I64_MAX})"
    what = "a tensor or an index (a Python int)" if host_index else "a tensor"
    return f"returned {type(out).__name__}, not {what}"


def checked_kernel(kernel: Kernel, rule_name: str) -> Kernel:
    """``kernel`` refusing, at every call, a result ``kernel_result_error`` refuses; the error
    says which rule's kernel it was (the caller prefixes the call)."""
    fn, host_index = kernel.fn, kernel.host_index

    def checked(*operands: object) -> torch.Tensor:
        out = fn(*operands)
        why = kernel_result_error(out, host_index)
        if why is not None:
            raise EvalError(f"the kernel of the value rule {rule_name} {why}")
        return out

    return dataclasses.replace(kernel, fn=checked)


def check_handler_result(call: Call, op_name: str, value: object, dims: Mapping[str, int]) -> None:
    """Refuse a handler result that breaks the contract (module docstring), naming ``call``."""
    why = _value_error(value, dims, 0)
    if why is None and call.checked_type is not None:
        why = _tree_error(value, call.checked_type)
    if why is not None:
        raise EvalError(f"{describe_expr(call)}: the handler for {op_name} returned {why}")


def _value_error(value: object, dims: Mapping[str, int], depth: int) -> str | None:
    if isinstance(value, TupleValue):
        if depth >= MAX_TUPLE_DEPTH:
            return f"a tuple nested more than {MAX_TUPLE_DEPTH} deep"
        elements: object = value.elements  # what user code built: the annotations are not checked
        if not isinstance(elements, tuple):
            return f"a TupleValue whose elements are a {type(elements).__name__}, not a tuple"
        for i, e in enumerate(elements):
            why = _value_error(e, dims, depth + 1)
            if why is not None:
                return why if isinstance(e, TupleValue) else f"{why} as field {i}"
        return None
    if not isinstance(value, TensorValue):
        return f"{type(value).__name__}, not a Value (a TensorValue or a TupleValue)"
    data: object = value.data  # what user code built: the annotations are not checked
    t: object = value.type
    if not isinstance(data, torch.Tensor):
        return f"a TensorValue whose data is {type(data).__name__}, not a torch.Tensor"
    if not isinstance(t, TensorType):
        return f"a TensorValue whose type is {type(t).__name__}, not a TensorType"
    if data.dtype != t.dtype.torch:
        return f"data of dtype {data.dtype} claiming type {t}"
    if data.dim() != t.rank:
        return f"data of shape {list(data.shape)} claiming type {t}"
    for axis, (want, size) in enumerate(zip(t.shape, data.shape)):
        if isinstance(want, (DimVar, DimExpr)):
            try:
                expected = resolve_dim(want, dims)
            except DimError as exc:
                return f"a value claiming type {t}, whose axis {axis} size {want} has no value here: {exc}"
        else:
            expected = want
        if expected != size:
            return f"data of shape {list(data.shape)} claiming type {t} (axis {axis} must be {expected})"
    return None


def _tree_error(value: object, t: Type) -> str | None:
    """Whether ``value``'s tuple tree is ``t``'s (the lowering's slots are typed by it)."""
    if isinstance(t, TupleType):
        if not isinstance(value, TupleValue) or len(value.elements) != len(t.fields):
            return f"a value shaped unlike its type rule's {t}"
        for e, f in zip(value.elements, t.fields):
            why = _tree_error(e, f)
            if why is not None:
                return why
        return None
    if isinstance(value, TupleValue):
        return f"a tuple where its type rule gives {t}"
    return None
