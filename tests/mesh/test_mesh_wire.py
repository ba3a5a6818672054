"""The mesh evaluator without launching a mesh: the wire form of programs, the checks the
caller makes before any process starts, placements, coordinates, and the
single-participant refusal of ``local`` that points here."""

import math
from dataclasses import dataclass
from typing import ClassVar

import pytest
import torch
from torch.distributed.tensor import Replicate as DReplicate
from torch.distributed.tensor import Shard as DShard

import tfexec
import tfexec.mesh
from tfexec import (
    Call,
    Constant,
    DimVar,
    DType,
    EvalError,
    EvaluateContext,
    Function,
    Layout,
    Mesh,
    Op,
    Replicate,
    ShardLayout,
    Split,
    TensorType,
    Value,
    Var,
    describe_expr,
    evaluate,
    evaluate_mesh,
    f32,
    register_eval,
)
from tfexec import ops as hir
from tfexec.mesh import MeshJob, MeshOutcome, MeshResult, coordinate, evaluate_mesh_batch
from tfexec.mesh._layouts import uneven_split
from tfexec.mesh._rules import placements
from tfexec.mesh._wire import WireError, decode, encode

TP = Mesh((2,), ("tp",))
S0 = ShardLayout(TP, (Split(0),))


@dataclass(frozen=True, slots=True)
class Attrs(Op):
    """The identity, with attributes of every kind the wire form carries."""

    name: ClassVar[str] = "wire_attrs"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1
    floats: tuple[float, ...] = (0.1, math.inf, -math.inf)
    items: list[object] | None = None
    table: dict[str, object] | None = None
    dtype: DType = DType.bfloat16
    layout: ShardLayout | Layout | None = None


@register_eval(Attrs)
def _attrs(ctx: EvaluateContext) -> Value:
    return ctx.args[0]


PROGRAM = '''
def double(u: f32[N, 4]) -> f32[N, 4]:
    return mul(u, 2.0)

def main(x: f32[N, 4], w: f32[4, 4], pair: (f32[4], i64[()])) -> (f32[N, 4], f32[4]):
    acc0 = full(shape=(N, 4), value=0.0, dtype=f32)
    for k, acc in grid(3, acc0):
        step = add(acc, matmul(x, w))
        carry(step)
    first = pair[0]
    return (double(acc), add(first, constant([1.0, 2.0, 3.0, 4.0], dtype=f32)))
'''


def _program() -> Function:
    fn = tfexec.parse(PROGRAM, filename="wire.tf.py").functions["main"]
    tfexec.infer_types(fn)  # checked types travel too
    n = DimVar("N")
    attrs = Attrs(
        items=[1, True, "s", None, (n * 2, DimVar("M") // 3)],
        table={"nan": math.nan, "tt": TensorType((n, 4), DType.float32, S0)},
        layout=ShardLayout(Mesh((2, 2), ("a", "b")), (Split(-1), Replicate()), Layout((4,))),
    )
    body = fn.body
    assert isinstance(body, tfexec.Tuple)
    wrapped = Call(attrs, (body.fields[0],))
    return Function("main", fn.params, tfexec.Tuple((wrapped, body.fields[1], Constant(3, tfexec.i64[()], weak=True))))


def _inputs() -> tuple[object, ...]:
    return torch.randn(5, 4), torch.randn(4, 4), (torch.randn(4), 7)


def test_a_program_survives_the_wire_node_for_node() -> None:
    fn = _program()
    sent = encode(fn, "k/")
    back = decode(sent.records, lambda name: sent.tensors[name])
    assert len(back.nodes) == len(sent.nodes)
    for original, rebuilt in zip(sent.nodes, back.nodes):
        assert type(original) is type(rebuilt)
        assert describe_expr(original) == describe_expr(rebuilt)  # same spans, same structure
    assert encode(back.function, "k/").records == sent.records  # sharing and every field preserved
    assert any(isinstance(r, dict) and r.get("ct") is not None for r in sent.records)  # checked types travel
    assert any(isinstance(r, dict) and r.get("span") is not None for r in sent.records)
    assert set(sent.modules) == {__name__}  # the custom op's module; built-in ops need no import
    assert len(back.op_nodes) == sum(isinstance(n, Call) and isinstance(n.target, Op) for n in back.nodes)
    torch.manual_seed(0)
    inputs = _inputs()
    want, got = evaluate(fn, *inputs), evaluate(back.function, *inputs)
    assert isinstance(want, tuple) and isinstance(got, tuple)
    for a, b in zip(want, got):
        assert isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and torch.equal(a, b)


def test_the_meshes_a_program_names_are_found() -> None:
    sent = encode(_program(), "")
    assert {m for m, _ in sent.meshes} == {TP, Mesh((2, 2), ("a", "b"))}


def test_an_op_class_participants_cannot_import_is_refused() -> None:
    @dataclass(frozen=True, slots=True)
    class Hidden(Op):
        name: ClassVar[str] = "hidden"

    call = Call(Hidden(), ())
    with pytest.raises(WireError, match=r"op class .*Hidden is defined in .* inside a function; mesh participants are"):
        encode(Function("f", (), call), "")


def test_an_attribute_that_is_not_plain_data_is_refused() -> None:
    call = Call(Attrs(items=[object()]), (Var("x", f32[2]),))
    with pytest.raises(WireError, match=r"attribute items of Attrs: an object \(<object object at .*\) is not plain data"):
        encode(Function("f", (), call), "")


def test_a_constant_of_a_dtype_the_ir_lacks_is_refused() -> None:
    const = Constant(torch.zeros(2, dtype=torch.complex64), f32[2])
    with pytest.raises(WireError, match=r"cannot send this constant to the mesh participants: torch dtype torch.complex64"):
        encode(Function("f", (), hir.add(const, 1.0)), "")


# -- checks in the caller, before any process starts -------------------------------------------------------


def _split_fn() -> Function:
    x = Var("x", f32[DimVar("N"), 6] @ S0)
    return Function("f", (x,), hir.exp(x))


def test_inputs_are_bound_as_evaluate_binds_them() -> None:
    fn = _split_fn()
    with pytest.raises(EvalError) as single:
        evaluate(fn)
    with pytest.raises(EvalError) as mesh:
        evaluate_mesh(fn)
    assert str(mesh.value) == str(single.value)
    with pytest.raises(EvalError, match=r"f: parameter x \(input 0\): expected rank 2"):
        evaluate_mesh(fn, torch.zeros(3))


def test_an_input_that_does_not_split_evenly_is_refused() -> None:
    with pytest.raises(
        EvalError,
        match=r"^f: parameter x \(input 0\): axis 0 \(size 5\) does not split into 2 equal parts under ShardLayout",
    ):
        evaluate_mesh(_split_fn(), torch.zeros(5, 6))


def test_a_split_naming_no_axis_of_an_input_is_refused() -> None:
    x = Var("x", f32[4] @ ShardLayout(TP, (Split(1),)))
    with pytest.raises(EvalError, match=r"parameter x \(input 0\): Split\(1\) names no axis of a rank-1 value"):
        evaluate_mesh(Function("f", (x,), x), torch.zeros(4))


def test_the_mesh_comes_from_the_program_or_the_caller_and_must_agree() -> None:
    fn = _split_fn()
    with pytest.raises(EvalError, match=r"var x: .* names Mesh\(\(2,\), \('tp',\)\), but this mesh run is on Mesh\(\(4,\)"):
        evaluate_mesh(fn, torch.zeros(4, 6), mesh=Mesh((4,), ("tp",)))
    plain = Function("g", (Var("y", f32[4]),), hir.exp(Var("y", f32[4])))
    with pytest.raises(EvalError, match=r"no ShardLayout names a mesh, so there is no mesh to run on: pass mesh=Mesh"):
        evaluate_mesh(plain, torch.zeros(4))
    y = Var("y", f32[4])
    two = Function("h", (y,), hir.reshard(hir.reshard(y, layout=S0), layout=ShardLayout(Mesh((2,), ("dp",)), (Split(0),))))
    with pytest.raises(EvalError, match=r"names Mesh\(\(2,\), \('dp',\)\), but .* names Mesh\(\(2,\), \('tp',\)\); one mesh run"):
        evaluate_mesh(two, torch.zeros(4))
    with pytest.raises(EvalError, match=r"has 65 participants; a mesh run starts at most 64 processes"):
        evaluate_mesh(plain, torch.zeros(4), mesh=Mesh((65,), ("big",)))


def test_bad_arguments_are_refused() -> None:
    fn = _split_fn()
    with pytest.raises(ValueError, match=r"timeout must be a positive number of seconds, got 0"):
        evaluate_mesh(fn, torch.zeros(4, 6), timeout=0)
    with pytest.raises(ValueError, match=r"MeshJob.rounds must be a positive int, got 0"):
        evaluate_mesh_batch([MeshJob(fn, (torch.zeros(4, 6),), rounds=0)])
    with pytest.raises(TypeError, match=r"argument mesh must be Mesh \| None, got tuple"):
        evaluate_mesh(fn, torch.zeros(4, 6), mesh=(2,))  # type: ignore[call-overload]
    assert evaluate_mesh_batch([]) == []


def test_a_per_participant_result_needs_return_locals(monkeypatch: pytest.MonkeyPatch) -> None:
    x = Var("x", f32[4, 6] @ S0)
    call = hir.local(x)
    fn = Function("f", (x,), call)
    shards = (torch.zeros(2, 6), torch.ones(2, 6))
    result = MeshResult(TP, None, shards, (0.1,))

    def fake(jobs: list[MeshJob], **kwargs: object) -> list[MeshOutcome]:
        return [MeshOutcome(result, None)]

    monkeypatch.setattr(tfexec.mesh, "evaluate_mesh_batch", fake)
    with pytest.raises(EvalError, match=r"the result is a per-participant value .* pass return_locals=True") as info:
        evaluate_mesh(fn, torch.zeros(4, 6))
    assert str(info.value).startswith(describe_expr(call) + ": ")
    assert evaluate_mesh(fn, torch.zeros(4, 6), return_locals=True) is result


# -- placements and coordinates -----------------------------------------------------------------------------


def test_shard_layouts_map_onto_dtensor_placements() -> None:
    grid = Mesh((2, 3), ("dp", "tp"))
    assert placements(ShardLayout(grid, (Split(-1), Replicate())), 2) == [DShard(1), DReplicate()]
    assert placements(ShardLayout(grid, (Replicate(), Split(0))), 3) == [DReplicate(), DShard(0)]
    with pytest.raises(EvalError, match=r"Split\(2\) names no axis of a rank-2 value \(valid: -2..1\)"):
        placements(ShardLayout(grid, (Split(2), Replicate())), 2)
    nested = ShardLayout(grid, (Split(0), Split(0)))
    assert uneven_split(nested, (12, 1)) is None
    assert uneven_split(nested, (9, 1)) == f"axis 0 (size 9) does not split into 6 equal parts under {nested}"


def test_ranks_map_to_mesh_coordinates_row_major() -> None:
    grid = Mesh((2, 3), ("dp", "tp"))
    assert [coordinate(grid, r) for r in range(6)] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    locals_ = tuple(torch.full((1,), float(r)) for r in range(6))
    result = MeshResult(grid, None, locals_, ())
    assert result.coordinate(4) == (1, 1)
    assert torch.equal(result.local(1, 2), torch.tensor([5.0]))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"\(2, 0\) is not a coordinate of Mesh\(\(2, 3\)"):
        result.local(2, 0)
    with pytest.raises(ValueError, match=r"no local values: run with return_locals=True"):
        MeshResult(grid, torch.zeros(1), None, ()).local(0, 0)


def test_the_single_participant_refusal_points_to_the_mesh_evaluator() -> None:
    x = Var("x", f32[4, 6])
    call = hir.local(hir.reshard(x, layout=S0))
    with pytest.raises(EvalError) as info:
        evaluate(Function("f", (x,), call), torch.zeros(4, 6))
    message = str(info.value)
    assert message.startswith(describe_expr(call) + ": ")
    assert "one mesh participant" in message and "§6" in message and "tfexec.evaluate_mesh" in message
