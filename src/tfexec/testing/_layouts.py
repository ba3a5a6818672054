"""Layouts in ``programs()``: laid-out parameters, ``reshard`` and ``local``.

A value's layout is static (``StaticLayouts``) and part of its type, so the pool tracks it
like any other part of a type. ``local`` is drawn only on values whose layout is not a split
``ShardLayout`` (the single-participant evaluator refuses those: the failing-program mode
plants that refusal, ``_failures``).
"""

from hypothesis import strategies as st

from tfexec import ops
from tfexec.ir.dims import ShapeDim
from tfexec.ir.types import Layout, Mesh, Replicate, ShardLayout, Split, TensorType
from tfexec.testing._gen import Gen, Val, regroup

MESHES = (Mesh((2,), ("tp",)), Mesh((1, 2), ("dp", "tp")))
"""The meshes of drawn ``ShardLayout``s (a size-1 mesh axis splits any axis evenly)."""

AnyLayout = Layout | ShardLayout | None


def is_split(layout: AnyLayout) -> bool:
    """Whether ``layout`` splits an axis over the mesh (``local`` of such a value is refused)."""
    return isinstance(layout, ShardLayout) and bool(layout.splits)


def _splittable(g: Gen, shape: tuple[ShapeDim, ...], parts: int) -> list[int]:
    """The axes of ``shape`` a mesh axis of ``parts`` splits evenly in every run: the size is
    known (static, or a dim the inputs bind) and divisible. A callee's own dims vary per
    call, so only a mesh axis of size 1 splits those (the type rules check static sizes
    only, but inlining the callee would make them static)."""
    out = []
    for i, d in enumerate(shape):
        n = g.concrete(d)
        if (n is None and parts == 1) or (n is not None and n % parts == 0):
            out.append(i)
    return out


def split_layout(g: Gen, shape: tuple[ShapeDim, ...]) -> ShardLayout | None:
    """A ``ShardLayout`` splitting one axis of ``shape`` (None when no axis splits evenly)."""
    mesh = g.draw(st.sampled_from(MESHES))
    mesh_axis = g.draw(st.integers(0, len(mesh.shape) - 1))
    axes = _splittable(g, shape, mesh.shape[mesh_axis])
    if not axes:
        return None
    axis = g.draw(st.sampled_from(axes))
    if g.draw(st.booleans()):
        axis -= len(shape)  # a negative tensor axis names the same axis
    attrs = tuple(Split(axis) if i == mesh_axis else Replicate() for i in range(len(mesh.shape)))
    return ShardLayout(mesh, attrs)


def draw_layout(g: Gen, t: TensorType, *, split: bool = True) -> AnyLayout:
    """A layout for a value of type ``t``: a ``Layout`` regrouping its elements, a replicated
    ``ShardLayout`` (maybe with an inner ``Layout``), or — when ``split`` — one splitting an
    axis. Inside a callee, whose own dims are bound per call, only ``ShardLayout``s without
    an inner layout (a layout naming a callee dim could not be matched by a caller)."""
    kinds = ["replicated"] + ([] if g.is_callee else ["layout"]) + (["split"] if split else [])
    kind = g.draw(st.sampled_from(kinds))
    if kind == "split":
        found = split_layout(g, t.shape)
        if found is not None:
            return found
    if kind == "layout":
        return Layout(regroup(g, t.shape))
    mesh = g.draw(st.sampled_from(MESHES))
    inner = None if g.is_callee or g.draw(st.booleans()) else Layout(regroup(g, t.shape))
    return ShardLayout(mesh, tuple(Replicate() for _ in mesh.shape), inner)


def laid_out(g: Gen, t: TensorType) -> TensorType:
    """``t``, or — with ``layouts``, now and then — ``t`` with a drawn layout (for a new parameter)."""
    if not g.config.layouts or g.draw(st.integers(0, 3)) != 0:
        return t
    return t.with_layout(draw_layout(g, t))


def reshard(g: Gen) -> Val | None:
    """``reshard`` of a pool value to a drawn layout, or to none (removing the value's)."""
    if not g.config.layouts:
        return None
    x = g.pick()
    if x is None:
        return None
    layout = None if x.type.layout is not None and g.draw(st.booleans()) else draw_layout(g, x.type)
    return g.emit(ops.reshard(x.expr, layout=layout), bounded=x.bounded)


def local(g: Gen) -> Val | None:
    """``local`` of a value that is not split: its local view is the whole value (with a
    ``ShardLayout``'s inner layout). A value with no layout is resharded first, now and then."""
    if not g.config.layouts:
        return None
    x = g.pick(lambda v: not is_split(v.type.layout))
    if x is not None and x.type.layout is None and g.draw(st.booleans()):
        x = g.emit(ops.reshard(x.expr, layout=draw_layout(g, x.type, split=False)), bounded=x.bounded)
    if x is None:
        return None
    return g.emit(ops.local(x.expr), bounded=x.bounded)

