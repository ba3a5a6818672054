"""Round trips of hand-written programs and of every op's docstring examples: parse → print →
parse is structurally equal, the print is a fixed point, and both parses evaluate bitwise
identically (hir.md §text)."""

import pytest
import torch

import text_programs as programs
from text_helpers import evaluates_identically, round_trip, same_values
from ir.catalogue_examples import example_function, example_ids, op_examples
from tfexec import LoadedModule, check_equivalence, evaluate, infer_types
from tfexec.ir.ops.base import Op
from tfexec.text import parse, print_ir


@pytest.mark.parametrize("name", sorted(programs.ALL))
def test_program_round_trips_and_type_checks(name: str) -> None:
    first, second, _ = round_trip(programs.ALL[name], f"{name}.tf.py")
    for module in (first, second):
        for fn in module.functions.values():
            infer_types(fn)


OP_EXAMPLES = op_examples()


@pytest.mark.parametrize(("cls", "program"), OP_EXAMPLES, ids=example_ids(OP_EXAMPLES))
def test_every_op_example_round_trips_and_evaluates_identically(cls: type[Op], program: str) -> None:
    """Every op of the catalogue, through its docstring's examples (nothing to list here)."""
    first, second, _ = round_trip(program, f"{cls.name}.tf.py")
    assert f"{cls.name}(" in print_ir(first)
    (a,), (b,) = first.functions.values(), second.functions.values()
    _, inputs = example_function(program)
    infer_types(a)
    infer_types(b)
    evaluates_identically(a, b, *inputs)
    assert check_equivalence(b, *inputs).ok


def test_elementwise_evaluates_identically_and_like_torch() -> None:
    first, second, _ = round_trip(programs.ELEMENTWISE)
    inputs = programs.elementwise_inputs()
    evaluates_identically(first.functions["elementwise"], second.functions["elementwise"], *inputs)
    x, y, m, i = inputs
    w, _, ints = evaluate(first.functions["elementwise"], *inputs)  # type: ignore[misc]
    assert torch.equal(torch.where(m, w, x), w)
    assert torch.equal(ints, w.to(torch.int64) + i)


def test_shapes_evaluate_identically() -> None:
    first, second, _ = round_trip(programs.SHAPES)
    evaluates_identically(first.functions["shapes"], second.functions["shapes"], *programs.shapes_inputs())


def test_distribution_and_dim_ops_evaluate_identically() -> None:
    first, second, _ = round_trip(programs.DISTRIBUTION)
    inputs = programs.distribution_inputs()
    evaluates_identically(first.functions["dist"], second.functions["dist"], *inputs)
    d, s = evaluate(first.functions["dist"], *inputs)  # type: ignore[misc]
    assert torch.equal(d, inputs[0])
    n = 7
    assert int(s) == min((((n + 3 - 1) * n) // 2) % 5, max(n, 1))


def test_loops_evaluate_identically() -> None:
    first, second, _ = round_trip(programs.LOOPS)
    for name, inputs in programs.loops_inputs().items():
        evaluates_identically(first.functions[name], second.functions[name], *inputs)
    a, b = programs.loops_inputs()["tiled_matmul"]
    assert torch.allclose(evaluate(first.functions["tiled_matmul"], a, b), a @ b, atol=1e-4)  # type: ignore[arg-type]
    (x,) = programs.loops_inputs()["running"]
    s, m, last, whole0 = evaluate(first.functions["running"], x)  # type: ignore[misc]
    assert torch.allclose(s, x.sum(0)) and torch.equal(m, x.max(0).values)
    assert torch.equal(last, x[-1]) and torch.equal(whole0, s)


def test_module_with_constants_children_and_calls_evaluates_identically() -> None:
    first, second, _ = round_trip(programs.MODULE, "model.tf.py")
    reading = programs.module_reading()
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(4))
    a, b = LoadedModule.from_reading(first, reading), LoadedModule.from_reading(second, reading)
    assert same_values(evaluate(a, x), evaluate(b, x))
    assert same_values(evaluate(a.child("attn"), x), evaluate(b.child("attn"), x))
    assert first.entry == "main" and first.child("attn").entry == "forward"
    assert dict(first.all_constants()) == {
        "wq": first.constants["wq"], "layers.0.weight": first.constants["layers.0.weight"],
        "attn.wk": first.child("attn").constants["wk"], "attn.inner.bias": first.child("attn.inner").constants["bias"],
    }


def test_the_spec_example_prints_as_authored() -> None:
    text = programs.LOOPS.split("\ndef running")[0]
    printed = print_ir(parse(text))
    assert printed == (
        "def tiled_matmul(a: f32[128, K], b: f32[K, 128]) -> f32[128, 128]:\n"
        "    acc0 = full(shape=(128, 128), value=0.0, dtype=f32)\n"
        "    for k, acc in grid(K // 32, acc0):\n"
        "        t = dim_mul(k, 32)\n"
        "        pa = slice(a, (0, t), sizes=(128, 32))\n"
        "        pb = slice(b, (t, 0), sizes=(32, 128))\n"
        "        carry(add(acc, matmul(pa, pb)))\n"
        "    return acc\n"
    )


def test_printed_module_layout() -> None:
    _, _, printed = round_trip(programs.MODULE)
    lines = printed.splitlines()
    assert lines[:2] == ["wq: f32[4, 4] = const()", "layers_0_weight: f32[4] = const('layers.0.weight')"]
    assert "class attn:" in lines and "    class inner:" in lines
    assert lines[lines.index("def double(x: f32[S, 4]) -> f32[S, 4]:") - 1] == ""
    assert "@entry" in lines and lines[lines.index("@entry") + 1].startswith("def main(")


def test_weak_literals_and_constants_round_trip() -> None:
    text = '''
def consts(x: f16[2]) -> f16[1, 2]:
    a = add(x, 0.5)
    b = add(a, -3)
    c = add(b, True)
    d = add(c, float("inf"))
    e = add(d, float("-inf"))
    f = add(e, float("nan"))
    g = add(f, -0.0)
    h = add(g, constant([1.5, float("nan")], dtype=f16))
    i = add(h, constant(2, dtype=f16))
    j = add(i, constant([[True, False]], type=b1[1, 2] @ Layout((2,))))
    k = add(j, constant(3, type=i32[()], weak=True))
    return add(k, constant([7], dtype=u8, shape=(1, 1)))
'''
    first, second, printed = round_trip(text)
    x = torch.tensor([1.0, -2.0], dtype=torch.float16)
    evaluates_identically(first.functions["consts"], second.functions["consts"], x)
    assert 'add(d, float("-inf"))' in printed and "add(g, constant([1.5, nan" not in printed
    assert "constant([1.5, float(\"nan\")], dtype=f16)" in printed
    assert "constant([[True, False]], type=b1[1, 2] @ Layout((2,)))" in printed


def test_tuples_projections_and_unpacking_round_trip() -> None:
    text = '''
def tuples(x: f32[2], p: (f32[2], (i64[()], f32[2]))) -> (f32[2], i64[()]):
    inner = p[1]
    t = (x, inner[1], ())
    single = (x,)
    u, v = inner
    return (add(t[0], single[0]), u)
'''
    first, second, printed = round_trip(text)
    inputs = (torch.ones(2), (torch.zeros(2), (torch.tensor(3), torch.ones(2))))
    evaluates_identically(first.functions["tuples"], second.functions["tuples"], *inputs)
    assert "(x,)" in printed and "()" in printed


def test_dims_are_not_folded() -> None:
    text = '''
def dims(x: f32[B * 2, K // 32, min(B, 3), max(K, 1) - 1, 2 * 3, B % 4 + -1]) -> f32[B * 2, K // 32, min(B, 3), max(K, 1) - 1, 2 * 3, B % 4 + -1]:
    return x
'''
    first, _, printed = round_trip(text)
    assert "2 * 3" in printed and "B % 4 + -1" in printed
    assert str(first.functions["dims"].params[0].type).startswith("f32[B * 2, K // 32, min(B, 3), max(K, 1) - 1")


def test_layout_types_round_trip() -> None:
    text = '''
def laid(x: f32[128, 64] @ Layout((8, 16, 64)), y: f32[8] @ ShardLayout(Mesh((2, 2), ("x", "y")), (Split(0), Replicate()))) -> (f32[128, 64] @ Layout((8, 16, 64)), f32[8] @ ShardLayout(Mesh((2, 2), ("x", "y")), (Split(0), Replicate()))):
    return (x, y)
'''
    first, _, _ = round_trip(text)
    t = first.functions["laid"].params[1].type
    assert str(t) == "f32[8] @ ShardLayout(Mesh((2, 2), ('x', 'y')), (Split(0), Replicate()))"


def test_empty_module_and_empty_child() -> None:
    assert print_ir(parse("")) == "\n"
    round_trip('class empty:\n    """An empty module."""\n')
