"""Which of PyTorch's node values are defined: ``empty`` holds whatever memory held.

A tensor from ``empty``/``new_empty``/``empty_like``/``empty_strided`` has no value until it
is written, and after functionalization writes into it are a chain of ``slice_scatter``/
``copy``/``index_put``… whose results are defined only where written. ``check_against_torch``
must not compare such values (tfexec's ``empty`` is zeros; PyTorch's is garbage), nor call
them divergences: ``undefined_values`` finds them.

It tracks, per FX node, a boolean *mask* of the elements that are defined (None: all of
them), conservatively: an ``empty`` op's mask is all False; a pointwise op's is the AND of
its operands' (broadcast); a view, copy, scatter or concatenation is run on the masks
themselves (so ``slice_scatter(empty, x, …)`` is defined exactly on the written window, and
a later write of the rest makes it whole); any other op reading a partly undefined operand
is wholly undefined. Masks are computed only downstream of an ``empty``: the usual program
costs one pass over its nodes.
"""

import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx

from tfexec.frontends.torch._provenance import node_span
from tfexec.ir.span import display_location

_aten = torch.ops.aten

EMPTY = frozenset(
    str(op) for op in (
        _aten.empty.memory_format, _aten.new_empty.default, _aten.empty_like.default, _aten.empty_strided.default,
        _aten.new_empty_strided.default, _aten.empty_permuted.default,
    )
)
"""The ops whose result is uninitialised memory."""

_DATA = ("self", "src", "values", "tensors", "input", "tensor")
"""Arguments whose elements a structural op moves into its result (the mask follows them);
any other tensor argument (an index, a mask) must be wholly defined."""

_STRUCTURAL = frozenset(
    str(op) for op in (
        _aten.slice.Tensor, _aten.select.int, _aten.narrow.default, _aten.view.default, _aten._unsafe_view.default,
        _aten.reshape.default, _aten.permute.default, _aten.transpose.int, _aten.t.default, _aten.unsqueeze.default,
        _aten.squeeze.dim, _aten.squeeze.dims, _aten.squeeze.default, _aten.expand.default, _aten.clone.default,
        _aten.contiguous.default, _aten.alias.default, _aten.detach.default, _aten.copy.default,
        _aten.slice_scatter.default, _aten.select_scatter.default, _aten.cat.default, _aten.stack.default,
        _aten.index_put.default, _aten.index.Tensor, _aten.flatten.using_ints, _aten.unflatten.int,
        _aten.split.Tensor, _aten.split_with_sizes.default, _aten.unbind.int, _aten.chunk.default,
        _aten.flip.default, _aten.roll.default, _aten.repeat.default, _aten._to_copy.default,
        _aten.to.dtype, _aten.lift_fresh_copy.default, _aten.movedim.int,
    )
)
"""Ops that only move elements (or convert each one): run on the masks, they give the mask."""


@dataclass(frozen=True, slots=True)
class Undefined:
    """An FX node whose PyTorch value is (partly) uninitialised memory: ``origin`` is the
    ``empty`` node it comes from (its name, op and line), ``defined`` how many of its
    ``total`` elements are defined."""

    origin: str
    defined: int
    total: int

    def why(self) -> str:
        part = "none" if self.defined == 0 else f"only {self.defined} of {self.total}"
        return (
            f"PyTorch's value is not defined: it comes from {self.origin}, uninitialised memory, and {part} of its "
            "elements were written"
        )


def undefined_values(graph: Any, values: Mapping[str, object]) -> dict[str, Undefined]:
    """The FX nodes of ``graph`` whose PyTorch value (``values``, by node name) is not wholly
    defined, by name."""
    masks: dict[str, Any] = {}  # node name -> bool mask, or a list of them (multi-output); absent: defined
    origins: dict[str, str] = {}
    out: dict[str, Undefined] = {}
    with torch.no_grad():
        for node in graph.nodes:
            if node.op != "call_function":
                continue
            value = values.get(node.name)
            name = str(node.target)
            if name in EMPTY and isinstance(value, torch.Tensor):
                masks[node.name] = torch.zeros(value.shape, dtype=torch.bool)
                span = node_span(node.meta.get("stack_trace"), node.name)
                origins[node.name] = f"{node.name} = {name}" + (f" at {display_location(span.location())}" if span is not None else "")
            else:
                read = [a for a in _nodes(node) if a.name in masks]
                if not read:
                    continue
                mask = _mask(node, value, masks, values)
                if mask is None:
                    continue
                masks[node.name] = mask
                origins[node.name] = origins[read[0].name]
            mask = masks[node.name]
            if isinstance(mask, torch.Tensor):
                out[node.name] = Undefined(origins[node.name], int(mask.sum()), mask.numel())
    return out


def _nodes(node: Any) -> list[Any]:
    found: list[Any] = []
    torch.fx.node.map_arg((node.args, node.kwargs), found.append)
    return found


def _mask(node: Any, value: object, masks: Mapping[str, Any], values: Mapping[str, object]) -> Any:
    """``node``'s mask given its operands' (see the module docstring); None when defined."""
    if node.target is operator.getitem:
        source, index = node.args
        whole = masks[source.name]
        return whole[index] if isinstance(whole, list) else _none(value)
    name = str(node.target)
    if not isinstance(value, torch.Tensor) and not isinstance(value, (list, tuple)):
        return None if name.startswith("aten.sym_") else _none(value)
    tags = getattr(node.target, "tags", ())
    if torch.Tag.pointwise in tags and isinstance(value, torch.Tensor):
        mask = torch.ones(value.shape, dtype=torch.bool)
        for arg in _nodes(node):
            m = masks.get(arg.name)
            if isinstance(m, torch.Tensor):
                mask &= torch.broadcast_to(m, value.shape)
            elif m is not None:
                return _none(value)
        return _settled(mask)
    if name in _STRUCTURAL:
        return _structural(node, value, masks, values)
    return _none(value)


def _structural(node: Any, value: object, masks: Mapping[str, Any], values: Mapping[str, object]) -> Any:
    schema = node.target._schema
    positional = [a.name for a in schema.arguments if not a.kwarg_only]
    named = dict(zip(positional, node.args)) | dict(node.kwargs)
    for key, arg in named.items():
        if key not in _DATA and any(n.name in masks for n in _arg_nodes(arg)):
            return _none(value)  # an index or mask that is itself undefined

    def as_mask(arg: Any) -> Any:
        m = masks.get(arg.name)
        if isinstance(m, torch.Tensor):
            return m
        if m is not None:
            raise _Whole
        v = values.get(arg.name)
        if not isinstance(v, torch.Tensor):
            raise _Whole
        return torch.ones(v.shape, dtype=torch.bool)

    args: list[object] = []
    kwargs: dict[str, object] = {}
    try:
        for key, arg in zip(positional, node.args):
            args.append(torch.fx.node.map_arg(arg, as_mask) if key in _DATA else _concrete(arg, values))
        for key, arg in node.kwargs.items():
            kwargs[key] = torch.fx.node.map_arg(arg, as_mask) if key in _DATA else _concrete(arg, values)
        kwargs.pop("dtype", None)
        result = node.target(*args, **kwargs)
    except _Whole:
        return _none(value)
    except (RuntimeError, TypeError, ValueError, IndexError):  # a mask the op will not take: undefined
        return _none(value)
    if isinstance(result, (list, tuple)):
        return [_settled(r.bool()) for r in result]
    return _settled(result.bool())


class _Whole(Exception):
    """An operand is wholly undefined in a way a mask cannot follow."""


def _arg_nodes(arg: object) -> list[Any]:
    found: list[Any] = []
    torch.fx.node.map_arg(arg, found.append)  # type: ignore[type-var]
    return found


def _concrete(arg: object, values: Mapping[str, object]) -> object:
    """A non-data argument as the op takes it: FX nodes (sizes, indices) replaced by the
    values PyTorch's run gave them."""
    def value_of(n: Any) -> object:
        if n.name not in values:
            raise _Whole
        return values[n.name]

    return torch.fx.node.map_arg(arg, value_of)  # type: ignore[type-var, arg-type]


def _settled(mask: Any) -> Any:
    """None for a mask that is all True (defined), else the mask."""
    if isinstance(mask, torch.Tensor) and bool(mask.all()):
        return None
    return mask


def _none(value: object) -> Any:
    """A wholly undefined mask for ``value`` (per output, for several)."""
    if isinstance(value, torch.Tensor):
        return torch.zeros(value.shape, dtype=torch.bool)
    if isinstance(value, (list, tuple)):
        return [_none(v) for v in value]
    return torch.zeros((), dtype=torch.bool)

