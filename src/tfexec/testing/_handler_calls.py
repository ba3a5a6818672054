"""Calls of the test-only plain-handler ops (``tfexec.testing.handlers``) in ``programs()``.

Both routes call these through ``apply_handler``; the operands drawn are the ones a handler
contract is about: laid-out values, weak Python scalars, tuples (``testing_pass``), a weak
scalar read from ``.scalar`` (``testing_scale``), a tuple result (``testing_split``), and
the layout and dims a handler is told (``testing_probe``).
"""

from collections.abc import Callable

from hypothesis import strategies as st

from tfexec import ops
from tfexec.ir.dtypes import DType
from tfexec.ir.expr import Call, Function, Tuple
from tfexec.ir.ops.base import TypeRuleError
from tfexec.ir.types import TensorType, TupleType
from tfexec.testing._gen import SCALARS, Gen, Val, deep_ids
from tfexec.testing._layouts import draw_layout
from tfexec.testing.handlers import PassThrough, Probe, ScaleBy, SplitAt


def handler_call(g: Gen) -> Val | None:
    """A call of one of the handler ops on pool values (or Python scalars)."""
    if not g.config.handlers:
        return None
    kind = g.draw(st.sampled_from(("pass", "pass", "scale", "split", "probe", "probe")))
    if kind == "pass":
        return _pass(g)
    if kind == "scale":
        x = _laid_out_first(g, lambda v: v.type.dtype is not DType.bool)
        if x is None:
            return None
        s = g.pick(lambda v: v.type.rank == 0) if g.draw(st.integers(0, 3)) == 0 else None
        factor: ops.Operand = s.expr if s is not None else g.draw(st.sampled_from(SCALARS))
        return g.emit(ops.apply(ScaleBy(), x.expr, factor), bounded=x.bounded and (s is None or s.bounded))
    if kind == "split":
        x = g.pick(lambda v: v.type.rank >= 1 and isinstance(v.type.shape[0], int) and v.type.shape[0] >= 2)
        if x is None:
            return None
        n = x.type.shape[0]
        assert isinstance(n, int)
        return _emit_tuple(g, ops.apply(SplitAt(at=g.draw(st.integers(1, n - 1))), x.expr), x.bounded)
    return probe_call(g)


def probe_call(g: Gen) -> Val | None:
    """``testing_probe`` of a pool value (laid out, half the time): its value tells what the
    handler was told of the operand's layout and the scope's dims."""
    if not g.config.handlers:
        return None
    x = _laid_out_first(g, lambda v: v.type.dtype is not DType.bool)
    return None if x is None else g.emit(ops.apply(Probe(), x.expr), bounded=x.bounded)


def _laid_out_first(g: Gen, pred: Callable[[Val], bool] = lambda v: True) -> Val | None:
    """A pool value satisfying ``pred``; with ``layouts``, half the time one carrying a layout
    (resharded to one if the pool has none): what a handler is told of its operand's layout
    is what these calls test."""
    if not g.config.layouts or g.draw(st.booleans()):
        return g.pick(pred)
    v = g.pick(lambda v: pred(v) and v.type.layout is not None)
    if v is None:
        x = g.pick(pred)
        v = None if x is None else g.emit(ops.reshard(x.expr, layout=draw_layout(g, x.type)), bounded=x.bounded)
    return v


def _pass(g: Gen) -> Val | None:
    """``testing_pass`` of a pool value (laid out ones too), a weak Python scalar, or a tuple."""
    kind = g.draw(st.sampled_from(("value", "scalar", "tuple" if g.config.tuples else "value")))
    if kind == "scalar":
        return g.emit(ops.apply(PassThrough(), g.draw(st.sampled_from(SCALARS))), bounded=True)
    x = _laid_out_first(g)
    if x is None:
        return None
    if kind == "value":
        return g.emit(ops.apply(PassThrough(), x.expr), bounded=x.bounded)
    other = g.pick()
    fields = (x.expr, other.expr if other is not None else x.expr, g.draw(st.sampled_from(SCALARS)))
    return _emit_tuple(g, ops.apply(PassThrough(), Tuple(tuple(ops.as_expr(f) for f in fields))), False)


def _emit_tuple(g: Gen, call: Call, bounded: bool) -> Val | None:
    """Add a tuple-valued op call: its type from the op's type rule, its fields projected
    into the pool. Returns the last projection (None if the type rule refuses)."""
    assert not isinstance(call.target, Function)
    try:
        t = call.target.infer(tuple(g.operand(a) for a in call.args))
    except TypeRuleError:
        return None
    assert isinstance(t, TupleType) and all(isinstance(f, TensorType) for f in t.fields)
    call = g.named(call)
    g.used.update(deep_ids(list(call.args)))
    g.project(call, t, bounded)
    return g.scopes[-1][-1]
