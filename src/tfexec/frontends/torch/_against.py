"""``check_against_torch``: every imported node's value, compared with PyTorch's own.

The program is imported (``import_module``), then run twice on the same inputs: by
tfexec (its per-node table, ``tfexec.compare.tfexec_table``) and by PyTorch — the very
*exported program* tfexec translated, run node by node with a ``torch.fx.Interpreter``
that records every node's output. Each FX node is paired with the HIR node that is its
value (``_pairing``), so the two tables share keys, and ``tfexec.compare.compare_tables``
compares them with per-dtype tolerances, in FX graph (topological) order, naming the first
divergence and the user's source line of every node. Nodes without a counterpart on the
other side are listed, with the reason, and never fail the check; so are the nodes whose
PyTorch value is not defined (``empty`` memory not yet wholly written: ``_defined``).
"""

from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.fx

from tfexec.compare import NodeInfo, Tolerance, compare_tables, resolve_tolerances, tfexec_table
from tfexec.errors import TfexecError
from tfexec.frontends.torch._against_report import Margin, TorchCheckReport, margin
from tfexec.frontends.torch._defined import undefined_values
from tfexec.frontends.torch._api import DynamicShapes, ImportedModule, Program, import_module
from tfexec.frontends.torch._pairing import Paired, Pairing, Unpaired, pair, target_name
from tfexec.frontends.torch._provenance import node_span
from tfexec.ir.dtypes import DType
from tfexec.wording import a


class TorchCheckError(TfexecError):
    """``check_against_torch`` cannot run: wrong inputs, a module not imported by
    ``import_module``, or PyTorch failing on the exported program (the node is named)."""


def check_against_torch(
    module_or_fn: Program,
    example_inputs: torch.Tensor | Sequence[torch.Tensor],
    dynamic_shapes: DynamicShapes = None,
    *,
    kwargs: Mapping[str, object] | None = None,
    inputs: Sequence[torch.Tensor] | None = None,
    tolerances: Mapping[DType, Tolerance] | None = None,
    decompose: bool | None = None,
) -> TorchCheckReport:
    """Import ``module_or_fn`` as ``import_module`` does and compare every paired node's
    value, tfexec's against PyTorch's, on ``inputs`` (default: ``example_inputs``; with
    ``dynamic_shapes``, inputs of other sizes too).

    Tolerances are per dtype: ``tfexec.compare.DEFAULT_TOLERANCES`` (those of
    ``torch.testing.assert_close``), replaced per dtype by ``tolerances``; integers and
    booleans compare exactly. ``report.ok`` is True only when every paired node agrees.
    """
    imported = import_module(module_or_fn, example_inputs, dynamic_shapes, kwargs=kwargs, decompose=decompose)
    run_on = example_inputs if inputs is None else inputs
    return check_imported_against_torch(imported, run_on, tolerances=tolerances)


def check_imported_against_torch(
    imported: ImportedModule,
    inputs: torch.Tensor | Sequence[torch.Tensor],
    *,
    tolerances: Mapping[DType, Tolerance] | None = None,
) -> TorchCheckReport:
    """``check_against_torch`` for a module ``import_module`` returned already (its exported
    program and node record come with it): no second import."""
    exported = getattr(imported, "exported", None)
    fn = imported.entry
    if not isinstance(imported, ImportedModule) or exported is None or fn is None:
        raise TorchCheckError(
            "check_imported_against_torch needs the module import_module returned (it keeps the exported program), "
            f"got {type(imported).__name__}"
        )
    args = _inputs(inputs, len(fn.params))
    check_sizes(exported, args, [p.name for p in fn.params])
    pairing = pair(fn, exported.graph, imported.node_values)
    ours = tfexec_table(imported, args)
    theirs = torch_values(exported, args)
    undefined = undefined_values(exported.graph, theirs)
    expected: dict[str, torch.Tensor] = {}
    actual: dict[str, torch.Tensor] = {}
    info: dict[str, NodeInfo] = {}
    paired: list[Paired] = []
    extra: list[Unpaired] = []
    for p in pairing.paired:
        value = theirs.get(p.fx)
        if not isinstance(value, torch.Tensor):
            extra.append(Unpaired("fx", p.fx, p.target, p.location, f"PyTorch's value is {a(type(value).__name__)}, not a tensor"))
            continue
        if p.fx in undefined:
            extra.append(Unpaired("fx", p.fx, p.target, p.location, undefined[p.fx].why()))
            continue
        paired.append(p)
        expected[p.key] = value.detach()
        if p.key in ours:
            actual[p.key] = ours[p.key]
        info[p.key] = NodeInfo(f"{p.op} ({_short(p.target)})", p.location, p.source)
    comparison = compare_tables(expected, actual, tolerances=tolerances, info=info)
    table = resolve_tolerances(tolerances)
    margins = [
        Margin(key, margin(expected[key], actual[key], _tolerance(expected[key], table)))
        for key in expected if key in actual
    ]
    worst = max(margins, key=lambda m: m.ratio, default=None)
    used = Pairing(tuple(paired), pairing.unpaired_hir, pairing.unpaired_fx + tuple(extra), pairing.placeholders)
    return TorchCheckReport(comparison, used, worst)


def check_sizes(exported: torch.export.ExportedProgram, inputs: Sequence[torch.Tensor], names: Sequence[str]) -> None:
    """Refuse inputs the exported program was not made for: a static size other than the
    export's, a dynamic size outside its ``Dim``'s range, or one ``Dim`` at two sizes. The
    node-by-node run skips the exported module's own input checks, and outside those
    promises PyTorch's side is not the program torch specialised. ``names`` are the inputs'
    names as the imported function's parameters have them."""
    placeholders = {n.name: n for n in exported.graph.nodes if n.op == "placeholder"}
    seen: dict[object, tuple[int, str]] = {}
    for i, (placeholder, x, name) in enumerate(zip(exported.graph_signature.user_inputs, inputs, names)):
        node = placeholders.get(placeholder)
        val = node.meta.get("val") if node is not None else None
        if not isinstance(val, torch.Tensor):
            continue
        what = f"input {i} ({name})"
        if x.dim() != val.dim():
            raise TorchCheckError(f"{what} has rank {x.dim()}; the program was exported for rank {val.dim()}")
        dims: tuple[object, ...] = tuple(val.shape)  # ints, and SymInts for the dynamic axes
        for axis, (size, dim) in enumerate(zip(x.shape, dims)):
            where = f"{what} axis {axis}"
            if isinstance(dim, int):
                if size != dim:
                    raise TorchCheckError(f"{where} has size {size}; the program was exported with size {dim} there (not dynamic)")
                continue
            symbol = getattr(getattr(dim, "node", None), "expr", None)
            if symbol is None:
                continue
            known = exported.range_constraints.get(symbol)
            if known is not None:
                low, high = _bound(known.lower), _bound(known.upper)
                if (low is not None and size < low) or (high is not None and size > high):
                    shown = f"{low if low is not None else '-inf'}..{high if high is not None else 'inf'}"
                    raise TorchCheckError(f"{where} has size {size}, outside the range its dim was exported for ({shown})")
            first = seen.setdefault(symbol, (size, where))
            if first[0] != size:
                raise TorchCheckError(f"{where} has size {size} but {first[1]} has {first[0]}: the export made them one dim")


def _bound(value: object) -> int | None:
    """A range end as an int, or None for an unbounded one."""
    if isinstance(value, int):
        return value
    try:
        return int(str(value))  # a sympy Integer; infinity reads "int_oo" / "oo"
    except ValueError:
        return None


def torch_values(exported: torch.export.ExportedProgram, inputs: Sequence[torch.Tensor]) -> dict[str, object]:
    """PyTorch's value of every node of ``exported``'s graph on ``inputs`` (the user inputs,
    in order), by node name: the graph run node by node, weights from the program itself."""
    args: list[object] = []
    user = iter(inputs)
    for spec in exported.graph_signature.input_specs:
        kind = spec.kind.name
        if kind == "USER_INPUT":
            args.append(next(user))
        elif kind in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR") and spec.target is not None:
            found = exported.state_dict.get(spec.target)
            args.append(found if found is not None else exported.constants[spec.target])
        else:
            raise TorchCheckError(f"the exported program has {a(kind)} input, which cannot be fed (only tensors and weights)")
    recorder = _Recorder(exported.graph_module)
    with torch.no_grad():
        recorder.run(*args)
    return recorder.values


class _Recorder(torch.fx.Interpreter):
    """An interpreter that keeps every node's output, and names the node PyTorch fails at."""

    def __init__(self, module: torch.fx.GraphModule) -> None:
        super().__init__(module)
        self.values: dict[str, object] = {}

    def run_node(self, n: torch.fx.Node) -> Any:
        try:
            tied = _TIE_BROKEN.get(n.target)
            if tied is not None:
                args, kwargs = self.fetch_args_kwargs_from_env(n)
                out = tied(*args, **kwargs)
            else:
                out = super().run_node(n)
        except Exception as exc:  # PyTorch failing on the user's inputs: name the node, not a traceback
            span = node_span(n.meta.get("stack_trace"), n.name)
            where = f"{span.location()} " if span is not None else ""
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise TorchCheckError(
                f"PyTorch's run of the exported program failed at {where}{n.name} = {target_name(n)}: "
                f"{type(exc).__name__}: {first}"
            ) from exc
        self.values[n.name] = out
        return out


def _stable_sort(
    self: torch.Tensor, stable: bool | None = None, dim: int = -1, descending: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.sort(self, dim=dim, descending=descending, stable=True)


def _sort_default(self: torch.Tensor, dim: int = -1, descending: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.sort(self, dim=dim, descending=descending, stable=True)


def _argsort(self: torch.Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> torch.Tensor:
    return torch.argsort(self, dim=dim, descending=descending, stable=True)


def _topk(
    self: torch.Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True  # noqa: A002
) -> tuple[torch.Tensor, torch.Tensor]:
    """``topk`` with equal elements taken lower index first (a stable sort's first ``k``)."""
    if self.dim() == 0:
        return torch.topk(self, k, dim, largest, sorted)
    order = torch.argsort(self, dim=dim, descending=largest, stable=True).narrow(dim, 0, k).contiguous()
    return torch.gather(self, dim, order), order


_TIE_BROKEN: dict[object, Any] = {
    torch.ops.aten.sort.default: _sort_default,
    torch.ops.aten.sort.stable: _stable_sort,
    torch.ops.aten.argsort.default: _argsort,
    torch.ops.aten.argsort.stable: _argsort,
    torch.ops.aten.topk.default: _topk,
}
"""Ops whose order among equal elements torch leaves unspecified (an unstable sort; topk,
which may return any of several equal elements): PyTorch's run takes them as tfexec's rules
define them, equal elements lower index first, the same values torch's own promise allows.
Without it a tie broken the other way reads as a divergence (the router's sort of expert ids
in every mixture-of-experts model) though both are what torch promises."""


def _inputs(inputs: object, count: int) -> tuple[torch.Tensor, ...]:
    items = (inputs,) if isinstance(inputs, torch.Tensor) else inputs
    if not isinstance(items, (list, tuple)) or not all(isinstance(x, torch.Tensor) for x in items):
        raise TorchCheckError(f"inputs must be a tensor or a sequence of tensors, got {type(inputs).__name__}")
    if len(items) != count:
        raise TorchCheckError(f"the program takes {count} input(s), got {len(items)}")
    return tuple(items)


def _tolerance(t: torch.Tensor, table: Mapping[DType, Tolerance]) -> Tolerance:
    try:
        return table[DType.from_torch(t.dtype)]
    except TypeError:
        return Tolerance(0.0, 0.0)


def _short(target: str) -> str:
    return target.removesuffix(".default")
