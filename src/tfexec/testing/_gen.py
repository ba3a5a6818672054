"""The generator behind ``programs()``: one function under construction and its value pool.

``Gen`` holds the function's parameters (and, for the entry function, their concrete
inputs), a pool of typed values (``Val``) per scope — the body, then one per enclosing loop
body — and the enclosing loops' induction variables. ``Gen.emit`` adds an op call typed by
the op's own type rule, so the pool's types are the ones ``infer_types`` computes.
"""

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from hypothesis import reject, strategies as st

from tfexec import ops
from tfexec.ir.dims import DimError, DimVar, ShapeDim, dim_expr, resolve_dim
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, ConstTensor, Expr, Function, Tuple, TupleGetItem, Var
from tfexec.ir.ops.base import Operand, TypeRuleError
from tfexec.ir.ops.promotion import broadcast_shapes
from tfexec.ir.span import Span
from tfexec.ir.types import TensorType, TupleType, Type
from tfexec.ir.weak import weak_source

I64_SCALAR = TensorType((), DType.int64)
SCALARS: tuple[bool | int | float, ...] = (1.0, 2, 0.5, -1, True, -1.5, 0, 0.1)
"""The Python scalars drawn as weak operands (0.1 is not a float32: an f64 operand tells
whether a route rounded it to one)."""
NAMES = ("h", "t", "acc")
"""Binding names given to some nodes (few, so that they repeat)."""


@dataclass(frozen=True, slots=True)
class Config:
    """What ``programs(...)`` was asked to generate."""

    max_ops: int
    loops: bool
    calls: bool
    tuples: bool
    dim_vars: bool
    names: bool
    weak_values: bool
    layouts: bool = False
    weights: bool = False
    handlers: bool = False
    cast_inputs: bool = False
    failing: bool = False
    ensure: frozenset[str] = frozenset()
    max_loop_depth: int = 2
    v2_ops: bool = True
    ops: frozenset[str] | None = None
    """The op names ``emit`` may add (None: every op); a construct needing another is refused."""
    dtypes: tuple[DType, ...] = ()
    """The dtypes ``draw_dtype`` draws from (empty: f32, i64, b1, i32)."""
    max_size: int = 6
    """The largest axis size drawn (and the largest size of a ``DimVar``)."""

    @property
    def boundaries(self) -> bool:
        """Whether to draw the boundary constructs (``ensure=("boundaries",)``): index-valued
        carries, a callee last in a loop body, besides ``_boundary``'s own."""
        return "boundaries" in self.ensure


@dataclass(eq=False, slots=True)
class Weights:
    """The module constants (``ConstTensor`` weights) drawn so far, shared by the entry
    function and its callees: each name's declared type and its data."""

    rng: torch.Generator
    types: dict[str, TensorType] = field(default_factory=dict)
    data: dict[str, torch.Tensor] = field(default_factory=dict)


@dataclass(eq=False, slots=True)
class Val:
    """A pool entry: a tensor-valued expression, its type, whether its values are known
    finite and small (safe to cast to an integer or to use in dim arithmetic), and whether
    it is computed (``False`` for parameters and their projections)."""

    expr: Expr
    type: TensorType
    bounded: bool
    computed: bool = True


@dataclass(eq=False, slots=True)
class Callee:
    """A generated callee: the function, its own ``DimVar`` and its result type."""

    function: Function
    dim: DimVar
    result: Type


class Gen:
    """One function under construction: its parameters (and, for the entry function, the
    concrete inputs), the scoped value pool, and the enclosing loops' induction variables."""

    def __init__(
        self, draw: st.DrawFn, config: Config, rng: torch.Generator | None, known: dict[str, int],
        dim_vars: tuple[DimVar, ...], name: str, weights: Weights,
    ) -> None:
        self.draw = draw
        self.config = config
        self.rng = rng  # None in a callee: its parameters get their values at the call sites
        self.weights = weights
        self.known = known
        self.dim_vars = dim_vars
        self.name = name
        self.params: list[Var] = []
        self.inputs: list[object] = []
        self.scopes: list[list[Val]] = [[]]
        self.indices: list[tuple[Var, int | None]] = []
        self.used: set[int] = set()
        self.all_vals: list[Val] = []
        self.callees: list[Callee] = []
        self.types: dict[int, Type] = {}
        self.counter = itertools.count()

    @property
    def is_callee(self) -> bool:
        """Whether this is a callee (its parameters get their values at the call sites)."""
        return self.rng is None

    # pool ---------------------------------------------------------------------------

    def add(self, v: Val, *, scope: int = -1) -> Val:
        """Put ``v`` in the pool of ``scope`` (the innermost by default)."""
        self.scopes[scope].append(v)
        self.all_vals.append(v)
        self.types[id(v.expr)] = v.type
        return v

    def type_of(self, expr: Expr) -> Type:
        """The type the generator gave ``expr`` (constants, variables and tuples read off the node)."""
        if isinstance(expr, (Constant, Var)):
            return expr.type
        if isinstance(expr, Tuple):
            return TupleType(tuple(self.type_of(f) for f in expr.fields))
        return self.types[id(expr)]

    def operand(self, expr: Expr) -> Operand:
        """What the op's type rule sees of ``expr`` (as ``infer_types`` builds it)."""
        source = weak_source(expr)  # weakness follows tuple fields and callee bodies, as for infer_types
        if source is not None:
            static = source.value if isinstance(source.value, int) and not isinstance(source.value, bool) else None
            return Operand(self.type_of(expr), True, static)
        if isinstance(expr, Constant):
            static = expr.value if isinstance(expr.value, int) and not isinstance(expr.value, bool) else None
            return Operand(expr.type, False, static)
        return Operand(self.type_of(expr))

    def pick(self, pred: Callable[[Val], bool] = lambda v: True) -> Val | None:
        """A pool value satisfying ``pred``, preferring the innermost loop body's values."""
        inner = [v for v in self.scopes[-1] if pred(v)]
        if inner and len(self.scopes) > 1 and self.draw(st.booleans()):
            return self.draw(st.sampled_from(inner))
        found = [v for scope in self.scopes for v in scope if pred(v)]
        return self.draw(st.sampled_from(found)) if found else None

    def concrete(self, dim: ShapeDim) -> int | None:
        """The size ``dim`` has in every run, or None (a callee's own dims vary per call)."""
        try:
            return resolve_dim(dim, self.known)
        except DimError:
            return None

    def size(self) -> ShapeDim:
        """An axis size: 1 to 6 (at most ``max_size``; above 6, sometimes a larger one) or
        one of this function's ``DimVar``s."""
        top = self.config.max_size
        sizes: tuple[ShapeDim, ...] = (*(n for n in (2, 3, 1, 4) if n <= top), *self.dim_vars,
                                       *(n for n in (5, 6) if n <= top))
        if top > 6 and self.draw(st.integers(0, 3)) == 0:
            return self.draw(st.integers(7, top))
        return self.draw(st.sampled_from(sizes))

    def shape(self, max_rank: int = 3) -> tuple[ShapeDim, ...]:
        """A shape of rank 0 to ``max_rank``."""
        return tuple(self.size() for _ in range(self.draw(st.integers(0, max_rank))))

    def fresh(self, t: TensorType, *, low: int | None = None, high: int | None = None) -> Val:
        """A new parameter of type ``t`` (and its concrete input, in ``[low, high)`` if given)."""
        var = Var(f"{'a' if self.is_callee else 'p'}{len(self.params)}", t)
        self.params.append(var)
        if self.rng is not None:
            self.inputs.append(input_for(self, tensor_for(self, t, low, high)))
        return self.add(Val(var, t, not self.is_callee, computed=False), scope=0)

    def op_name(self, names: Sequence[str]) -> str | None:
        """One of ``names`` (an op group's ops), among those ``programs(ops=...)`` allows;
        None when it allows none of them."""
        allowed = tuple(names) if self.config.ops is None else tuple(n for n in names if n in self.config.ops)
        return self.draw(st.sampled_from(allowed)) if allowed else None

    # nodes ----------------------------------------------------------------------------

    def emit(self, call: Call, *, bounded: bool) -> Val | None:
        """Add an op call to the pool, typed by its own type rule (None if it refuses)."""
        assert not isinstance(call.target, Function)
        if self.config.ops is not None and call.target.name not in self.config.ops:
            return None
        try:
            t = call.target.infer(tuple(self.operand(a) for a in call.args))
        except TypeRuleError:
            return None
        assert isinstance(t, TensorType)
        call = self.named(call)
        self.used.update(ids(call.args))
        return self.add(Val(call, t, bounded))

    def named(self, call: Call) -> Call:
        """Sometimes the same call with a binding name (names repeat, so keys get ``#n``)."""
        if not self.config.names or self.draw(st.integers(0, 3)) != 0:
            return call
        span = Span("<programs>", next(self.counter) + 1, 1, binding=self.draw(st.sampled_from(NAMES)))
        return Call(call.target, call.args, span=span)

    def result(self) -> tuple[Expr, Type]:
        """The function body: every computed value nothing reads (a tuple when several), and
        at least one with a node key (an op result), so that every program compares a node."""
        sinks = [v for v in self.scopes[0] if v.computed and id(v.expr) not in self.used]
        if not any(_has_a_key(v.expr) for v in sinks):  # none, or only weights (which have no key)
            base = self.pick() or self.fresh(TensorType(self.shape(), DType.float32))
            sink = self.emit(ops.add(base.expr, 1.0), bounded=False)
            if sink is None:  # ``add`` is not among the ops asked for: another program is drawn
                reject()
            assert sink is not None
            sinks = [v for v in sinks if v is not base] + [sink]
        if len(sinks) == 1:
            return sinks[0].expr, sinks[0].type
        if self.config.tuples and len(sinks) > 2 and self.draw(st.booleans()):  # a nested result tuple
            head, rest = sinks[0], sinks[1:]
            inner, inner_type = Tuple(tuple(v.expr for v in rest)), TupleType(tuple(v.type for v in rest))
            return Tuple((head.expr, inner)), TupleType((head.type, inner_type))
        return Tuple(tuple(v.expr for v in sinks)), TupleType(tuple(v.type for v in sinks))

    def project(self, expr: Expr, t: TupleType, bounded: bool) -> None:
        """Put every tensor field of a tuple-valued ``expr`` in the pool (nested tuples too)."""
        self.types[id(expr)] = t
        self.used.add(id(expr))
        for i, f in enumerate(t.fields):
            item = TupleGetItem(expr, i)
            if isinstance(f, TensorType):
                self.add(Val(item, f, bounded))
            else:
                self.project(item, f, bounded)


def _has_a_key(expr: Expr) -> bool:
    """Whether the value of ``expr`` is a node's that both tables key: not a weight, a
    parameter or a constant, nor such a value read back through a tuple built in the program."""
    while isinstance(expr, TupleGetItem) and isinstance(expr.tuple, Tuple):
        expr = expr.tuple.fields[expr.index]
    return not isinstance(expr, (ConstTensor, Constant, Var))


def deep_ids(exprs: Sequence[Expr]) -> set[int]:
    """The ids of ``exprs`` and of the fields of those that are tuples (slice starts)."""
    out: set[int] = set()
    for e in exprs:
        out.add(id(e))
        if isinstance(e, Tuple):
            out |= deep_ids(e.fields)
    return out


def tensor_for(
    g: Gen, t: TensorType, low: int | None, high: int | None, *, rng: torch.Generator | None = None
) -> torch.Tensor:
    """Concrete values for a parameter (or, drawn from ``rng``, a weight): multiples of 1/4
    in [-2, 2], ints in [-2, 2], or [low, high)."""
    shape = tuple(resolve_dim(d, g.known) for d in t.shape)
    gen = rng if rng is not None else g.rng
    if low is not None and high is not None:
        data = torch.randint(low, high, shape, generator=gen)
    elif t.dtype.is_floating:
        data = torch.randint(-8, 9, shape, generator=gen).to(torch.float32) / 4
    elif t.dtype is DType.bool:
        data = torch.randint(0, 2, shape, generator=gen).bool()
    else:
        data = torch.randint(-2, 3, shape, generator=gen)
    return data.to(t.dtype.torch)


CAST_SOURCES = (DType.float32, DType.float64, DType.int32, DType.int64, DType.int16, DType.bool)
"""The dtypes an input may come in when it needs casting to its parameter's dtype."""


def input_for(g: Gen, data: torch.Tensor) -> object:
    """The input a run is given for ``data``: usually ``data`` itself; with ``cast_inputs``,
    sometimes a Python list (or scalar) of it, or ``data`` in another dtype — both routes
    then bind the cast of that input (a float input of an integer parameter truncates)."""
    if not g.config.cast_inputs or g.draw(st.integers(0, 7)) != 0:
        return data
    if g.draw(st.booleans()):
        return data.tolist()
    return data.to(g.draw(st.sampled_from([d for d in CAST_SOURCES if d.torch != data.dtype])).torch)


def broadcast(*shapes: tuple[ShapeDim, ...]) -> tuple[ShapeDim, ...] | None:
    """The broadcast of ``shapes`` under the type rules, or None when they do not broadcast."""
    try:
        return broadcast_shapes("", *shapes)
    except TypeRuleError:
        return None


def draw_dtype(g: Gen) -> DType:
    """A dtype for a new parameter or value."""
    return g.draw(st.sampled_from(g.config.dtypes or (DType.float32, DType.int64, DType.bool, DType.int32)))


def scalar_for(g: Gen, dtype: DType) -> bool | int | float:
    """A ``full`` value that fits ``dtype``."""
    if dtype is DType.bool:
        return g.draw(st.booleans())
    if dtype.is_floating:
        return g.draw(st.sampled_from((0.0, 1.5, -2.0, 0.25)))
    return g.draw(st.sampled_from((0, 3, -1)))


def ids(exprs: Sequence[Expr]) -> set[int]:
    """The ids of ``exprs`` (the generator marks values read by adding them to ``Gen.used``)."""
    return {id(e) for e in exprs}


def _prime_factors(n: int) -> list[int]:
    """``n``'s prime factors, with multiplicity (none for 1)."""
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


def regroup(g: Gen, shape: tuple[ShapeDim, ...]) -> tuple[ShapeDim, ...]:
    """Another shape of as many elements: ``shape``'s factors (primes and symbolic dims)
    regrouped in any order, maybe with a size-1 axis inserted (``reshape``, ``Layout``)."""
    atoms: list[ShapeDim] = []
    for d in shape:
        atoms.extend(_prime_factors(d) if isinstance(d, int) else [d])
    atoms = list(g.draw(st.permutations(atoms)))
    out: list[ShapeDim] = []
    if atoms:
        groups = g.draw(st.integers(1, min(3, len(atoms))))
        cuts = sorted(g.draw(st.permutations(range(1, len(atoms))))[: groups - 1])
        for lo, hi in zip([0, *cuts], [*cuts, len(atoms)]):
            dim: ShapeDim = 1
            for atom in atoms[lo:hi]:
                dim = dim_expr("mul", dim, atom)
            out.append(dim)
    for _ in range(g.draw(st.integers(0, 1))):
        out.insert(g.draw(st.integers(0, len(out))), 1)
    return tuple(out)
