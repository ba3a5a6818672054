"""types §2: tensor and tuple types, layouts; their text spelling, value semantics and validation."""

import ast
import copy
import dataclasses

import pytest

from tfexec import (
    DimVar,
    DType,
    IRConstructionError,
    Layout,
    Mesh,
    Replicate,
    ShardLayout,
    Split,
    TensorType,
    TupleType,
    f32,
    i64,
)

B = DimVar("B")
MESH = Mesh((2, 4), ("x", "y"))
SHARD = ShardLayout(MESH, (Split(0), Replicate()))


@pytest.mark.parametrize(
    ("t", "text"),
    [
        (f32[B, 64], "f32[B, 64]"),
        (i64[()], "i64[()]"),
        (f32[4], "f32[4]"),
        (f32[B * 2, B // 32], "f32[B * 2, B // 32]"),
        (TupleType((f32[4], i64[()])), "(f32[4], i64[()])"),
        (TupleType((f32[4],)), "(f32[4],)"),
        (TupleType(()), "()"),
        (TupleType((TupleType((f32[1],)), i64[2])), "((f32[1],), i64[2])"),
        (f32[8].with_layout(Layout((2, 4))), "f32[8] @ Layout((2, 4))"),
        (f32[8].with_layout(Layout((8,))), "f32[8] @ Layout((8,))"),
        (f32[()].with_layout(Layout(())), "f32[()] @ Layout(())"),
        (
            f32[8, 4].with_layout(SHARD),
            "f32[8, 4] @ ShardLayout(Mesh((2, 4), ('x', 'y')), (Split(0), Replicate()))",
        ),
        (
            f32[8].with_layout(ShardLayout(Mesh((2,), ("x",)), (Split(0),), Layout((2, 2)))),
            "f32[8] @ ShardLayout(Mesh((2,), ('x',)), (Split(0),), Layout((2, 2)))",
        ),
    ],
)
def test_str_is_the_text_spelling_and_valid_python(t: TensorType | TupleType, text: str) -> None:
    assert str(t) == text
    ast.parse(text, mode="eval")


def test_short_spelling_equals_the_constructor() -> None:
    assert f32[B, 64] == TensorType((B, 64), DType.float32)
    assert f32[B, 64].layout is None
    assert i64[()] == TensorType((), DType.int64)


def test_types_are_value_equal_and_hashable() -> None:
    a = TensorType((DimVar("B"), 64), DType.float32, ShardLayout(Mesh((2, 4), ("x", "y")), (Split(0), Replicate())))
    b = f32[B, 64].with_layout(SHARD)
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != f32[B, 64]  # the layout is part of the type
    assert f32[4] != i64[4] and f32[4] != f32[4, 1]
    assert TupleType((f32[4], i64[()])) == TupleType((f32[4], i64[()]))
    assert len({f32[4], f32[4], TupleType((f32[4],)), TupleType((f32[4],))}) == 2
    assert copy.deepcopy(a) == a


@pytest.mark.parametrize(
    "value",
    [f32[4], TupleType((f32[4],)), Layout((2,)), MESH, SHARD, Split(1), Replicate()],
    ids=lambda v: type(v).__name__,
)
def test_types_are_frozen_and_slotted(value: object) -> None:
    assert not hasattr(value, "__dict__")
    for name in value.__slots__:  # type: ignore[attr-defined]
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, name, None)
    # a new attribute is refused too (CPython's frozen+slots dataclasses raise TypeError here)
    with pytest.raises((AttributeError, TypeError)):
        setattr(value, "extra", None)


def test_tensor_type_properties() -> None:
    assert f32[B, 64].rank == 2 and i64[()].rank == 0
    assert f32[3, 4].is_static and not f32[B, 4].is_static
    assert f32[4].with_layout(Layout((2, 2))).with_layout(None) == f32[4]


def test_tensor_type_validation() -> None:
    with pytest.raises(IRConstructionError, match=r"TensorType.shape must be a tuple of dims, got list \[4\]"):
        TensorType([4], DType.float32)  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"TensorType.shape entries must be int, DimVar or DimExpr, got 2.0"):
        TensorType((2.0,), DType.float32)  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"TensorType.shape entries .* got True"):
        TensorType((True,), DType.float32)
    with pytest.raises(IRConstructionError, match=r"TensorType.shape has a negative size -3 in \(4, -3\)"):
        TensorType((4, -3), DType.float32)
    with pytest.raises(IRConstructionError, match=r"TensorType.dtype must be a DType, got f32"):
        TensorType((4,), f32)  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"TensorType.layout must be a Layout, ShardLayout or None, got"):
        TensorType((4,), DType.float32, MESH)  # type: ignore[arg-type]


def test_tuple_type_validation() -> None:
    with pytest.raises(IRConstructionError, match=r"TupleType.fields must be a tuple of types"):
        TupleType([f32[4]])  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"TupleType.fields must be a tuple of types"):
        TupleType((f32[4], DType.float32))  # type: ignore[arg-type]


def test_mesh_validation() -> None:
    with pytest.raises(IRConstructionError, match=r"Mesh.shape must be a tuple of positive ints, got \(2, 0\)"):
        Mesh((2, 0), ("x", "y"))
    with pytest.raises(IRConstructionError, match=r"Mesh.shape must be a tuple of positive ints, got \[2\]"):
        Mesh([2], ("x",))  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"Mesh.shape must be a tuple of positive ints"):
        Mesh((True,), ("x",))
    with pytest.raises(IRConstructionError, match=r"Mesh.axis_names must be a tuple of str, got \('x', 1\)"):
        Mesh((2, 2), ("x", 1))  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"Mesh has 2 axes but 1 axis names"):
        Mesh((2, 2), ("x",))
    with pytest.raises(IRConstructionError, match=r"Mesh.axis_names must be distinct, got \('x', 'x'\)"):
        Mesh((2, 2), ("x", "x"))


def test_split_and_layout_validation() -> None:
    with pytest.raises(IRConstructionError, match=r"Split.tensor_axis must be an int, got '0'"):
        Split("0")  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"Split.tensor_axis must be an int, got True"):
        Split(True)
    assert Split(-1).tensor_axis == -1  # counts from the end, checked against a rank where used
    with pytest.raises(IRConstructionError, match=r"Layout.shape must be a tuple of dims"):
        Layout(8)  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"Layout.shape has a negative size"):
        Layout((2, -4))
    assert Layout((B, 4)).shape == (B, 4)


def test_shard_layout_validation() -> None:
    with pytest.raises(IRConstructionError, match=r"ShardLayout needs one attr per mesh axis: mesh has 2, got 1"):
        ShardLayout(MESH, (Split(0),))
    with pytest.raises(IRConstructionError, match=r"ShardLayout needs one attr per mesh axis: mesh has 2, got 3"):
        ShardLayout(MESH, (Split(0), Replicate(), Replicate()))
    with pytest.raises(IRConstructionError, match=r"ShardLayout.mesh must be a Mesh, got \(2, 4\)"):
        ShardLayout((2, 4), (Split(0), Replicate()))  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"ShardLayout.attrs must be a tuple of Replicate\(\)/Split\(axis\)"):
        ShardLayout(MESH, [Split(0), Replicate()])  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"ShardLayout.attrs must be a tuple"):
        ShardLayout(MESH, (Split(0), "replicate"))  # type: ignore[arg-type]
    with pytest.raises(IRConstructionError, match=r"ShardLayout.layout must be a Layout or None"):
        ShardLayout(MESH, (Split(0), Replicate()), SHARD)  # type: ignore[arg-type]
    assert SHARD.splits == ((0, Split(0)),)
    assert ShardLayout(MESH, (Replicate(), Split(1))).splits == ((1, Split(1)),)


def test_construction_errors_are_also_type_errors() -> None:
    with pytest.raises(TypeError):
        TensorType((4,), "f32")  # type: ignore[arg-type]
