"""Hypothesis strategies for random well-typed HIR programs.

``programs()`` draws a ``Program``: a ``Function`` that passes ``infer_types`` together with
concrete inputs (and, when it reads weights, the ``LoadedModule`` supplying them) on which
it evaluates without error — or, with ``failing=True``, fails with a known error. Property
tests run such programs through both evaluation routes and compare them
(``check_equivalence``).

Main definitions
----------------
* ``Program`` — a function, its inputs, the ``DimVar`` bindings the inputs imply, its
  weights and module (``target`` is what to run), and for a failing program the error.
* ``programs(...)`` — the strategy; ``ENSURABLE`` — what ``ensure=`` can require;
  ``FAILURE_KINDS`` — the failures ``failing=True`` plants.
* ``render(fn)`` — a listing of a function named by node keys (``Program``'s ``repr``).

Implementation notes
--------------------
The generator (``_gen.Gen``) keeps a pool of typed values (``_gen.Val``) per scope: the
function body, then one scope per enclosing loop body. Each construct is one small
function (``_constructs`` for the op groups, ``_constructs_v2`` for catalogue v2's,
``_structure`` for tuples, calls and loops, ``_layouts`` for laid-out parameters,
``reshard`` and ``local``, ``_weights`` for ``ConstTensor``s, ``_handler_calls`` for the
plain-handler ops of ``handlers``) that draws its operands from the pool — or makes a
fresh parameter of exactly the type it needs (``_operands``) — builds the node with the
``tfexec.ops`` builders, and asks the op's own type rule for the result type, so the
pool's types (layouts included) are the types ``infer_types`` computes (the strategy
asserts it at the end). What the type rules cannot see is kept true by construction: slice
windows and ``take``/``gather`` indices are in range for the drawn sizes (loop-computed
slice starts are ``dim_*`` arithmetic on the induction variable, bounded by the trip count
or reduced ``dim_mod`` the window's room), ``log``/``sqrt``/``rsqrt`` read
``abs(x) + 0.5``, an integer ``pow`` never has a negative Python-scalar exponent,
``dim_floordiv``/``dim_mod`` divide by a positive constant, a float→int ``cast`` reads a
bounded value, a loop without carries runs at least once, and every size is ≥ 1. ``local``
reads only values that are not split over the mesh, and a ``Split`` axis is one whose size
the mesh axis divides in every run (inside a callee, only a mesh axis of size 1 splits the
callee's own dims). A carry's yield is resharded back to the carry's layout, a callee
argument to its parameter's. Every weight the program reads is declared by its module with
the node's type and has data of that type (inside a callee its shape is static). An input
that needs casting (another dtype, a Python list or scalar) holds values the cast keeps in
range (indices stay indices). Inside a callee the sizes of its own ``DimVar`` are unknown
(each call binds them afresh), so windows along those axes are whole and indices along
them come from ``arange`` (``gather``'s from ``argmax``/``argsort``). Every value nothing
reads becomes an output (and at least one output has a node key), so every generated node
is compared. With ``failing=True`` exactly one construct breaks one of these rules
(``_failures``), at the entry's top level, so it runs.
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import torch
from hypothesis import strategies as st
from hypothesis.vendor.pretty import RepresentationPrinter

from tfexec.infer import infer_types
from tfexec.ir.dims import DimVar
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Function
from tfexec.ir.module import IRModule
from tfexec.ir.types import TensorType, TupleType
from tfexec.loading import LoadedModule
from tfexec.testing._failures import FAILURE_KINDS, plant_failure
from tfexec.testing._gen import CAST_SOURCES, Config, Gen, Weights
from tfexec.testing._operands import initial_params
from tfexec.testing._render import render
from tfexec.testing._structure import ENSURED_CONSTRUCTS, ensure, step

__all__ = ["ENSURABLE", "FAILURE_KINDS", "Program", "programs", "render"]

ENSURABLE = ("layouts", "weights", "handlers", "cast_inputs", "v2_ops", "boundaries")
"""The constructs ``programs(ensure=...)`` can require of every program."""


@dataclass(frozen=True, eq=False)
class Program:
    """A well-typed function and inputs it evaluates on without error (or, drawn with
    ``failing=True``, fails on with ``error`` in the message).

    ``inputs`` are positional (per tensor parameter a tensor — or, with ``cast_inputs``, a
    tensor of another dtype, a Python list or scalar; per tuple parameter a tuple or list of
    those); ``dims`` are the concrete sizes the inputs give the function's ``DimVar``s.
    ``weights`` are the data of the function's ``ConstTensor``s and ``module`` the
    ``LoadedModule`` supplying them (None without weights); run ``target``, which is the
    module when there is one and the function otherwise.
    """

    function: Function
    inputs: tuple[object, ...]
    dims: Mapping[str, int] = field(default_factory=dict)
    weights: Mapping[str, torch.Tensor] = field(default_factory=dict)
    module: LoadedModule | None = None
    error: str | None = None
    """A fragment of the ``EvalError`` message every run raises (``failing=True``), else None."""
    failure: str | None = None
    """The kind of failure planted (one of ``FAILURE_KINDS``: ``"take out of range"``, ...), else None."""

    @property
    def target(self) -> "Function | LoadedModule":
        """What to run: the loaded module (its entry is ``function``) when the program has weights."""
        return self.module if self.module is not None else self.function

    def __repr__(self) -> str:
        dims = ", ".join(f"{k}={v}" for k, v in sorted(self.dims.items())) or "none"
        inputs = "\n".join(f"  {p.name} = {_input_text(x)}" for p, x in zip(self.function.params, self.inputs))
        weights = "".join(f"\n  {name} = {_input_text(w)}" for name, w in self.weights.items())
        fails = f"\nfails ({self.failure}) with: {self.error}" if self.error is not None else ""
        return f"Program(dims: {dims})\n{render(self.function)}\ninputs:\n{inputs}" + (
            f"\nweights:{weights}" if weights else "") + fails

    def _repr_pretty_(self, printer: RepresentationPrinter, cycle: bool) -> None:
        """How hypothesis shows a falsifying example: the listing, not the dataclass fields."""
        printer.text(repr(self))


def _input_text(x: object) -> str:
    """An input as the failure report shows it: dtype, shape and values (a list or scalar as written)."""
    if isinstance(x, torch.Tensor):
        return f"{str(x.dtype).removeprefix('torch.')}{list(x.shape)} {x.tolist()}"
    if isinstance(x, tuple):
        return "(" + ", ".join(_input_text(f) for f in x) + ")"
    if isinstance(x, list) and any(isinstance(f, torch.Tensor) for f in x):
        return "[" + ", ".join(_input_text(f) for f in x) + "]"
    return f"Python {x!r}"


def programs(
    *, max_ops: int = 8, loops: bool = True, calls: bool = True, tuples: bool = True, dim_vars: bool = True,
    names: bool = True, weak_values: bool = False, layouts: bool = True, weights: bool = True,
    handlers: bool = True, cast_inputs: bool = True, failing: bool = False, ensure: Collection[str] = (),
    v2_ops: bool = True, ops: Collection[str] | None = None, dtypes: Collection[DType] = (), max_size: int = 6,
) -> "st.SearchStrategy[Program]":
    """Random well-typed programs with matching inputs.

    Args:
        max_ops: at most this many top-level constructs (a loop or a call counts once;
            loop bodies and callees draw a few more of their own).
        loops: include ``GridRegionExpr`` loops (no, one or several carries; nested; tiled
            slices whose starts are computed from the induction variable).
        calls: include calls of small callee functions with their own ``DimVar``.
        tuples: include ``Tuple``/``TupleGetItem`` nodes and tuple-typed parameters.
        dim_vars: give parameters symbolic sizes (``DimVar``s bound by the inputs).
        names: give some nodes a binding name (node keys then use it, duplicates included).
        weak_values: also put weak Python-scalar constants in the pool, so that they flow
            through tuples, calls and loops, not only straight into an op.
        layouts: declare some parameters (entry, callee, tuple fields, weights) with a
            ``Layout`` or ``ShardLayout`` (split ones too), and draw ``reshard`` to a layout
            and ``local`` of values that are not split.
        weights: draw ``ConstTensor`` weights (some names referenced twice); such a program
            runs as a ``LoadedModule`` (``Program.target``).
        handlers: draw calls of the plain-handler test ops of ``tfexec.testing.handlers``.
        cast_inputs: now and then give an input in another dtype than its parameter's, or as
            a Python list or scalar (a tuple parameter's as a list).
        v2_ops: draw ops catalogue v2 added (``linear``, ``cumsum``/``cumprod``, ``clamp``,
            the rounding ops, ``tril``/``triu``, ``gather``, ``any``/``all``, the logical,
            bitwise and integer-division ops, ``conv`` and the pools; ``_constructs_v2``),
            as one op construct among the v1 ones.
        ops: the op names (text spelling: ``gelu``, ``slice``, ``dim_add``) programs may call;
            None for every op. A construct that needs another op is not drawn (a loop's slice
            starts need the ``dim_*`` ops, a carry of another dtype ``cast``), so a small set
            gives small programs; one that lets nothing be drawn makes the strategy fail.
        dtypes: the dtypes drawn for new parameters and values (default f32, i64, b1, i32);
            constructs that need a particular dtype (an index, a comparison's b1) still use it.
        max_size: the largest axis size (and ``DimVar`` size) drawn, 6 by default; above 6
            some axes get a size between 7 and ``max_size``.
        failing: plant one node that fails at run time (``Program.error``; see
            ``tfexec.testing._failures``): every program drawn then fails.
        ensure: constructs each program must contain, among ``ENSURABLE`` (each must also
            be switched on); ``"boundaries"`` is one of ``_boundary``'s: an index value given
            to a handler or a callee, an outer ``dim_*`` value read by a tensor kernel in a
            loop, equal-valued weak constants of different dtypes read as tensors.
    """
    if max_ops < 1:
        raise ValueError(f"programs: max_ops must be at least 1, got {max_ops}")
    switches = {
        "layouts": layouts, "weights": weights, "handlers": handlers, "cast_inputs": cast_inputs, "v2_ops": v2_ops,
        "boundaries": True,  # each boundary construct returns None where its own switch is off
    }
    if isinstance(ensure, str):
        raise ValueError(f"programs: ensure takes a tuple of names, e.g. ensure=({ensure!r},)")
    for name in ensure:
        if name not in switches:
            raise ValueError(f"programs: cannot ensure {name!r}; choose among {', '.join(ENSURABLE)}")
        if not switches[name]:
            raise ValueError(f"programs: ensure={name!r} needs {name}=True")
    if max_size < 1:
        raise ValueError(f"programs: max_size must be at least 1, got {max_size}")
    if isinstance(ops, str):
        raise ValueError(f"programs: ops takes a collection of op names, e.g. ops=({ops!r},)")
    if ops is not None:
        from tfexec.ir.ops.catalogue import OPS_BY_NAME

        unknown = sorted(set(ops) - set(OPS_BY_NAME))
        if unknown:
            raise ValueError(f"programs: unknown op name(s) {', '.join(unknown)}; see docs/ops.md for the names")
    for d in dtypes:
        if not isinstance(d, DType):
            raise ValueError(f"programs: dtypes takes DType values (tfexec.f32, ...), got {d!r}")
    config = Config(
        max_ops, loops, calls, tuples, dim_vars, names, weak_values, layouts, weights, handlers, cast_inputs, failing,
        frozenset(ensure), v2_ops=v2_ops, ops=None if ops is None else frozenset(ops), dtypes=tuple(dtypes),
        max_size=max_size,
    )
    return _programs(config)


@st.composite
def _programs(draw: st.DrawFn, config: Config) -> Program:
    """Draw the dims and their sizes, the parameters, then ``max_ops`` constructs at most
    (the ensured ones and a planted failure among them, at drawn positions); type-check
    the result and compare it with the types the generator tracked."""
    rng = torch.Generator().manual_seed(draw(st.integers(0, 2**32 - 1)))
    dim_names = draw(st.sampled_from(((), ("B",), ("B", "N")))) if config.dim_vars else ()
    known = {n: draw(st.integers(1, config.max_size)) for n in dim_names}
    g = Gen(draw, config, rng, known, tuple(DimVar(n) for n in dim_names), "f", Weights(rng))
    initial_params(g)
    n_steps = draw(st.integers(1, config.max_ops))
    extras = sorted(c for c in config.ensure if c in ENSURED_CONSTRUCTS) + (["failure"] if config.failing else [])
    at = {name: draw(st.integers(0, n_steps)) for name in extras}
    failure: tuple[str, str] | None = None
    for i in range(n_steps + 1):
        for name in (e for e in extras if at[e] == i):
            if name == "failure":
                failure = plant_failure(g)
            else:
                ensure(g, name, required=True)
        if i < n_steps:
            step(g)
    if "cast_inputs" in config.ensure:
        _ensure_a_cast_input(g)
    body, ret = g.result()
    fn = Function("f", tuple(g.params), body, ret if draw(st.booleans()) else None)
    infer_types(fn)  # every generated program is well typed ...
    for v in g.all_vals:  # ... and has the types the generator tracked
        assert v.expr.checked_type in (None, v.type), f"{render(fn)}\n{v.expr}: {v.expr.checked_type} != {v.type}"
    module = None
    if g.weights.types:
        declared = IRModule({"f": fn}, dict(g.weights.types), entry="f")
        module = LoadedModule.from_reading(declared, dict(g.weights.data))
    kind, error = failure if failure is not None else (None, None)
    return Program(fn, tuple(g.inputs), dict(known), dict(g.weights.data), module, error, kind)


def _ensure_a_cast_input(g: Gen) -> None:
    """Make one tensor input need casting, unless one already does."""
    def needs_cast(x: object, t: object) -> bool:
        if isinstance(x, torch.Tensor):
            return isinstance(t, TensorType) and x.dtype != t.dtype.torch
        if isinstance(x, (tuple, list)) and isinstance(t, TupleType):
            return any(needs_cast(f, ft) for f, ft in zip(x, t.fields))
        return True  # a list or a Python scalar

    if any(needs_cast(x, p.type) for x, p in zip(g.inputs, g.params)):
        return
    for i, (x, p) in enumerate(zip(g.inputs, g.params)):
        if isinstance(x, torch.Tensor):
            if g.draw(st.booleans()):
                g.inputs[i] = x.tolist()
            else:
                g.inputs[i] = x.to(g.draw(st.sampled_from([d for d in CAST_SOURCES if d.torch != x.dtype])).torch)
            return
