"""Constructs at the boundaries a mutation campaign of the lowering found untested (issue #28):
where host-int index values meet code that takes tensors, and where equal Python values must
stay distinct constants.

* ``index_to_handler`` — a plain handler (``testing_pass``/``testing_probe``) given an index
  value (a loop index or a ``dim_*`` result, held as a host int by the lowering);
* ``outer_index_read`` — inside a loop, a tensor-only kernel reading a ``dim_*`` value made
  outside it (a frontier value the body receives as a host int);
* ``weak_twins`` — equal-valued weak constants of different dtypes (``1``, ``1.0``, ``True``)
  read as tensors, as tuple fields of the result;
* ``index_call`` — a callee given an index value (and a tuple) as arguments.

With ``ensure=("boundaries",)``, ``_structure`` also draws index-valued carries and a callee
last in a loop body (nothing after it); ``_operands`` nested tuple parameters.
"""

from hypothesis import strategies as st

from tfexec import ops
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Constant, Function, Tuple, TupleGetItem, Var
from tfexec.ir.types import TensorType, TupleType
from tfexec.testing._gen import I64_SCALAR, Gen, Val, ids
from tfexec.testing.handlers import PassThrough, Probe

_DIMS = {"dim_add": ops.dim_add, "dim_mul": ops.dim_mul, "dim_max": ops.dim_max}


def index_value(g: Gen, *, outer: bool = False) -> Val | None:
    """An index value of the pool: a loop index or a ``dim_*`` result (with ``outer``, one made
    outside the innermost loop), made afresh from one when there is none."""
    scopes = g.scopes[:-1] if outer else g.scopes
    found = [v for s in scopes for v in s if v.type == I64_SCALAR and v.bounded and _is_index(g, v)]
    reuse: bool = g.draw(st.booleans())
    if found and reuse:
        picked: Val = g.draw(st.sampled_from(found))
        return picked
    sources = [v.expr for s in scopes for v in s if v.type == I64_SCALAR and v.bounded]
    a: ops.Operand = g.draw(st.sampled_from(sources)) if sources else g.draw(st.integers(0, 3))
    name = g.draw(st.sampled_from(tuple(_DIMS)))
    made = g.emit(_DIMS[name](a, g.draw(st.integers(1, 3))), bounded=True)
    if made is None or not outer:
        return made
    g.scopes[-1].remove(made)  # made in the loop body, so it is not outer: put it in the enclosing pool
    g.scopes[-2].append(made)
    return made


def _is_index(g: Gen, v: Val) -> bool:
    """Whether ``v`` is an index value: an enclosing loop's index or a ``dim_*`` result."""
    expr = v.expr
    if isinstance(expr, Var):
        return any(expr is index for index, _ in g.indices)
    return isinstance(expr, Call) and getattr(expr.target, "name", "").startswith("dim_")


def index_to_handler(g: Gen) -> Val | None:
    """``testing_pass`` or ``testing_probe`` of an index value."""
    if not g.config.handlers:
        return None
    v = index_value(g)
    if v is None:
        return None
    op = PassThrough() if g.draw(st.booleans()) else Probe()
    return g.emit(ops.apply(op, v.expr), bounded=False)


def outer_index_read(g: Gen) -> Val | None:
    """In a loop body, a tensor kernel (``mul``/``add``/``cast``) on a ``dim_*`` value made outside it."""
    if len(g.scopes) < 2:
        return None
    v = index_value(g, outer=True)
    if v is None:
        return None
    kind = g.draw(st.sampled_from(("mul", "add", "cast")))
    if kind == "cast":
        return g.emit(ops.cast(v.expr, dtype=DType.float32), bounded=True)
    index: ops.Operand = g.indices[-1][0]
    other = index if kind == "add" else g.draw(st.sampled_from((2, 0.5)))
    return g.emit((ops.add if kind == "add" else ops.mul)(v.expr, other), bounded=False)


def weak_twins(g: Gen) -> Val | None:
    """Equal-valued weak constants of different dtypes, each read as a tensor (a tuple field of
    the result): one ``MakeConstant`` each, never one for all."""
    if not g.config.tuples:
        return None
    value = g.draw(st.sampled_from((1, 0)))
    twins = [Constant(value, TensorType((), DType.int64), weak=True), Constant(float(value), TensorType((), DType.float32), weak=True),
             Constant(bool(value), TensorType((), DType.bool), weak=True)]
    g.draw(st.randoms()).shuffle(twins)
    node = Tuple(tuple(twins))
    t = TupleType(tuple(c.type for c in twins))
    g.project(node, t, True)
    first = None
    for projection in g.scopes[-1][-len(twins):]:
        projection.computed = True  # unread: each ends up in the result, made as a tensor
        first = first or projection
    return first


def index_call(g: Gen, index: Val | None = None) -> Val | None:
    """A call of a small callee taking an index value (``index`` if given) and a (nested)
    tuple of pool values."""
    if not g.config.calls or g.is_callee:
        return None
    v = index if index is not None else index_value(g)
    x = g.pick(lambda w: w.type.dtype is DType.float32 and all(isinstance(d, int) for d in w.type.shape))
    if v is None or x is None:
        return None
    y = g.pick(lambda w: w.type == x.type) or x
    a = Var("a", I64_SCALAR)
    t_type = TupleType((TupleType((x.type, y.type)), x.type)) if g.draw(st.booleans()) else TupleType((x.type, y.type))
    t = Var("t", t_type)
    first = TupleGetItem(TupleGetItem(t, 0), 1) if isinstance(t_type.fields[0], TupleType) else TupleGetItem(t, 1)
    body = ops.add(first, ops.cast(a, dtype=DType.float32))
    callee = Function(f"gi{len(g.callees)}", (a, t), body)
    inner = Tuple((x.expr, y.expr))
    arg = Tuple((inner, x.expr)) if isinstance(t_type.fields[0], TupleType) else inner
    result = TensorType(x.type.shape, DType.float32)  # add's type rule: f32 + f32[()] broadcasts to x's shape
    g.used.update(ids([v.expr, x.expr, y.expr]))
    return g.add(Val(ops.call(callee, v.expr, arg), result, False))


BOUNDARY_CONSTRUCTS = (index_to_handler, outer_index_read, weak_twins, index_call)
"""What ``ensure=("boundaries",)`` draws from (each returns None where its switch is off)."""
