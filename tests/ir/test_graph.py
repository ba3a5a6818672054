"""Graph walks (hir §1.2): iterative post-order, operands, loop plans (variant / invariant /
frontier, nested loops) and use counts."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tfexec import Constant, GridRegionExpr, Tuple, TupleGetItem, Var, f32, i64, ops
from tfexec.ir.graph import loop_plan, loop_roots, operands, post_order, use_counts

X = Var("x", f32[4])
Y = Var("y", f32[4])


def _ids(nodes: object) -> list[int]:
    return [id(n) for n in nodes]  # type: ignore[attr-defined]


def test_post_order_operands_first_left_to_right_each_once() -> None:
    a = ops.add(X, Y)
    b = ops.mul(a, X)
    root = Tuple((b, a, TupleGetItem(Tuple((Y,)), 0)))
    order = post_order([root])
    inner_tuple = root.fields[2].tuple  # type: ignore[union-attr]
    assert _ids(order) == _ids([X, Y, a, b, inner_tuple, root.fields[2], root])


def test_post_order_of_several_roots_and_done() -> None:
    a = ops.add(X, Y)
    b = ops.exp(a)
    assert _ids(post_order([a, b, a])) == _ids([X, Y, a, b])
    # nodes in ``done`` are neither listed nor walked through
    assert _ids(post_order([b], done={id(a)})) == _ids([b])
    assert _ids(post_order([a], done={id(a)})) == []
    assert _ids(post_order([b], done={id(X)})) == _ids([Y, a, b])


def test_operands() -> None:
    a = ops.add(X, Y)
    assert operands(a) == (X, Y)
    assert operands(Tuple((a, X))) == (a, X)
    get = TupleGetItem(Tuple((a,)), 0)
    assert operands(get) == (get.tuple,)
    assert operands(X) == () and operands(Constant(1.0, f32[()])) == ()


def _simple_loop() -> tuple[GridRegionExpr, dict[str, object]]:
    i, acc = Var("i", i64[()]), Var("acc", f32[4])
    e = ops.exp(Y)  # invariant: depends on neither i nor acc
    step = ops.add(acc, e)
    ci = ops.cast(i, dtype=f32)
    body = ops.add(step, ci)
    loop = GridRegionExpr(3, i, (X,), (acc,), body, (body,))
    return loop, dict(i=i, acc=acc, e=e, step=step, ci=ci, body=body)


def test_loop_plan_splits_variant_and_invariant() -> None:
    loop, n = _simple_loop()
    plan = loop_plan(loop)
    assert _ids(plan.schedule) == _ids([n["acc"], n["step"], n["i"], n["ci"], n["body"]])
    assert _ids(plan.frontier) == _ids([n["e"]])  # Y is read only by the invariant exp(Y)
    assert _ids(plan.roots) == _ids([n["body"]])
    assert operands(loop) == (X, n["e"])  # init args, then the frontier
    assert loop_plan(loop) is plan  # cached per region


def test_post_order_of_a_loop_lists_its_outer_operands_not_its_body() -> None:
    loop, n = _simple_loop()
    root = ops.neg(loop)
    assert _ids(post_order([root])) == _ids([X, Y, n["e"], loop, root])


def test_loop_roots_and_invariant_roots() -> None:
    i, acc = Var("i", i64[()]), Var("acc", f32[4])
    # a no-carry loop whose body is invariant: nothing runs per iteration
    e = ops.exp(Y)
    no_carry = GridRegionExpr(2, i, (), (), e, ())
    plan = loop_plan(no_carry)
    assert loop_roots(no_carry) == (e,)
    assert plan.schedule == () and _ids(plan.frontier) == _ids([e])
    # a carry passed through unchanged: the phi is its own yield
    same = GridRegionExpr(2, i, (X,), (acc,), acc, (acc,))
    plan = loop_plan(same)
    assert _ids(plan.schedule) == _ids([acc]) and plan.frontier == ()
    # a carry replaced by an invariant value every iteration
    reset = GridRegionExpr(2, i, (X,), (acc,), e, (e,))
    assert loop_plan(reset).schedule == () and _ids(loop_plan(reset).frontier) == _ids([e])


def test_multi_carry_loop_roots_are_the_yield_values() -> None:
    i, a, b = Var("i", i64[()]), Var("a", f32[4]), Var("b", f32[4])
    ya, yb = ops.add(a, b), ops.mul(a, Y)
    loop = GridRegionExpr(2, i, (X, Y), (a, b), Tuple((ya, yb)), (ya, yb))
    plan = loop_plan(loop)
    assert _ids(plan.roots) == _ids([ya, yb])
    assert _ids(plan.schedule) == _ids([a, b, ya, yb])
    assert _ids(plan.frontier) == _ids([Y])


def test_nested_loop_depending_on_the_outer_index_is_variant_in_the_outer_body() -> None:
    i, acc = Var("i", i64[()]), Var("acc", f32[4])
    j, inner_acc = Var("j", i64[()]), Var("inner_acc", f32[4])
    hoisted = ops.exp(Y)
    uses_i = ops.cast(ops.dim_add(i, j), dtype=f32)  # reads the outer index inside the inner loop
    inner_body = ops.add(ops.add(inner_acc, uses_i), hoisted)
    inner = GridRegionExpr(2, j, (acc,), (inner_acc,), inner_body, (inner_body,))
    # a second inner loop that depends on neither i nor acc: invariant in the outer body
    k, kacc = Var("k", i64[()]), Var("kacc", f32[4])
    kbody = ops.add(kacc, ops.cast(k, dtype=f32))
    independent = GridRegionExpr(2, k, (Y,), (kacc,), kbody, (kbody,))
    outer_body = ops.add(inner, independent)
    outer = GridRegionExpr(3, i, (X,), (acc,), outer_body, (outer_body,))

    inner_plan = loop_plan(inner)
    # in the inner scope the outer index is invariant: it enters through the frontier
    assert _ids(inner_plan.frontier) == _ids([i, hoisted])
    assert any(n is uses_i for n in inner_plan.schedule)
    assert operands(inner) == (acc, i, hoisted)

    outer_plan = loop_plan(outer)
    assert any(n is inner for n in outer_plan.schedule)  # variant: reads i (and acc)
    assert all(n is not independent for n in outer_plan.schedule)
    assert _ids(outer_plan.frontier) == _ids([hoisted, independent])  # computed once, outside
    assert operands(outer) == (X, hoisted, independent)
    # the outer scope never sees the inner bodies
    order = post_order([outer])
    assert all(n is not inner_body and n is not kbody and n is not uses_i for n in order)
    assert _ids(order) == _ids([X, Y, hoisted, independent, outer])


def test_use_counts_count_reads_and_outputs() -> None:
    a = ops.add(X, X)
    b = ops.mul(a, a)
    order = post_order([b])
    counts = use_counts(order, [b, a])
    assert counts[id(X)] == 2 and counts[id(a)] == 3 and counts[id(b)] == 1


def _reference_post_order(roots: list[object]) -> list[int]:
    """The recursive definition post_order implements iteratively (small graphs only)."""
    out: list[int] = []
    seen: set[int] = set()

    def walk(node: object) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        for child in operands(node):  # type: ignore[arg-type]
            walk(child)
        out.append(id(node))

    for root in roots:
        walk(root)
    return out


_picks = st.lists(st.tuples(st.sampled_from(["add", "neg", "tuple", "get"]), st.integers(0, 99), st.integers(0, 99)), max_size=25)


@settings(max_examples=60, deadline=None)
@given(picks=_picks, roots=st.lists(st.integers(0, 99), min_size=1, max_size=3))
def test_post_order_matches_the_recursive_definition(picks: list[tuple[str, int, int]], roots: list[int]) -> None:
    nodes: list[object] = [X, Y]
    for kind, a, b in picks:
        lhs, rhs = nodes[a % len(nodes)], nodes[b % len(nodes)]
        if kind == "add":
            nodes.append(ops.add(lhs, rhs))  # type: ignore[arg-type]
        elif kind == "neg":
            nodes.append(ops.neg(lhs))  # type: ignore[arg-type]
        elif kind == "tuple":
            nodes.append(Tuple((lhs, rhs, lhs)))  # type: ignore[arg-type]
        else:
            nodes.append(TupleGetItem(lhs, 0))  # type: ignore[arg-type]
    chosen = [nodes[r % len(nodes)] for r in roots]
    assert _ids(post_order(chosen)) == _reference_post_order(chosen)  # type: ignore[arg-type]
