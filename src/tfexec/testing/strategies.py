"""Hypothesis strategies for random well-typed HIR programs.

``programs()`` draws a ``Program``: a ``Function`` that passes ``infer_types`` together with
concrete inputs on which it evaluates without error. Property tests run such programs
through both evaluation routes and compare them (``check_equivalence``).

Main definitions
----------------
* ``Program`` — a function, its inputs, and the ``DimVar`` bindings the inputs imply.
* ``programs(...)`` — the strategy.
* ``render(fn)`` — a listing of a function named by node keys (``Program``'s ``repr``).

Implementation notes
--------------------
The generator (``_gen.Gen``) keeps a pool of typed values (``_gen.Val``) per scope: the
function body, then one scope per enclosing loop body. Each construct is one small
function (``_constructs`` for the op groups, ``_structure`` for tuples, calls and loops)
that draws its operands from the pool — or makes a fresh parameter of exactly the type it
needs (``_operands``) — builds the node with the ``tfexec.ops`` builders, and asks the op's
own type rule for the result type, so the pool's types are the types ``infer_types``
computes (the strategy asserts it at the end). What the type rules cannot see is kept true
by construction: slice windows and ``take`` indices are in range for the drawn sizes
(loop-computed slice starts are ``dim_*`` arithmetic on the induction variable, bounded by
the trip count or reduced ``dim_mod`` the window's room), ``log``/``sqrt``/``rsqrt`` read
``abs(x) + 0.5``, an integer ``pow`` never has a negative Python-scalar exponent,
``dim_floordiv``/``dim_mod`` divide by a positive constant, a float→int ``cast`` reads a
bounded value, a loop without carries runs at least once, and every size is ≥ 1. Inside
a callee the sizes of its own ``DimVar`` are unknown (each call binds them afresh), so
windows along those axes are whole and indices along them come from ``arange``. Every
value nothing reads becomes an output, so every generated node is compared.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

import torch
from hypothesis import strategies as st
from hypothesis.vendor.pretty import RepresentationPrinter

from tfexec.infer import infer_types
from tfexec.ir.dims import DimVar
from tfexec.ir.expr import Function
from tfexec.testing._gen import Config, Gen
from tfexec.testing._operands import initial_params
from tfexec.testing._render import render
from tfexec.testing._structure import step

__all__ = ["Program", "programs", "render"]


@dataclass(frozen=True, eq=False)
class Program:
    """A well-typed function and inputs it evaluates on without error.

    ``inputs`` are positional (a tensor per tensor parameter, a tuple of tensors per tuple
    parameter); ``dims`` are the concrete sizes the inputs give the function's ``DimVar``s.
    """

    function: Function
    inputs: tuple[object, ...]
    dims: Mapping[str, int] = field(default_factory=dict)

    def __repr__(self) -> str:
        dims = ", ".join(f"{k}={v}" for k, v in sorted(self.dims.items())) or "none"
        inputs = "\n".join(f"  {p.name} = {_input_text(x)}" for p, x in zip(self.function.params, self.inputs))
        return f"Program(dims: {dims})\n{render(self.function)}\ninputs:\n{inputs}"

    def _repr_pretty_(self, printer: RepresentationPrinter, cycle: bool) -> None:
        """How hypothesis shows a falsifying example: the listing, not the dataclass fields."""
        printer.text(repr(self))


def _input_text(x: object) -> str:
    """An input as the failure report shows it: dtype, shape and values."""
    if isinstance(x, torch.Tensor):
        return f"{str(x.dtype).removeprefix('torch.')}{list(x.shape)} {x.tolist()}"
    assert isinstance(x, tuple)
    return "(" + ", ".join(_input_text(f) for f in x) + ")"


def programs(
    *, max_ops: int = 8, loops: bool = True, calls: bool = True, tuples: bool = True, dim_vars: bool = True,
    names: bool = True, weak_values: bool = False,
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
    """
    if max_ops < 1:
        raise ValueError(f"programs: max_ops must be at least 1, got {max_ops}")
    return _programs(Config(max_ops, loops, calls, tuples, dim_vars, names, weak_values))


@st.composite
def _programs(draw: st.DrawFn, config: Config) -> Program:
    """Draw the dims and their sizes, the parameters, then ``max_ops`` constructs at most;
    type-check the result and compare it with the types the generator tracked."""
    rng = torch.Generator().manual_seed(draw(st.integers(0, 2**32 - 1)))
    dim_names = draw(st.sampled_from(((), ("B",), ("B", "N")))) if config.dim_vars else ()
    known = {n: draw(st.integers(1, 6)) for n in dim_names}
    g = Gen(draw, config, rng, known, tuple(DimVar(n) for n in dim_names), "f")
    initial_params(g)
    for _ in range(draw(st.integers(1, config.max_ops))):
        step(g)
    body, ret = g.result()
    fn = Function("f", tuple(g.params), body, ret if draw(st.booleans()) else None)
    infer_types(fn)  # every generated program is well typed ...
    for v in g.all_vals:  # ... and has the types the generator tracked
        assert v.expr.checked_type in (None, v.type), f"{render(fn)}\n{v.expr}: {v.expr.checked_type} != {v.type}"
    return Program(fn, tuple(g.inputs), dict(known))
