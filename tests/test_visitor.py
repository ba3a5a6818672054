"""visitor-mutator §1 and visitor-registry §2: ``ExprVisitor``, ``ExprMutator``, ``AnalysisRegistry``."""

from collections import Counter
from collections.abc import Callable

import pytest
import torch

from tfexec import (
    AnalysisRegistry,
    Call,
    Constant,
    Expr,
    ExprMutator,
    ExprVisitor,
    Function,
    GridRegionExpr,
    Op,
    Span,
    TfexecError,
    Tuple,
    TupleGetItem,
    Var,
    evaluate,
    f32,
    i64,
    ops,
)
from tfexec.ir.ops.elementwise import Add, Mul, Sub
from tfexec.visitor import RegistryError

from shared_helpers import ChainDepth, add_chain

X = Var("x", f32[4])
Y = Var("y", f32[4])


class Names(ExprVisitor[str]):
    """Renders a node as text from its operands' results, counting visits per node."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter[int] = Counter()
        self.order: list[str] = []

    def _seen(self, node: Expr, text: str) -> str:
        self.calls[id(node)] += 1
        self.order.append(text)
        return text

    def visit_Var(self, node: Var) -> str:
        return self._seen(node, node.name)

    def visit_Constant(self, node: Constant) -> str:
        return self._seen(node, repr(node.value))

    def visit_Call(self, node: Call) -> str:
        return self._seen(node, f"{node.target.name}({', '.join(self.result(a) for a in node.args)})")

    def visit_Tuple(self, node: Tuple) -> str:
        return self._seen(node, "(" + ", ".join(self.result(f) for f in node.fields) + ")")

    def visit_TupleGetItem(self, node: TupleGetItem) -> str:
        return self._seen(node, f"{self.result(node.tuple)}[{node.index}]")


# -- ExprVisitor ----------------------------------------------------------------------


def test_visitor_dispatches_by_class_name_in_post_order() -> None:
    h = ops.mul(ops.add(X, Y), 2.0)
    v = Names()
    assert v.visit(TupleGetItem(Tuple((h, X)), 0)) == "(mul(add(x, y), 2.0), x)[0]"
    assert v.order[:4] == ["x", "y", "add(x, y)", "2.0"]


def test_shared_sub_dag_is_visited_once_and_memoised_on_id() -> None:
    shared = ops.add(X, Y)
    root = ops.mul(shared, ops.sub(shared, shared))
    v = Names()
    assert v.visit(root) == "mul(add(x, y), sub(add(x, y), add(x, y)))"
    assert v.calls[id(shared)] == 1 and v.calls[id(X)] == 1
    assert set(v.memo) == {id(X), id(Y), id(shared), id(root.args[1]), id(root)}
    # a second visit of anything already seen is a memo hit: nothing is dispatched again
    before = sum(v.calls.values())
    assert v.visit(shared) == "add(x, y)" and v.visit(root).startswith("mul")
    assert sum(v.calls.values()) == before
    # two equal-looking nodes are two nodes
    twin = ops.add(X, Y)
    v.visit(ops.add(shared, twin))
    assert v.calls[id(twin)] == 1 and v.calls[id(shared)] == 1


def test_visit_passes_extra_arguments_to_every_handler() -> None:
    class Depth(ExprVisitor[int]):
        def visit_Var(self, node: Var, base: int) -> int:
            return base

        def visit_Constant(self, node: Constant, base: int) -> int:
            return base

        def visit_Call(self, node: Call, base: int) -> int:
            return 1 + max(self.result(a) for a in node.args)

    assert Depth().visit(ops.add(ops.add(X, 1.0), X), 10) == 12


def test_missing_visit_method_is_named() -> None:
    with pytest.raises(TfexecError, match=r"Names has no visit_ConstTensor: define it to visit ConstTensor nodes"):
        from tfexec import ConstTensor

        Names().visit(ops.add(ConstTensor("w", f32[4]), X))


def test_seeded_memo_stops_the_walk() -> None:
    """A nested visit of a loop body stops at values the enclosing scope computed."""
    outer = add_chain(X, 5)
    inner = ops.mul(outer, Y)
    v = Names()
    v.memo[id(outer)] = "<outer>"
    assert v.visit(inner) == "mul(<outer>, y)"
    assert v.order == ["y", "mul(<outer>, y)"]


def test_visitor_does_not_walk_a_loop_body_by_itself() -> None:
    i, acc = Var("i", i64[()]), Var("acc", f32[4])
    invariant = ops.exp(Y)
    body = ops.add(ops.add(acc, invariant), ops.cast(i, dtype=f32))
    loop = GridRegionExpr(3, i, (X,), (acc,), body, (body,))

    class Seen(Names):
        def visit_GridRegionExpr(self, node: GridRegionExpr) -> str:
            return self._seen(node, "grid")

    v = Seen()
    v.visit(ops.neg(loop))
    # the loop reads its init args and its invariant frontier in the enclosing scope
    assert v.order == ["x", "y", "exp(y)", "grid", "neg(grid)"]
    assert id(body) not in v.memo and id(acc) not in v.memo


def test_visitor_is_iterative_on_a_deep_chain() -> None:
    assert ChainDepth().visit(add_chain(X, 30_000)) == 30_000


# -- ExprMutator ----------------------------------------------------------------------


def test_identity_mutation_returns_the_same_dag() -> None:
    shared = ops.add(X, Y)
    root = Tuple((TupleGetItem(Tuple((shared,)), 0), ops.mul(shared, 2.0)))
    m = ExprMutator()
    assert m.mutate(root) is root
    assert m.mutated(shared) is shared


class AddToSub(ExprMutator):
    def __init__(self) -> None:
        super().__init__()
        self.rewrites = 0

    def rewrite_Call(self, node: Call) -> Expr:
        args = tuple(self.mutated(a) for a in node.args)
        if isinstance(node.target, Add):
            self.rewrites += 1
            return Call(Sub(), args, span=node.span)
        return self.rebuild(node)


def test_mutation_preserves_sharing_and_spans() -> None:
    span = Span("m.tf.py", 2, 5, "h", "add(x, y)")
    shared = ops.add(X, Y, span=span)
    left = ops.mul(shared, 2.0, span=Span("m.tf.py", 3, 5, "a", "mul(h, 2.0)"))
    right = ops.exp(shared)
    root = Tuple((left, right), span=Span("m.tf.py", 4, 5, None, "(a, exp(h))"))
    m = AddToSub()
    new = m.mutate(root)
    assert m.rewrites == 1  # reached twice, rebuilt once
    assert isinstance(new, Tuple) and new is not root
    new_left, new_right = new.fields
    assert isinstance(new_left, Call) and isinstance(new_right, Call)
    assert new_left.args[0] is new_right.args[0]  # still one shared node
    rewritten = new_left.args[0]
    assert isinstance(rewritten, Call) and isinstance(rewritten.target, Sub)
    assert rewritten.span is span and new_left.span is left.span and new.span is root.span
    assert new_left.args[1] is left.args[1]  # unchanged leaves are kept, not copied
    assert new_left.target is left.target


def test_unchanged_parts_of_a_dag_are_kept() -> None:
    keep = ops.exp(X)
    root = ops.mul(keep, ops.add(X, Y))
    new = AddToSub().mutate(root)
    assert isinstance(new, Call) and new is not root and new.args[0] is keep


def test_rewriting_inside_a_loop_body() -> None:
    i, acc = Var("i", i64[()]), Var("acc", f32[4])
    body = ops.add(acc, ops.mul(ops.cast(i, dtype=f32), Y))
    loop = GridRegionExpr(4, i, (X,), (acc,), body, (body,), span=Span("m.tf.py", 5, 5, "acc", "grid(4, x)"))
    fn = Function("f", (X, Y), loop)
    new_body = AddToSub().mutate(loop)
    assert isinstance(new_body, GridRegionExpr) and new_body is not loop
    assert new_body.span is loop.span
    assert new_body.induction_var is i and new_body.carried_args == (acc,)
    assert new_body.body is new_body.yield_values[0]  # the convention body == yield survives
    assert isinstance(new_body.body, Call) and isinstance(new_body.body.target, Sub)
    x, y = torch.ones(4), torch.arange(4.0)
    new_fn = Function("f", fn.params, new_body)
    torch.testing.assert_close(evaluate(fn, x, y), x + 6 * y)
    torch.testing.assert_close(evaluate(new_fn, x, y), x - 6 * y)


def test_replacing_the_induction_variable_rebuilds_the_body() -> None:
    i, j, acc = Var("i", i64[()]), Var("j", i64[()]), Var("acc", f32[4])
    body = ops.add(acc, ops.cast(i, dtype=f32))
    loop = GridRegionExpr(3, i, (X,), (acc,), body, (body,))

    class Rename(ExprMutator):
        def rewrite_Var(self, node: Var) -> Expr:
            return j if node is i else node

    new = Rename().mutate(loop)
    assert isinstance(new, GridRegionExpr) and new.induction_var is j
    assert isinstance(new.body, Call) and isinstance(new.body.args[1], Call) and new.body.args[1].args[0] is j

    class Bad(ExprMutator):
        def rewrite_Var(self, node: Var) -> Expr:
            return Constant(0, i64[()]) if node is i else node

    with pytest.raises(TfexecError, match=r"ExprMutator: a loop's induction variable and carries must stay Vars"):
        Bad().mutate(loop)


def test_mutator_is_iterative_on_a_deep_chain() -> None:
    class Double(ExprMutator):
        def rewrite_Constant(self, node: Constant) -> Expr:
            return Constant(2.0, node.type)

    chain = add_chain(X, 30_000)
    new = Double().mutate(chain)
    assert new is not chain
    n = 0
    while isinstance(new, Call):
        assert isinstance(new.args[1], Constant) and new.args[1].value == 2.0
        new = new.args[0]
        n += 1
    assert n == 30_000 and new is X


# -- AnalysisRegistry -----------------------------------------------------------------


def test_registry_register_lookup_and_mro() -> None:
    reg: AnalysisRegistry[Callable[[object], str]] = AnalysisRegistry("demo")

    @reg.register(Op)
    def base(op: object) -> str:
        return "any op"

    def add_handler(op: object) -> str:
        return "add"

    assert base(None) == "any op"  # the decorator returns the handler itself
    reg.add(Add, add_handler)
    assert reg.lookup(Add) is add_handler
    assert reg.lookup(Mul) is base  # nearest registered base class
    assert reg.lookup(int) is None
    assert Add in reg and Mul in reg and int not in reg and "add" not in reg
    assert reg.keys() == [Op, Add]


def test_registry_nearest_base_wins() -> None:
    class A(Op):
        pass

    class B(A):
        pass

    class C(B):
        pass

    reg: AnalysisRegistry[str] = AnalysisRegistry("demo")
    reg.add(A, "a")
    reg.add(B, "b")
    assert reg.lookup(C) == "b" and reg.lookup(A) == "a"


def test_registry_refuses_duplicates_unless_override() -> None:
    reg: AnalysisRegistry[str] = AnalysisRegistry("printer_registry")
    reg.add(Add, "first")
    with pytest.raises(RegistryError, match=r"printer_registry: Add is already registered; pass override=True to replace it"):
        reg.add(Add, "second")
    with pytest.raises(TfexecError, match=r"Add is already registered"):
        reg.register(Add)("third")
    assert reg.lookup(Add) == "first"
    reg.add(Add, "second", override=True)
    assert reg.lookup(Add) == "second"
    reg.register(Add, override=True)("third")
    assert reg.lookup(Add) == "third"


def test_registry_keys_must_be_classes() -> None:
    reg: AnalysisRegistry[str] = AnalysisRegistry("demo")
    with pytest.raises(TypeError, match=r"demo: a key must be a class \(an Op subclass\), got Add Add\(\)"):
        reg.add(Add(), "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"demo: a key must be a class .*got str 'add'"):
        reg.lookup("add")  # type: ignore[arg-type]
