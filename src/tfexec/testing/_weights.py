"""Module weights in ``programs()``: ``ConstTensor`` nodes, read from a ``LoadedModule``.

Every weight drawn is declared by the program's module with the node's type and given data
(``Gen.weights``); a program with weights runs as that module (``Program.target``). A name
is sometimes referenced again by another ``ConstTensor`` node (both read the one cached
tensor). Inside a callee a weight's shape is static: the module binds a weight's dims once,
a callee's own dims are bound per call.
"""

from hypothesis import strategies as st

from tfexec.ir.expr import ConstTensor
from tfexec.ir.types import TensorType
from tfexec.testing._gen import Gen, Val, draw_dtype, tensor_for
from tfexec.testing._layouts import laid_out


def weight(g: Gen) -> Val | None:
    """A ``ConstTensor``: a new weight, or another node naming one drawn before."""
    if not g.config.weights:
        return None
    known = [n for n, t in g.weights.types.items() if not g.is_callee or t.is_static]
    if known and g.draw(st.integers(0, 2)) == 0:
        name = g.draw(st.sampled_from(known))
        t = g.weights.types[name]
        return g.add(Val(ConstTensor(name, t), t, True))
    name = _new_name(g)
    shape = tuple(g.draw(st.integers(1, 4)) for _ in range(g.draw(st.integers(0, 2)))) if g.is_callee else g.shape()
    return _declared(g, name, laid_out(g, TensorType(shape, draw_dtype(g))))


def new_weight(g: Gen, t: TensorType) -> Val:
    """A ``ConstTensor`` of a new weight of type ``t`` (static inside a callee), declared and
    given data (``linear`` draws its weight matrix this way)."""
    assert not g.is_callee or t.is_static, f"a callee's weight must have a static shape, got {t}"
    return _declared(g, _new_name(g), t)


def _new_name(g: Gen) -> str:
    """A name for the next weight: ``w3``, sometimes a dotted, state_dict-style ``block.w3``."""
    n = len(g.weights.types)
    return f"block.w{n}" if g.draw(st.integers(0, 3)) == 0 else f"w{n}"


def _declared(g: Gen, name: str, t: TensorType) -> Val:
    """Declare weight ``name`` of type ``t``, give it data, and read it (a ``ConstTensor``)."""
    g.weights.types[name] = t
    g.weights.data[name] = tensor_for(g, t, None, None, rng=g.weights.rng)
    return g.add(Val(ConstTensor(name, t), t, True))
