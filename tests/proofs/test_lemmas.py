"""One or more tests per lemma of proofs_notes/lemmas.md, each checking the lemma's claim
on both routes (the visitor and the lowered graph) rather than on one alone."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

import pytest
import torch

import tfexec
from tfexec import (
    ConstTensor,
    DimVar,
    DType,
    EvalError,
    EvaluateContext,
    Function,
    GridRegionExpr,
    IRModule,
    LoadedModule,
    Op,
    Span,
    TensorValue,
    Tuple,
    TupleGetItem,
    TupleType,
    TypeInferenceError,
    Value,
    Var,
    f32,
    f64,
    i64,
    ops,
    register_eval,
)
from tfexec.semantics.registry import Arg, eval_registry, lookup_value_rule
from tfexec.semantics.binding import bind_inputs
from tfexec.evaluator.visitor import evaluate_value
from tfexec.forward.kinds import EnterCall
from tfexec.forward.run import leaves
from tfexec.ir.expr import Call, Expr
from tfexec.ir.ops.base import Operand
from tfexec.ir.ops.catalogue import ALL_OPS
from tfexec.ir.types import Layout, TensorType, Type

from proofs import programs
from proofs.programs import COUNTS, assert_routes_agree, assert_same, bodies, counted
from shared_helpers import CountingReading, SameTypeOp

B, N = DimVar("B"), DimVar("N")


@pytest.fixture(autouse=True)
def _clean_counts() -> Iterator[None]:
    COUNTS.clear()
    yield
    COUNTS.clear()


def _span(binding: str) -> Span:
    return Span("proof.tf.py", 1, 1, binding, "")


def _iv(name: str = "k") -> Var:
    return Var(name, i64[()])


# -- the program using every construct (the theorem) ---------------------------------------


def everything() -> Function:
    """Params (a tuple one, a DimVar), weak and strong constants, op calls, tuples and
    projections, a callee called at three sites (one inside a loop), a multi-carry loop with
    a nested loop reading the outer index, and a hoisted invariant."""
    y = Var("y", f32[N])
    scale = Function("scale", (y,), ops.mul(y, ops.cast(ops.arange(extent=N), dtype=f32)))  # reads the callee's N
    x = Var("x", f32[B])
    pair = Var("pair", TupleType((f32[B], f32[()])))
    k, j = _iv("k"), _iv("j")
    acc, cnt = Var("acc", f32[B]), Var("cnt", f32[()])
    invariant = ops.exp(TupleGetItem(pair, 0))
    inner = GridRegionExpr(2, j, (), (), ops.cast(ops.add(k, j), dtype=f32), ())
    step = ops.add(acc, ops.call(scale, ops.add(invariant, inner)))
    count = ops.add(cnt, 1.0)
    loop = GridRegionExpr(3, k, (x, TupleGetItem(pair, 1)), (acc, cnt), Tuple((step, count)), (step, count))
    body = Tuple((TupleGetItem(loop, 0), ops.mul(TupleGetItem(loop, 1), 2), ops.call(scale, x), ops.call(scale, ops.neg(x))))
    return Function("everything", (x, pair), body)


def _everything_inputs() -> tuple[object, ...]:
    g = torch.Generator().manual_seed(1)
    return torch.randn(5, generator=g), (torch.randn(5, generator=g), torch.tensor(0.5))


@pytest.mark.parametrize("loops", ["collapse", "expand"])
def test_theorem_on_a_program_using_every_construct(loops: str) -> None:
    table = assert_routes_agree(everything(), *_everything_inputs(), loops=loops)
    assert len(table) > 10


def test_theorem_outputs_of_eval_run_and_evaluate_agree() -> None:
    fn, inputs = everything(), _everything_inputs()
    graph = tfexec.lower(fn)
    context = graph.eval(*inputs)
    from tfexec.forward.graph import read

    assert_same(tfexec.evaluate(fn, *inputs), read(graph.body.outputs, context))
    assert_same(tfexec.evaluate(fn, *inputs), graph.run(*inputs))


# -- the snoc invariant ----------------------------------------------------------------------


def test_every_nested_node_list_reads_only_earlier_slots() -> None:
    graph = tfexec.lower(everything())
    found = bodies(graph)
    assert len(found) == 3  # the graph, the outer loop body, the nested loop body
    for body in found:
        for index, node in enumerate(body.data.nodes):
            assert all(0 <= r.slot < body.data.n_inputs + index for r in node.reads), node


# -- key agreement ---------------------------------------------------------------------------


def test_keys_agree_for_nested_calls_inside_loops_expanded() -> None:
    p = Var("p", f32[2])
    leaf = Function("leaf", (p,), ops.neg(p, span=_span("h")))
    q, i, c = Var("q", f32[2]), _iv("i"), Var("c", f32[2])
    h = ops.call(leaf, ops.add(c, ops.cast(i, dtype=f32)), span=_span("h"))  # the name h, bound again below
    inner = GridRegionExpr(2, i, (q,), (c,), h, (h,), span=_span("h"))
    mid = Function("mid", (q,), ops.call(leaf, inner, span=_span("h")))
    x, k, acc = Var("x", f32[2]), _iv("k"), Var("acc", f32[2])
    once = ops.call(mid, acc, span=_span("h"))
    twice = ops.call(mid, once)
    outer = GridRegionExpr(3, k, (x,), (acc,), twice, (twice,), span=_span("out"))
    fn = Function("main", (x,), ops.call(mid, outer))
    table = assert_routes_agree(fn, torch.ones(2), loops="expand")
    assert "main/out[2]/mid#1/h[1]/leaf/h" in table  # callee paths, #n suffixes and iterations nest
    assert "main/mid/h#1" in table
    assert_routes_agree(fn, torch.ones(2), loops="collapse")


# -- parameters and DimVars --------------------------------------------------------------------


def test_parameters_bind_to_the_same_tensors_on_both_routes() -> None:
    x = Var("x", f32[B, 2])
    pair = Var("pair", TupleType((f32[B], i64[()])))
    fn = Function("f", (x, pair), Tuple((ops.add(x, 1.0), ops.mul(TupleGetItem(pair, 0), TupleGetItem(pair, 1)))))
    given = (torch.ones(3, 2), ([1, 2, 3], torch.tensor(4, dtype=torch.int32)))
    values, _, dims = bind_inputs(fn, given)  # what the direct route binds (evaluate_value calls it)
    assert dims == {"B": 3}
    x_value, pair_value = values
    assert isinstance(x_value, TensorValue) and isinstance(pair_value, tfexec.TupleValue)
    first, second = pair_value.elements
    assert isinstance(first, TensorValue) and isinstance(second, TensorValue)
    context = tfexec.lower(fn).eval(*given)
    assert context[0] is given[0] and x_value.data is given[0]  # already f32: bound as it is, on both routes
    bound = list(context[1])  # one slot per parameter: the tuple parameter's slot holds the tuple
    assert all(isinstance(t, torch.Tensor) for t in bound)
    assert_same(tuple(bound), (first.data, second.data))  # cast alike: f32 from a list, i64 from an i32 tensor
    assert second.data.dtype == torch.int64
    assert_routes_agree(fn, *given)


def test_parameter_layout_flows_to_a_callee_boundary_alike() -> None:
    lay = Layout((2, 2))
    y = Var("y", TensorType((4,), DType.float32, lay))
    g = Function("g", (y,), ops.neg(y))
    x = Var("x", TensorType((4,), DType.float32, lay))
    fn = Function("f", (x,), ops.call(g, ops.reshard(x, layout=lay)))
    assert_routes_agree(fn, torch.arange(4.0))


# -- constants --------------------------------------------------------------------------------


def test_weak_scalar_reaches_the_kernel_as_a_python_scalar_on_both_routes() -> None:
    x = Var("x", f64[3])
    fn = Function("f", (x,), ops.add(x, 0.1))  # 0.1 is a weak constant: torch's Python-scalar rule
    inp = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    want = torch.add(inp, 0.1)  # the double 0.1, not float32(0.1)
    assert not torch.equal(want, inp + torch.tensor(0.1, dtype=torch.float32))
    assert_same(tfexec.evaluate(fn, inp), want)
    assert_same(tfexec.lower(fn).run(inp), want)
    assert_routes_agree(fn, inp)


def test_strong_and_tensor_constants_materialise_alike() -> None:
    x = Var("x", f32[2, 2])
    strong = tfexec.Constant(3, i64[()])
    table = tfexec.Constant(torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64), f32[2, 2])
    fn = Function("f", (x,), ops.add(ops.mul(x, table), ops.cast(strong, dtype=f32)))
    assert_routes_agree(fn, torch.ones(2, 2))


# -- ConstTensor -------------------------------------------------------------------------------


def test_const_tensor_is_read_once_across_both_routes_and_is_the_same_tensor() -> None:
    w = ConstTensor("w", f32[3])
    y = Var("y", f32[3])
    g = Function("g", (y,), ops.mul(y, ConstTensor("w", f32[3])))  # another node naming the same constant
    x, k, acc = Var("x", f32[3]), _iv(), Var("acc", f32[3])
    seen = counted("seen", w, binding="seen")
    step = ops.add(acc, seen)  # seen is invariant: hoisted out of the loop
    loop = GridRegionExpr(4, k, (x,), (acc,), step, (step,))
    fn = Function("forward", (x,), Tuple((loop, ops.call(g, x), ops.call(g, loop))))
    reading = CountingReading({"w": torch.tensor([1.0, 2.0, 3.0])})
    loaded = LoadedModule.from_reading(IRModule({"forward": fn}, {"w": f32[3]}, entry="forward"), reading)
    table: dict[str, Value] = {}
    evaluate_value(loaded, (torch.ones(3),), table=table)
    lowered = tfexec.lower(loaded).denote_all(torch.ones(3))
    value = table["forward/seen"]  # the counted read of w
    assert isinstance(value, TensorValue)
    assert lowered["forward/seen"] is value.data  # the very tensor the visitor saw: a constant is a parameter read late
    assert tfexec.check_equivalence(loaded, torch.ones(3)).ok
    assert_same(tfexec.evaluate(loaded, torch.ones(3)), tfexec.lower(loaded).run(torch.ones(3)))
    assert reading.lookups == ["w"]  # read at most once, whichever route asks first
    assert COUNTS["seen"] == 6  # once per evaluation (six above, two inside check_equivalence), not per iteration


def test_a_weight_with_a_dim_only_the_module_declares_agrees_on_both_routes() -> None:
    """A weight's dims are bound by the module, not by the inputs: both routes accept it,
    in every checking mode, with equal values (the lowering's checks refuse nothing the
    visitor accepts)."""
    h = DimVar("H")
    x = Var("x", TensorType((h,), DType.float32))
    fn = Function("f", (x,), Tuple((ops.add(ConstTensor("w", f32[h]), x), ConstTensor("w", f32[h]))))
    module = IRModule({"f": fn}, {"w": f32[h]}, entry="f")
    loaded = LoadedModule.from_reading(module, {"w": torch.arange(4.0)})
    expected = tfexec.evaluate(loaded, torch.ones(4))
    for mode in ("off", "boundary", "full"):
        assert_same(tfexec.lower(loaded).run(torch.ones(4), check=mode), expected)  # type: ignore[arg-type]
    assert_routes_agree(loaded, torch.ones(4))  # type: ignore[arg-type]


# -- op calls: the same value rule --------------------------------------------------------------


def test_every_catalogue_op_has_a_value_rule_both_routes_apply() -> None:
    for cls in ALL_OPS:
        entry = eval_registry.lookup(cls)
        assert entry is not None and entry.value_rule is not None and entry.handler is None, cls.__name__
        assert lookup_value_rule(cls) is entry.value_rule, cls.__name__


_R = torch.Generator().manual_seed(3)


def _t(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    t = torch.rand(*shape, generator=_R) + 0.25
    return t.to(dtype)


_X, _Y, _C = Var("x", f32[3, 4]), Var("y", f32[4]), Var("c", tfexec.b1[3, 4])

_KERNEL_CASES: list[tuple[str, Call, tuple[torch.Tensor, ...]]] = [
    *[(name, getattr(ops, name)(_X, _Y), (_t(3, 4), _t(4))) for name in (
        "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge")],
    *[(name, getattr(ops, name)(_C, Var("d", tfexec.b1[3, 4])), (_t(3, 4) > 0.7, _t(3, 4) > 0.5)) for name in ("logical_and", "logical_or")],
    *[(name, getattr(ops, name)(_X), (_t(3, 4) - 0.6,)) for name in (
        "neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "silu", "erf", "sin", "cos")],
    ("gelu", ops.gelu(_X), (_t(3, 4),)),
    ("gelu_tanh", ops.gelu(_X, approximate="tanh"), (_t(3, 4),)),
    ("cast", ops.cast(_X, dtype=tfexec.f16), (_t(3, 4),)),
    ("where", ops.where(_C, _X, _Y), (_t(3, 4) > 0.7, _t(3, 4), _t(4))),
    ("matmul", ops.matmul(_X, Var("w", f32[4, 2])), (_t(3, 4), _t(4, 2))),
    ("linear", ops.linear(_X, Var("w", f32[2, 4]), Var("b", f32[2])), (_t(3, 4), _t(2, 4), _t(2))),
    ("histc", ops.histc(_X, bins=3, min=0.0, max=1.0), (_t(3, 4),)),
    ("softmax", ops.softmax(_X, axis=0), (_t(3, 4),)),
    ("rms_norm", ops.rms_norm(_X, _Y), (_t(3, 4), _t(4))),
    ("layer_norm", ops.layer_norm(_X, _Y, Var("z", f32[4])), (_t(3, 4), _t(4), _t(4))),
    ("reshape", ops.reshape(_X, shape=(4, 3)), (_t(3, 4),)),
    ("transpose", ops.transpose(_X, perm=(1, 0)), (_t(3, 4),)),
    ("broadcast_to", ops.broadcast_to(_Y, shape=(2, 4)), (_t(4),)),
    ("concat", ops.concat(_X, Var("u", f32[3, 4]), Var("v", f32[3, 4]), axis=1), (_t(3, 4), _t(3, 4), _t(3, 4))),
    ("take", ops.take(_X, Var("i", i64[2]), axis=1), (_t(3, 4), torch.tensor([3, 0]))),
    ("reshard", ops.reshard(_X, layout=None), (_t(3, 4),)),
    ("local", ops.local(_X), (_t(3, 4),)),
]


@pytest.mark.parametrize("call, operands", [(c, o) for _, c, o in _KERNEL_CASES], ids=[n for n, _, _ in _KERNEL_CASES])
def test_both_routes_compute_the_one_kernel_the_rule_picks(call: Call, operands: tuple[torch.Tensor, ...]) -> None:
    """One definition per op: the rule's kernel for tensor operands, called directly, is what
    the direct route dispatches and what the lowered node computes (the run loop calls that
    same function, without a frame of its own, when it needs no context)."""
    op = call.target
    assert isinstance(op, Op)
    rule = lookup_value_rule(type(op))
    assert rule is not None
    kernel = rule(op, tuple(Arg() for _ in operands))
    ctx = EvaluateContext(device=None, dim_bindings={})
    direct = kernel.fn(ctx, *operands) if kernel.needs_ctx else kernel.fn(*operands)
    params = tuple(a for a in call.args if isinstance(a, Var))
    fn = Function("k", params, call)
    assert_same(tfexec.evaluate(fn, *operands), direct)
    graph = tfexec.lower(fn)
    (node,) = graph.nodes
    fast = node.what.direct
    if kernel.needs_ctx:
        assert fast is None
    else:  # the same function (a fresh closure per call site: the same code)
        assert fast is kernel.fn or getattr(fast, "__code__", None) is getattr(kernel.fn, "__code__", 0)
    assert_same(graph.run(*operands), direct)


def _well_typed(fn: Function) -> bool:
    try:
        tfexec.infer_types(fn)
    except TypeInferenceError:
        return False
    return True


_UNARY = ("neg", "abs", "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "erf", "cos")
_BINARY = ("add", "sub", "div", "pow", "maximum", "eq", "logical_and")


def _sample(dtype: DType, shape: tuple[int, ...]) -> torch.Tensor:
    if dtype is DType.bool:
        return torch.tensor([True, False, True])[: shape[0]]
    return torch.tensor([1, 2, 3], dtype=dtype.torch)[: shape[0]]


def test_no_catalogue_op_yields_a_dtype_outside_the_ir() -> None:
    """The visitor's handler turns a result dtype into a ``DType`` (``DType.from_torch``) and
    the lowering does not: sweep elementwise ops, reductions, norms, matmul, where, concat
    and casts over every dtype (pair), and weak scalars of each kind, to show no catalogue
    op reaches that difference. (Creation ops and dim ops produce ``op.dtype``/``i64``;
    shape ops keep their operand's dtype.)"""
    programs_run = 0
    dtypes = list(DType)
    cases: list[tuple[Function, tuple[torch.Tensor, ...]]] = []
    for a in dtypes:
        x = Var("x", TensorType((3,), a))
        for name in _UNARY:
            cases.append((Function("u", (x,), getattr(ops, name)(x)), (_sample(a, (3,)),)))
        for kind in ("sum", "mean", "max", "min", "prod"):
            cases.append((Function("r", (x,), ops.reduce(x, kind=kind)), (_sample(a, (3,)),)))
        for unary in (ops.softmax, ops.argmax, ops.rms_norm, ops.layer_norm):
            cases.append((Function("n", (x,), unary(x)), (_sample(a, (3,)),)))
        cases.append((Function("m", (x,), ops.matmul(x, x)), (_sample(a, (3,)),)))
        for scalar in (True, 2, 2.5):
            for name in _BINARY:
                cases.append((Function("s", (x,), getattr(ops, name)(x, scalar)), (_sample(a, (3,)),)))
        for b in dtypes:
            y = Var("y", TensorType((3,), b))
            cases.append((Function("c", (x,), ops.cast(x, dtype=b)), (_sample(a, (3,)),)))
            pair = (_sample(a, (3,)), _sample(b, (3,)))
            for name in _BINARY:
                cases.append((Function("b", (x, y), getattr(ops, name)(x, y)), pair))
            cases.append((Function("w", (x, y), ops.where(ops.gt(x, x), x, y)), pair))
            cases.append((Function("j", (x, y), ops.concat(x, y)), pair))
            cases.append((Function("m", (x, y), ops.matmul(x, y)), pair))
    for fn, inputs in cases:
        if not _well_typed(fn):
            continue
        report = tfexec.check_equivalence(fn, *inputs)
        assert report.ok, f"{fn.body}: {report}"
        assert "has no HIR DType" not in (report.error or ""), report.error
        programs_run += 1
    assert programs_run > 500


# -- op calls through a plain register_eval handler ----------------------------------------------


@dataclass(frozen=True, slots=True)
class ProofSplit(Op):
    """Splits a rank-1 value into its two halves (a plain handler with a tuple result)."""

    name: ClassVar[str] = "proof_split"
    min_args: ClassVar[int] = 1
    max_args: ClassVar[int | None] = 1

    def infer(self, args: tuple[Operand, ...]) -> Type:
        t = args[0].type
        assert isinstance(t, TensorType) and isinstance(t.shape[0], int)
        half = TensorType((t.shape[0] // 2,), t.dtype)
        return TupleType((half, half))


@register_eval(ProofSplit)
def _split(ctx: EvaluateContext) -> Value:
    (x,) = ctx.args
    assert isinstance(x, TensorValue)
    lo, hi = x.data.chunk(2)
    return tfexec.TupleValue((TensorValue(lo, TensorType(tuple(lo.shape), DType.float32)), TensorValue(hi, TensorType(tuple(hi.shape), DType.float32))))


def test_plain_handler_runs_once_per_evaluation_and_its_tuple_projects_alike() -> None:
    x = Var("x", f32[4])
    halves = ops.apply(ProofSplit(), counted("in", x))
    fn = Function("f", (x,), ops.sub(TupleGetItem(halves, 1), TupleGetItem(halves, 0)))
    assert_routes_agree(fn, torch.arange(4.0))
    COUNTS.clear()
    tfexec.evaluate(fn, torch.arange(4.0))
    assert COUNTS["in"] == 1
    tfexec.lower(fn).run(torch.arange(4.0))
    assert COUNTS["in"] == 2


# -- tuples and projections -------------------------------------------------------------------------


def test_tuples_and_projections_emit_no_nodes() -> None:
    x = Var("x", f32[2])
    t = Tuple((x, Tuple((ops.exp(x), ops.neg(x)))))
    inner = TupleGetItem(t, 1)
    fn = Function("f", (x,), Tuple((TupleGetItem(inner, 0), TupleGetItem(inner, 1), TupleGetItem(t, 0), inner)))
    graph = tfexec.lower(fn)
    assert [type(n.source).__name__ for n in graph.nodes] == ["Call", "Call"]  # exp and neg, nothing else
    assert_routes_agree(fn, torch.tensor([1.0, -1.0]))


# -- function calls: the substitution lemma -----------------------------------------------------


def test_callee_called_twice_with_different_dim_bindings() -> None:
    y = Var("y", f32[N])
    ramp = Function("ramp", (y,), ops.add(y, ops.cast(ops.arange(extent=N), dtype=f32)))  # N read at run time
    p, q = Var("p", f32[N]), Var("q", f32[B])  # the caller has an N of its own
    fn = Function("f", (p, q), Tuple((ops.call(ramp, p), ops.call(ramp, q), ops.call(ramp, ops.concat(p, q)))))
    graph = tfexec.lower(fn)
    enters = [n for n in graph.nodes if isinstance(n.what, EnterCall)]
    assert len(enters) == 3 and len({id(n) for n in enters}) == 3  # one dim scope (context slot) per call site
    out = graph.run(torch.zeros(3), torch.zeros(5))
    assert isinstance(out, tuple) and isinstance(out[1], torch.Tensor) and isinstance(out[2], torch.Tensor)
    assert torch.equal(out[1], torch.arange(5.0)) and torch.equal(out[2], torch.arange(8.0))
    assert_routes_agree(fn, torch.zeros(3), torch.zeros(5))


def test_callee_environment_is_fresh_and_shared_nodes_are_recomputed_per_call() -> None:
    x = Var("x", f32[2])
    shared = counted("shared", ops.exp(x))  # one node object, used by the caller ...
    y = Var("y", f32[2])
    g = Function("g", (y,), ops.add(y, counted("callee", ops.neg(y))))
    fn = Function("f", (x,), Tuple((shared, ops.call(g, shared), ops.call(g, x))))
    assert_routes_agree(fn, torch.ones(2))
    COUNTS.clear()
    tfexec.evaluate(fn, torch.ones(2))
    direct = dict(COUNTS)
    COUNTS.clear()
    tfexec.lower(fn).run(torch.ones(2))
    assert dict(COUNTS) == direct == {"shared": 1, "callee": 2}


# -- loops --------------------------------------------------------------------------------------


def test_loop_values_agree_per_iteration() -> None:
    x, k, j = Var("x", f32[3]), _iv("k"), _iv("j")
    s, p = Var("s", f32[3]), Var("p", f32[3])
    inner_acc = Var("ia", f32[3])
    kf = ops.cast(k, dtype=f32)
    inner = GridRegionExpr(2, j, (s,), (inner_acc,), ops.add(inner_acc, ops.mul(kf, ops.cast(j, dtype=f32))),
                           (ops.add(inner_acc, ops.mul(kf, ops.cast(j, dtype=f32))),))
    s2, p2 = ops.add(inner, x), ops.mul(p, 1.5)
    loop = GridRegionExpr(4, k, (x, x), (s, p), Tuple((s2, p2)), (s2, p2))
    zero_trip = GridRegionExpr(B - 3, k, (x,), (s,), ops.add(s, 1.0), (ops.add(s, 1.0),))
    fn = Function("f", (x, Var("n", f32[B])), Tuple((loop, zero_trip)))
    for loops in ("collapse", "expand"):
        table = assert_routes_agree(fn, torch.arange(3.0), torch.zeros(3), loops=loops)
        if loops == "expand":
            assert "f/%2[3]/%3[1]/%4" in table  # outer iteration 3, inner iteration 1: the nested carry's add
            assert "f/%4" in table and not any(key.startswith("f/%4[") for key in table)  # zero trips: no iterations


# -- hoisting the invariant frontier ----------------------------------------------------------------


@pytest.mark.parametrize("trips", [5, 0])
def test_hoisted_invariant_runs_once_on_both_routes(trips: int) -> None:
    x, k, acc = Var("x", f32[3]), _iv(), Var("acc", f32[3])
    invariant = counted("inv", ops.exp(x))
    variant = counted("var", ops.add(acc, invariant))
    loop = GridRegionExpr(B - 3 + trips, k, (ops.mul(x, 0.0),), (acc,), variant, (variant,))
    fn = Function("f", (x, Var("n", f32[B])), loop)
    direct = tfexec.evaluate(fn, torch.zeros(3), torch.zeros(3))
    after_visitor = dict(COUNTS)
    COUNTS.clear()
    graph = tfexec.lower(fn)
    lowered = graph.run(torch.zeros(3), torch.zeros(3))
    assert dict(COUNTS) == after_visitor == ({"inv": 1, "var": trips} if trips else {"inv": 1})
    assert_same(direct, lowered)
    loop_index = next(i for i, n in enumerate(graph.nodes) if n.source is loop)
    hoisted = next(i for i, n in enumerate(graph.nodes) if n.source is invariant)
    assert hoisted < loop_index  # in the outer list, before the loop


def test_zero_trip_loop_still_evaluates_its_frontier_on_both_routes() -> None:
    x, k, acc = Var("x", f32[4]), _iv(), Var("acc", f32[4])
    bad = ops.slice(x, (2,), sizes=(4,))  # runs past the axis when evaluated: invariant, so hoisted
    step = ops.add(acc, bad)
    loop = GridRegionExpr(B - 2, k, (x,), (acc,), step, (step,))
    fn = Function("f", (x, Var("n", f32[B])), loop)
    with pytest.raises(EvalError) as direct:
        tfexec.evaluate(fn, torch.zeros(4), torch.zeros(2))  # zero trips, yet the frontier is computed
    with pytest.raises(EvalError) as lowered:
        tfexec.lower(fn).run(torch.zeros(4), torch.zeros(2))
    assert str(direct.value) == str(lowered.value) and "runs past axis 0 of length 4" in str(direct.value)


# -- dead-value freeing in run ----------------------------------------------------------------------


def test_frees_follow_the_last_declared_reader_and_spare_outputs() -> None:
    for fn in (everything(), programs.tiled_matmul(4), _far_read()):
        for body in bodies(tfexec.lower(fn)):
            nodes = body.data.nodes
            outputs = {r.slot for r in leaves(body.outputs)}
            freed: list[int] = []
            for i, frees in enumerate(body.frees):
                reads = {r.slot for r in nodes[i].reads}
                later = {r.slot for n in nodes[i + 1:] for r in n.reads}
                for slot in frees:
                    assert slot in reads and slot not in later and slot not in outputs
                freed.extend(frees)
            assert len(freed) == len(set(freed))  # each slot freed once
            read_anywhere = {r.slot for n in nodes for r in n.reads}
            assert set(freed) == read_anywhere - outputs  # and every other read slot is freed


def _far_read() -> Function:
    x = Var("x", f32[8])
    early = ops.exp(x)
    node: Expr = x
    for _ in range(60):
        node = ops.add(node, 1.0)
    y = Var("y", f32[8])
    g = Function("g", (y,), ops.mul(y, 2.0))
    k, acc = _iv(), Var("acc", f32[8])
    step = ops.add(acc, early)  # early is the loop's frontier
    loop = GridRegionExpr(2, k, (node,), (acc,), step, (step,))
    return Function("far", (x,), ops.add(ops.add(loop, ops.call(g, early)), early))


def test_a_value_read_far_later_survives_run() -> None:
    fn = _far_read()
    inp = torch.linspace(-1.0, 1.0, 8)
    assert_same(tfexec.evaluate(fn, inp), tfexec.lower(fn).run(inp))
    assert_routes_agree(fn, inp)


# -- error equivalence -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProofNoHandler(SameTypeOp):
    """Has a type rule but no evaluator handler."""

    name: ClassVar[str] = "proof_no_handler"


@dataclass(frozen=True, slots=True)
class ProofRaises(SameTypeOp):
    """A plain handler that raises a torch-style error."""

    name: ClassVar[str] = "proof_raises"


@register_eval(ProofRaises)
def _raises(ctx: EvaluateContext) -> Value:
    raise RuntimeError("proof handler failed\nsecond line")


def _failing_in_iteration() -> tuple[Function, tuple[object, ...], str]:
    x, k, acc = Var("x", f32[5]), _iv(), Var("acc", f32[2])
    window = ops.slice(x, (ops.dim_mul(k, 2),), sizes=(2,))  # iterations 0, 1 fit; 2 runs past
    step = ops.add(acc, window)
    return Function("f", (x,), GridRegionExpr(3, k, (ops.full(shape=(2,), value=0.0, dtype=f32),), (acc,), step, (step,))), (
        torch.ones(5),), "window \\[4, 6\\) with stride 1 runs past axis 0 of length 5"


def _failing_in_callee_in_loop() -> tuple[Function, tuple[object, ...], str]:
    y, idx = Var("y", f32[4]), Var("idx", i64[2])
    g = Function("g", (y, idx), ops.take(y, idx))
    x, i, k, acc = Var("x", f32[4]), Var("i", i64[2]), _iv(), Var("acc", f32[2])
    step = ops.add(acc, ops.call(g, x, ops.add(i, k)))
    fn = Function("f", (x, i), GridRegionExpr(3, k, (ops.full(shape=(2,), value=0.0, dtype=f32),), (acc,), step, (step,)))
    return fn, (torch.ones(4), torch.tensor([0, 2])), "take: index 4 is out of range"


def _negative_extent() -> tuple[Function, tuple[object, ...], str]:
    x, k = Var("x", f32[B]), _iv()
    return Function("f", (x,), GridRegionExpr(B - 5, k, (x,), (Var("a", f32[B]),), x, (x,))), (torch.ones(3),), "is negative"


def _zero_trips_no_carry() -> tuple[Function, tuple[object, ...], str]:
    x, k = Var("x", f32[B]), _iv()
    return Function("f", (x,), GridRegionExpr(B - 3, k, (), (), ops.cast(k, dtype=f32), ())), (torch.ones(3),), "runs zero times"


def _dim_division_by_zero() -> tuple[Function, tuple[object, ...], str]:
    x, k, acc = Var("x", f32[()]), _iv(), Var("acc", i64[()])
    step = ops.add(acc, ops.dim_floordiv(7, k))
    fn = Function("f", (x,), GridRegionExpr(2, k, (tfexec.Constant(0, i64[()]),), (acc,), step, (step,)))
    return fn, (torch.tensor(1.0),), "dim_floordiv"


def _missing_handler() -> tuple[Function, tuple[object, ...], str]:
    x = Var("x", f32[2])
    return Function("f", (x,), ops.neg(ops.apply(ProofNoHandler(), ops.exp(x)))), (torch.ones(2),), "no evaluator handler is registered for op class ProofNoHandler"


def _handler_raises() -> tuple[Function, tuple[object, ...], str]:
    x = Var("x", f32[2])
    y = Var("y", f32[2])
    g = Function("g", (y,), ops.apply(ProofRaises(), y, span=Span("g.tf.py", 3, 7, "z", "proof_raises(y)")))
    return Function("f", (x,), ops.call(g, x)), (torch.ones(2),), "g.tf.py:3:7 z = proof_raises\\(y\\): RuntimeError: proof handler failed$"


def _bad_input_dim() -> tuple[Function, tuple[object, ...], str]:
    x, y = Var("x", f32[B]), Var("y", f32[B * 2])
    return Function("f", (x, y), ops.add(x, x)), (torch.ones(3), torch.ones(5)), "axis 0 must have size B \\* 2 = 6, found 5"


_FAILING: dict[str, Callable[[], tuple[Function, tuple[object, ...], str]]] = {
    "op-in-iteration-2": _failing_in_iteration,
    "op-in-callee-in-loop": _failing_in_callee_in_loop,
    "negative-extent": _negative_extent,
    "zero-trips-no-carry": _zero_trips_no_carry,
    "dim-division-by-zero": _dim_division_by_zero,
    "missing-handler": _missing_handler,
    "handler-raises": _handler_raises,
    "bad-input-dim": _bad_input_dim,
}


@pytest.mark.parametrize("case", list(_FAILING))
def test_runtime_errors_are_identical_on_every_reading(case: str) -> None:
    fn, inputs, pattern = _FAILING[case]()
    with pytest.raises(EvalError, match=pattern) as direct:
        tfexec.evaluate(fn, *inputs)
    graph = tfexec.lower(fn)
    readings: list[Callable[[], object]] = [
        lambda: graph.run(*inputs),
        lambda: graph.eval(*inputs),
        lambda: graph.denote_all(*inputs),
        lambda: graph.denote_all(*inputs, loops="expand"),
        lambda: graph.run(*inputs, check="off"),
    ]
    for reading in readings:
        with pytest.raises(EvalError) as lowered:
            reading()
        assert type(lowered.value) is type(direct.value) and str(lowered.value) == str(direct.value)
    report = tfexec.check_equivalence(fn, *inputs)
    assert report.ok and report.compared == 0 and report.error == f"EvalError: {direct.value}"


# -- the type-check feature: a check can only refuse, never change a value -------------------------


def test_checking_modes_never_change_a_value() -> None:
    fn, inputs = everything(), _everything_inputs()
    graph = tfexec.lower(fn)
    results = [graph.run(*inputs, check=mode) for mode in ("off", "boundary", "full")]
    for r in results[1:]:
        assert_same(results[0], r)


def test_dim_expr_shapes_resolve_alike() -> None:
    x = Var("x", f32[B])
    doubled = ops.concat(x, x)
    fn = Function("f", (x,), ops.add(doubled, ops.cast(ops.arange(extent=B + B), dtype=f32)))
    assert_routes_agree(fn, torch.ones(3))
