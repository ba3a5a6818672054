"""Six classes of programs at the boundary of user code and host integers (issue #28, A–F),
each ending the same way at every entry point: ``evaluate``, ``lower(f).run``, ``eval``,
``denote_all``, ``check_equivalence`` and, where the program lowers, ``validate``."""

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

import pytest
import torch

from tfexec import (
    Call,
    EvalError,
    EvaluateContext,
    Function,
    GridRegionExpr,
    IRConstructionError,
    TensorType,
    TensorValue,
    Tuple,
    TupleGetItem,
    TupleType,
    TupleValue,
    TypeCheckError,
    TypeInferenceError,
    Value,
    Var,
    check_equivalence,
    evaluate,
    f32,
    i32,
    i64,
    lower,
    ops,
    register_eval,
)
from tfexec.infer import infer_types
from tfexec.ir.ops.base import Operand
from tfexec.ir.types import MAX_TUPLE_DEPTH, Type
from tfexec.semantics.registry import Kernel, value_rule
from tfexec.validate import validate

from shared_helpers import SameTypeOp


def entry_points(fn: Function, *inputs: object) -> dict[str, Callable[[], object]]:
    """Every way to run ``fn`` on ``inputs``, each lowering afresh."""
    return {
        "evaluate": lambda: evaluate(fn, *inputs),
        "run": lambda: lower(fn).run(*inputs),
        "run full": lambda: lower(fn, check="full").run(*inputs),
        "eval": lambda: lower(fn).eval(*inputs),
        "denote_all": lambda: lower(fn).denote_all(*inputs),
        "denote_all expand": lambda: lower(fn).denote_all(*inputs, loops="expand"),
    }


def fails_alike(fn: Function, *inputs: object, match: str) -> str:
    """Every entry point raises an ``EvalError`` (never a subclass, never anything raw) with one
    message matching ``match``; the comparison says the routes failed alike and the lowering
    validates. Returns the message."""
    messages: dict[str, str] = {}
    for name, run in entry_points(fn, *inputs).items():
        with pytest.raises(EvalError) as caught:
            run()
        assert type(caught.value) is EvalError, (name, caught.value)
        messages[name] = str(caught.value)
    assert len(set(messages.values())) == 1, messages
    message = messages["evaluate"]
    assert re.search(match, message), message
    report = check_equivalence(fn, *inputs)
    assert report.ok and report.compared == 0 and report.error == "EvalError: " + message, str(report)
    assert validate(lower(fn)).ok
    return message


# -- A: index arithmetic is i64, refused where it would overflow --------------------------------


@pytest.mark.parametrize(
    "make, value",
    [
        (lambda p: ops.dim_floordiv(ops.dim_mul(p, 2**62), 2**62), 4),
        (lambda p: ops.dim_add(p, 2**62), 2**62),
        (lambda p: ops.dim_sub(ops.dim_sub(p, 2**62), 2**62), -1),
        (lambda p: ops.dim_floordiv(ops.dim_sub(ops.dim_sub(p, 2**62), 2**62), -1), 0),
    ],
)
def test_index_arithmetic_leaving_i64_is_refused_alike_at_every_entry_point(make: Callable[[Var], Call], value: int) -> None:
    p = Var("p", i64[()])
    message = fails_alike(Function("f", (p,), make(p)), torch.tensor(value), match=r"does not fit in i64 .*\(C[23]\)")
    assert message.startswith("dim_")


def test_an_overflowing_index_as_a_loop_value_is_refused_alike() -> None:
    """The no-carry loop's value is an index held as a host int: refused where it is made."""
    p = Var("p", i64[()])
    i = Var("i", i64[()])
    body = ops.dim_add(ops.dim_mul(i, p), p)
    loop = GridRegionExpr(2, i, (), (), body, ())
    fails_alike(Function("f", (p,), loop), torch.tensor(2**62), match=r"dim_add.*does not fit in i64")


def test_index_arithmetic_at_the_edge_of_i64_agrees_on_both_routes() -> None:
    p = Var("p", i64[()])
    fn = Function("f", (p,), ops.dim_sub(ops.dim_add(p, 2**62 - 1), 2**62))
    x = torch.tensor(2**62)
    assert evaluate(fn, x).item() == lower(fn).run(x).item() == 2**62 - 1  # type: ignore[union-attr]
    assert check_equivalence(fn, x).ok


def test_a_dim_size_past_i64_is_refused_by_dims() -> None:
    x = Var("x", f32[3])
    fn = Function("f", (x,), ops.add(x, 1.0))
    for run in (lambda: evaluate(fn, torch.ones(3), dims={"N": 2**63}), lambda: lower(fn).run(torch.ones(3), dims={"N": 2**63})):
        with pytest.raises(EvalError, match=r"dims= maps dim names to sizes \(ints from 0 to 9223372036854775807\)"):
            run()


# -- B: a kernel raising TypeCheckError is a failing dispatch on both routes ------------------


@dataclass(frozen=True, slots=True)
class RaisesTypeCheck(SameTypeOp):
    name: ClassVar[str] = "raises_type_check"


@value_rule(RaisesTypeCheck)
def _raises_type_check(op: RaisesTypeCheck, args: object) -> Kernel:
    def kernel(x: torch.Tensor) -> torch.Tensor:
        raise TypeCheckError("the kernel's own check")

    return Kernel(kernel)


def test_a_kernel_raising_type_check_error_is_wrapped_alike() -> None:
    x = Var("x", f32[3])
    fails_alike(Function("f", (x,), ops.apply(RaisesTypeCheck(), x)), torch.ones(3),
                match=r"^raises_type_check\(x\): the kernel's own check$")


def test_a_kernel_raising_type_check_error_in_a_loop_is_wrapped_alike() -> None:
    x, h, i = Var("x", f32[3]), Var("h", f32[3]), Var("i", i64[()])
    step = ops.apply(RaisesTypeCheck(), h)
    loop = GridRegionExpr(2, i, (x,), (h,), step, (step,))
    fails_alike(Function("f", (x,), loop), torch.ones(3), match=r"^raises_type_check\(h\): the kernel's own check$")


# -- C: a user kernel returns a tensor, or an index where it says so ---------------------------


@dataclass(frozen=True, slots=True)
class ReturnsFloat(SameTypeOp):
    name: ClassVar[str] = "returns_float"


@value_rule(ReturnsFloat)
def _returns_float(op: ReturnsFloat, args: object) -> Kernel:
    return Kernel(lambda x: 2.5)


@dataclass(frozen=True, slots=True)
class ReturnsHugeIndex(SameTypeOp):
    name: ClassVar[str] = "returns_huge_index"


@value_rule(ReturnsHugeIndex)
def _returns_huge_index(op: ReturnsHugeIndex, args: object) -> Kernel:
    return Kernel(lambda x: 2**64, host_index=True)


def test_a_kernel_returning_a_float_is_refused_alike() -> None:
    x = Var("x", f32[3])
    fn = Function("f", (x,), ops.add(x, ops.apply(ReturnsFloat(), x)))
    fails_alike(fn, torch.ones(3), match=r"^returns_float\(x\): the kernel of the value rule ReturnsFloat returned float, not a tensor$")


def test_a_kernel_returning_an_index_past_i64_is_refused_alike() -> None:
    p = Var("p", i64[()])
    fn = Function("f", (p,), ops.dim_add(ops.apply(ReturnsHugeIndex(), p), 1))
    fails_alike(fn, torch.tensor(1), match=r"^returns_huge_index\(p\): .* returned the index 18446744073709551616, which does not fit in i64")


# -- D: a plain handler returns a Value whose data agrees with its type ----------------------


def _handler_op(name: str, result: Callable[[TensorValue], object], infer: Callable[[Type], Type] | None = None) -> type[SameTypeOp]:
    """A test op named ``name`` whose plain handler returns ``result(first operand)``."""

    def infer_type(self: SameTypeOp, args: tuple[Operand, ...]) -> Type:
        return args[0].type if infer is None else infer(args[0].type)

    cls = dataclass(frozen=True, slots=True)(type(name, (SameTypeOp,), {"name": name, "infer": infer_type, "__module__": __name__}))

    @register_eval(cls)
    def _handler(ctx: EvaluateContext) -> Value:
        first = ctx.args[0]
        assert isinstance(first, TensorValue)
        return result(first)  # type: ignore[return-value]

    return cls


def _float_data(v: TensorValue) -> object:
    out = TensorValue.__new__(TensorValue)
    out.data, out.type, out.scalar = 2.5, v.type, None  # type: ignore[assignment]
    return out


LIES = _handler_op("lies_dtype", lambda v: TensorValue(v.data.double(), v.type))
SHAPE_LIE = _handler_op("lies_shape", lambda v: TensorValue(torch.cat([v.data, v.data]), v.type))
RAW_FIELD = _handler_op("raw_field", lambda v: TupleValue((v, v.data)), infer=lambda t: TupleType((t, t)))  # type: ignore[arg-type]
FLOAT_DATA = _handler_op("float_data", _float_data)
WRONG_TREE = _handler_op("wrong_tree", lambda v: v, infer=lambda t: TupleType((t, t)))
NESTED_TENSOR = _handler_op("nested_tensor", lambda v: TupleValue((v, TupleValue((v, v)))), infer=lambda t: TupleType((t, TupleType((t, t)))))


@pytest.mark.parametrize(
    "op, match",
    [
        (LIES, r"^lies_dtype\(x\): the handler for lies_dtype returned data of dtype torch.float64 claiming type f32\[3\]$"),
        (SHAPE_LIE, r"^lies_shape\(x\): the handler for lies_shape returned data of shape \[6\] claiming type f32\[3\]"),
        (RAW_FIELD, r"^raw_field\(x\): the handler for raw_field returned Tensor, not a Value .* as field 1$"),
        (FLOAT_DATA, r"^float_data\(x\): the handler for float_data returned a TensorValue whose data is float"),
        (WRONG_TREE, r"^wrong_tree\(x\): the handler for wrong_tree returned a value shaped unlike its type rule's"),
    ],
)
def test_a_handler_result_contradicting_its_type_is_refused_alike_even_through_a_callee(op: type[SameTypeOp], match: str) -> None:
    x, y = Var("x", f32[3]), Var("y", f32[3])
    g = Function("g", (y,), ops.mul(y, 2.0))
    made = ops.apply(op(), x)
    body = Call(g, (made,)) if op not in (RAW_FIELD, WRONG_TREE) else made
    fn = Function("f", (x,), body)
    if op is WRONG_TREE:  # the tree a call must have is its inferred type's: once inferred, both routes check it
        assert isinstance(evaluate(fn, torch.ones(3)), torch.Tensor)
        infer_types(fn)
    fails_alike(fn, torch.ones(3), match=match)


def test_a_handler_result_of_the_right_tree_passes_on_both_routes() -> None:
    x = Var("x", f32[3])
    fn = Function("f", (x,), TupleGetItem(TupleGetItem(ops.apply(NESTED_TENSOR(), x), 1), 0))
    assert torch.equal(evaluate(fn, torch.ones(3)), lower(fn).run(torch.ones(3)))  # type: ignore[arg-type]
    assert check_equivalence(fn, torch.ones(3)).ok


def test_a_handler_result_whose_type_names_a_bound_dim_is_accepted() -> None:
    from tfexec import DimVar

    n = DimVar("N")
    keeps = _handler_op("keeps_symbolic", lambda v: TensorValue(v.data, TensorType((n,), v.type.dtype)))
    x = Var("x", f32[n])
    fn = Function("f", (x,), ops.apply(keeps(), x))
    assert check_equivalence(fn, torch.ones(4)).ok
    with pytest.raises(EvalError, match=r"claiming type f32\[N\] \(axis 0 must be 4\)"):
        evaluate(Function("f", (x,), ops.apply(_handler_op("wrong_symbolic", lambda v: TensorValue(v.data[:1], TensorType((n,), v.type.dtype)))(), x)), torch.ones(4))


# -- E: tuples nest at most MAX_TUPLE_DEPTH deep, the same limit everywhere -------------------


def _nested(x: Var, depth: int) -> Tuple:
    t: Tuple | Var = x
    for _ in range(depth):
        t = Tuple((t,))
    assert isinstance(t, Tuple)
    return t


def _unnested(t: Tuple, depth: int) -> TupleGetItem:
    e: object = t
    for _ in range(depth):
        e = TupleGetItem(e, 0)  # type: ignore[arg-type]
    assert isinstance(e, TupleGetItem)
    return e


def test_a_tuple_at_the_depth_limit_runs_on_both_routes() -> None:
    x = Var("x", f32[3])
    fn = Function("f", (x,), ops.add(_unnested(_nested(x, MAX_TUPLE_DEPTH), MAX_TUPLE_DEPTH), 1.0))
    assert torch.equal(evaluate(fn, torch.ones(3)), lower(fn).run(torch.ones(3)))  # type: ignore[arg-type]
    assert check_equivalence(fn, torch.ones(3)).ok and validate(lower(fn)).ok


@pytest.mark.parametrize("depth", [MAX_TUPLE_DEPTH + 1, 600, 1200])
def test_a_tuple_past_the_depth_limit_is_refused_naming_the_limit_on_both_routes(depth: int) -> None:
    x = Var("x", f32[3])
    fn = Function("f", (x,), ops.add(_unnested(_nested(x, depth), depth), 1.0))
    limit = rf"tuples nest more than {MAX_TUPLE_DEPTH} deep here; tfexec refuses deeper tuples \(MAX_TUPLE_DEPTH\)"
    with pytest.raises(EvalError, match=r"^tuple\(<Tuple>\): " + limit):
        evaluate(fn, torch.ones(3))
    with pytest.raises(TypeInferenceError, match=r"^tuple\(<Tuple>\): " + limit):
        lower(fn)
    report = check_equivalence(fn, torch.ones(3))
    assert not report.ok and report.type_error is not None and "MAX_TUPLE_DEPTH" in report.type_error


def test_a_tuple_type_past_the_depth_limit_cannot_be_made_so_bind_inputs_never_meets_one() -> None:
    t: Type = f32[3]
    for _ in range(MAX_TUPLE_DEPTH):
        t = TupleType((t,))
    with pytest.raises(IRConstructionError, match=rf"tuples nest more than {MAX_TUPLE_DEPTH} deep"):
        TupleType((t,))
    z = Var("z", t)
    fn = Function("f", (z,), z)
    value: object = torch.ones(3)
    for _ in range(MAX_TUPLE_DEPTH):
        value = (value,)
    a, b = evaluate(fn, value), lower(fn).run(value)
    for _ in range(MAX_TUPLE_DEPTH):
        assert isinstance(a, tuple) and isinstance(b, tuple)
        a, b = a[0], b[0]
    assert torch.equal(a, b)  # type: ignore[arg-type]


def test_a_handler_or_loop_making_a_tuple_past_the_limit_is_refused_naming_the_node() -> None:
    deep = _handler_op("deep_tuple", lambda v: _deep_value(v))
    x = Var("x", f32[3])
    with pytest.raises(EvalError, match=rf"^deep_tuple\(x\): tuples nest more than {MAX_TUPLE_DEPTH} deep"):
        evaluate(Function("f", (x,), ops.apply(deep(), x)), torch.ones(3))


def _deep_value(v: TensorValue) -> Value:
    out: Value = v
    for _ in range(MAX_TUPLE_DEPTH + 1):
        out = TupleValue((out,))
    return out


# -- F: the program's default float is torch's float32; another default is refused ------------


@pytest.fixture
def float64_default() -> Iterator[None]:
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(torch.float32)


def _int_division() -> Function:
    x = Var("x", i32[3])
    return Function("f", (x,), ops.div(x, 2))


def test_a_lowered_function_run_under_another_default_dtype_is_refused_alike(float64_default: None) -> None:
    fn = _int_division()
    torch.set_default_dtype(torch.float32)
    graph = lower(fn)
    assert validate(graph).ok
    torch.set_default_dtype(torch.float64)
    x = torch.ones(3, dtype=torch.int32)
    messages = set()
    for run in (lambda: evaluate(fn, x), lambda: graph.run(x), lambda: graph.eval(x), lambda: graph.denote_all(x)):
        with pytest.raises(EvalError, match=r"^function f\(x\): torch's default dtype is torch.float64") as caught:
            run()
        messages.add(str(caught.value))
    assert len(messages) == 1
    for refused in (lambda: lower(fn), lambda: validate(graph)):
        with pytest.raises(TypeInferenceError, match=r"torch.set_default_dtype\(torch.float32\) first"):
            refused()
    report = check_equivalence(fn, x)
    assert not report.ok and report.type_error is not None and "default dtype" in report.type_error


def test_types_and_values_agree_once_the_default_is_restored(float64_default: None) -> None:
    torch.set_default_dtype(torch.float32)
    fn = _int_division()
    out = lower(fn, check="full").run(torch.ones(3, dtype=torch.int32))
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32 == evaluate(fn, torch.ones(3, dtype=torch.int32)).dtype  # type: ignore[union-attr]
