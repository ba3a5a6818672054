"""Type rules of the axis-bearing ops — ``reduce``, ``argmax``, ``softmax``, ``rms_norm``,
``layer_norm`` — checked against what torch produces on CPU, with negative axes,
keepdims, the hir.md decisions (``axes=None`` reduces all, ``axes=()`` is the identity,
zero-length axes) and the errors the rules raise."""


import pytest
import torch
import torch.nn.functional as F

from tfexec import DimVar, DType, TensorType, TypeInferenceError, ops
from tfexec.ir.ops.reduction import REDUCE_KINDS

from ir.op_helpers import DTYPES, infer, ones, rule_outcome, torch_outcome

B = DimVar("B")


def torch_reduce(kind: str, x: torch.Tensor, axes: tuple[int, ...] | None, keepdims: bool) -> torch.Tensor:
    """torch's reduction of ``kind`` over ``axes`` (None: all); ``prod`` one axis at a time."""
    if kind == "prod":
        if axes is None:
            return torch.prod(x)
        for a in sorted((a % x.dim() for a in axes), reverse=True):
            x = torch.prod(x, dim=a, keepdim=keepdims)
        return x
    fn = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}[kind]
    return fn(x) if axes is None else fn(x, dim=axes, keepdim=keepdims)


# -- reduce ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", REDUCE_KINDS)
@pytest.mark.parametrize(
    ("axes", "keepdims"),
    [((1,), False), ((-1,), True), ((0, 2), False), ((-3, -1), True), (None, False), ((2, 0, 1), False)],
)
def test_reduce_dtype_and_shape_match_torch(kind: str, axes: tuple[int, ...] | None, keepdims: bool) -> None:
    mismatches = []
    for dt in DTYPES:
        want = torch_outcome(lambda: torch_reduce(kind, ones((2, 3, 4), dt), axes, keepdims))
        got = rule_outcome(lambda x: ops.reduce(x, kind=kind, axes=axes, keepdims=keepdims), TensorType((2, 3, 4), dt))  # type: ignore[arg-type]
        if want != got:
            mismatches.append(f"reduce {kind} {dt} axes={axes} keepdims={keepdims}: torch {want}, rule {got}")
    assert not mismatches, "\n".join(mismatches)


def test_reduce_axes_none_reduces_every_axis_even_with_keepdims() -> None:
    t = TensorType((B, 3), DType.float32)
    assert infer(lambda x: ops.reduce(x, kind="sum"), t) == TensorType((), DType.float32)
    assert infer(lambda x: ops.reduce(x, kind="sum", keepdims=True), t) == TensorType((1, 1), DType.float32)
    assert infer(lambda x: ops.reduce(x, kind="sum"), TensorType((3,), DType.int32)) == TensorType((), DType.int64)


@pytest.mark.parametrize("kind", REDUCE_KINDS)
@pytest.mark.parametrize("dtype", [DType.int32, DType.bool, DType.float16], ids=str)
def test_reduce_empty_axes_is_the_identity(kind: str, dtype: DType) -> None:
    # torch.sum(x, dim=()) reduces everything; hir.md fixes axes=() as "reduce none": type unchanged
    t = TensorType((B, 3), dtype)
    assert infer(lambda x: ops.reduce(x, kind=kind, axes=()), t) == t  # type: ignore[arg-type]
    assert infer(lambda x: ops.reduce(x, kind=kind, axes=(), keepdims=True), t) == t  # type: ignore[arg-type]


def test_reduce_keeps_symbolic_dims() -> None:
    t = TensorType((B, 3, 4), DType.float32)
    assert infer(lambda x: ops.reduce(x, kind="max", axes=(1,)), t).shape == (B, 4)  # type: ignore[union-attr]
    assert infer(lambda x: ops.reduce(x, kind="mean", axes=(-1,), keepdims=True), t).shape == (B, 3, 1)  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", REDUCE_KINDS)
def test_reduce_over_a_zero_length_axis(kind: str) -> None:
    t = TensorType((0, 3), DType.float32)
    want = torch_outcome(lambda: torch_reduce(kind, ones((0, 3), DType.float32), (0,), False))
    if kind in ("max", "min"):
        assert want == "error"
        with pytest.raises(TypeInferenceError, match=rf"reduce {kind} over axis 0 of f32\[0, 3\] has no value: the axis has length 0"):
            infer(lambda x: ops.reduce(x, kind=kind, axes=(0,)), t)  # type: ignore[arg-type]
    else:
        assert rule_outcome(lambda x: ops.reduce(x, kind=kind, axes=(0,)), t) == want == (DType.float32, (3,))  # type: ignore[arg-type]
    # reducing only the non-empty axis leaves the empty one: no error for any kind
    assert infer(lambda x: ops.reduce(x, kind=kind, axes=(1,)), t) == TensorType((0,), DType.float32)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("axes", "message"),
    [
        ((2,), r"reduce: axis 2 is out of range for rank 2 \(valid: -2..1\)"),
        ((-3,), r"reduce: axis -3 is out of range for rank 2 \(valid: -2..1\)"),
        ((1, -1), r"reduce: axes \(1, -1\) name an axis twice"),
    ],
)
def test_reduce_axis_errors(axes: tuple[int, ...], message: str) -> None:
    with pytest.raises(TypeInferenceError, match=r"^reduce\(x0, kind=sum, .*\): " + message):
        infer(lambda x: ops.reduce(x, kind="sum", axes=axes), TensorType((2, 3), DType.float32))


def test_reduce_mean_of_integers_is_refused_as_torch_does() -> None:
    with pytest.raises(RuntimeError):
        torch.mean(torch.ones(3, dtype=torch.int32))
    with pytest.raises(TypeInferenceError, match=r"reduce mean needs a floating operand, found i32\[3\] \(cast it first\)"):
        infer(lambda x: ops.reduce(x, kind="mean"), TensorType((3,), DType.int32))


def test_reduce_of_a_rank0_value() -> None:
    # axes=None over rank 0 reduces nothing but still applies the reduction's dtype rule
    for kind in REDUCE_KINDS:
        for dt in (DType.int32, DType.float16, DType.bool):
            want = torch_outcome(lambda: torch_reduce(kind, ones((), dt), None, False))
            assert rule_outcome(lambda x: ops.reduce(x, kind=kind), TensorType((), dt)) == want, (kind, dt)  # type: ignore[arg-type]


# -- argmax ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("axis", "keepdims"), [(-1, False), (0, True), (1, False), (-2, True)])
def test_argmax_matches_torch(axis: int, keepdims: bool) -> None:
    mismatches = []
    for dt in DTYPES:
        want = torch_outcome(lambda: torch.argmax(ones((2, 3), dt), dim=axis, keepdim=keepdims))
        got = rule_outcome(lambda x: ops.argmax(x, axis=axis, keepdims=keepdims), TensorType((2, 3), dt))
        if want != got:
            mismatches.append(f"argmax {dt} axis={axis}: torch {want}, rule {got}")
    assert not mismatches, "\n".join(mismatches)


def test_argmax_errors() -> None:
    with pytest.raises(TypeInferenceError, match=r"argmax is not defined for bool \(torch rejects it\), found b1\[3\]"):
        infer(ops.argmax, TensorType((3,), DType.bool))
    with pytest.raises(TypeInferenceError, match=r"argmax over axis 1 of f32\[2, 0\] has no value"):
        infer(ops.argmax, TensorType((2, 0), DType.float32))
    with pytest.raises(TypeInferenceError, match=r"argmax: axis 2 is out of range for rank 2"):
        infer(lambda x: ops.argmax(x, axis=2), TensorType((2, 3), DType.float32))
    assert torch_outcome(lambda: torch.argmax(torch.ones(2, 0), dim=1)) == "error"


def test_rank0_has_no_axis_where_torch_wraps_one() -> None:
    # Kept stricter: torch lets dim 0/-1 name the single "axis" of a scalar; a rank-0 HIR value has no axes.
    assert torch_outcome(lambda: torch.argmax(torch.tensor(1.0), dim=0)) != "error"
    for build in (ops.argmax, ops.softmax, lambda x: ops.reduce(x, kind="sum", axes=(0,))):
        with pytest.raises(TypeInferenceError, match=r"is out of range for rank 0"):
            infer(build, TensorType((), DType.float32))


# -- softmax ------------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
def test_softmax_matches_torch(axis: int) -> None:
    for dt in DTYPES:
        want = torch_outcome(lambda: torch.softmax(ones((2, 3), dt), dim=axis))
        assert rule_outcome(lambda x: ops.softmax(x, axis=axis), TensorType((2, 3), dt)) == want, dt


def test_softmax_errors_say_expected_and_found() -> None:
    with pytest.raises(TypeInferenceError, match=r"softmax needs a floating operand, found i64\[2, 3\]"):
        infer(ops.softmax, TensorType((2, 3), DType.int64))
    with pytest.raises(TypeInferenceError, match=r"softmax: axis -3 is out of range for rank 2 \(valid: -2..1\)"):
        infer(lambda x: ops.softmax(x, axis=-3), TensorType((2, 3), DType.float32))


# -- rms_norm and layer_norm ---------------------------------------------------------------------


@pytest.mark.parametrize("with_weight", [False, True])
def test_rms_norm_matches_torch(with_weight: bool) -> None:
    for dt in DTYPES:
        x, w = TensorType((2, 3, 4), dt), TensorType((3, 4), dt)
        if with_weight:
            want = torch_outcome(lambda: F.rms_norm(ones((2, 3, 4), dt), [3, 4], ones((3, 4), dt)))
            got = rule_outcome(lambda a, b: ops.rms_norm(a, b, axes=(-2, -1)), x, w)
        else:
            want = torch_outcome(lambda: F.rms_norm(ones((2, 3, 4), dt), [3, 4]))
            got = rule_outcome(lambda a: ops.rms_norm(a, axes=(1, 2)), x)
        assert got == want, dt


@pytest.mark.parametrize("operands", [1, 2, 3])
def test_layer_norm_matches_torch(operands: int) -> None:
    for dt in DTYPES:
        types = [TensorType((2, 3, 4), dt), TensorType((3, 4), dt), TensorType((3, 4), dt)][:operands]
        tensors = [ones((2, 3, 4), dt), ones((3, 4), dt), ones((3, 4), dt)][:operands]
        want = torch_outcome(lambda: F.layer_norm(tensors[0], [3, 4], *tensors[1:]))
        got = rule_outcome(lambda *xs: ops.layer_norm(*xs, axes=(-2, -1)), *types)
        assert got == want, dt


def test_norms_keep_symbolic_shapes() -> None:
    t = TensorType((B, 8), DType.bfloat16)
    assert infer(ops.rms_norm, t) == t
    assert infer(lambda x, w, b: ops.layer_norm(x, w, b), t, TensorType((8,), DType.bfloat16), TensorType((8,), DType.bfloat16)) == t


@pytest.mark.parametrize("name", ["rms_norm", "layer_norm"])
def test_norm_errors_say_expected_and_found(name: str) -> None:
    build = getattr(ops, name)
    x = TensorType((2, 3, 4), DType.float32)
    with pytest.raises(TypeInferenceError, match=rf"{name} needs a floating operand, found i32\[2, 3, 4\]"):
        infer(build, TensorType((2, 3, 4), DType.int32))
    with pytest.raises(TypeInferenceError, match=rf"{name} normalises trailing axes; axes \(0,\) of rank 3 are not the last 1"):
        infer(lambda a: build(a, axes=(0,)), x)
    with pytest.raises(TypeInferenceError, match=rf"{name} normalises trailing axes; axes \(0, 2\)"):
        infer(lambda a: build(a, axes=(0, 2)), x)
    with pytest.raises(TypeInferenceError, match=rf"{name}: axis 3 is out of range for rank 3"):
        infer(lambda a: build(a, axes=(3,)), x)
    with pytest.raises(TypeInferenceError, match=rf"{name} weight must be f32\[4\] \(the normalised axes\), found f32\[3, 4\]"):
        infer(build, x, TensorType((3, 4), DType.float32))
    # mixed dtypes: torch accepts some (with a warning for rms_norm); the rule asks for one dtype
    with pytest.raises(TypeInferenceError, match=rf"{name} weight must be f16\[4\] \(the normalised axes\), found f32\[4\]"):
        infer(build, TensorType((2, 4), DType.float16), TensorType((4,), DType.float32))


def test_layer_norm_bias_must_match_too() -> None:
    x, w = TensorType((2, 4), DType.float32), TensorType((4,), DType.float32)
    with pytest.raises(TypeInferenceError, match=r"layer_norm bias must be f32\[4\] \(the normalised axes\), found f32\[2\]"):
        infer(ops.layer_norm, x, w, TensorType((2,), DType.float32))
