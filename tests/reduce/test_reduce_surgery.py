"""Program surgery: every reduced program computes exactly tfexec's values of the nodes it keeps."""

from pathlib import Path

import pytest
import torch
from hypothesis import given, strategies as st

import tfexec
from tfexec import Function
from tfexec.compare import EXACT, compare_tensors
from tfexec.reduce import ReductionError, reduce_failing
from tfexec.reduce._flatten import FlatProgram, flatten
from tfexec.reduce._surgery import build
from tfexec.testing import Program, programs

ROOT = Path(__file__).resolve().parents[2]


def _leaves(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    assert isinstance(value, tuple)
    return [t for v in value for t in _leaves(v)]


def _sinks(flat: FlatProgram, kept: tuple[int, ...]) -> list[int]:
    read = set().union(*(flat.reads[k] for k in kept))
    return [k for k in kept if k not in read]


def _assert_computes_golden(flat: FlatProgram, kept: tuple[int, ...]) -> None:
    candidate = build(flat, kept)
    if candidate is None:
        return
    assert tfexec.print_ir(candidate.function) == candidate.text  # what is tested is what is written
    got = _leaves(tfexec.evaluate(candidate.function, *candidate.inputs))
    want = [t for k in _sinks(flat, kept) for t in _leaves(flat.golden[k])]
    assert len(got) == len(want), candidate.text
    for w, g in zip(want, got):
        assert compare_tensors(w, g, EXACT).reason is None, candidate.text


@given(programs(max_ops=8, weak_values=True, handlers=False, cast_inputs=False), st.randoms(use_true_random=False))
def test_any_kept_set_computes_the_golden_values_of_its_outputs(program: Program, rnd: "object") -> None:
    """Random programs (loops, calls with their own dims, tuples, weak scalars) and random
    kept sets: the reduced program's outputs are tfexec's values of the kept sinks, bit for bit."""
    import random

    assert isinstance(rnd, random.Random)
    flat = flatten(program.target, program.inputs)
    n = len(flat.candidates)
    _assert_computes_golden(flat, tuple(range(n)))
    for _ in range(3):
        _assert_computes_golden(flat, tuple(sorted(rnd.sample(range(n), rnd.randint(1, n)))))


def _parse(text: str) -> Function:
    module = tfexec.parse(text, filename="t.tf.py")
    return module.functions[module.entry or next(iter(module.functions))]


def test_calls_are_inlined_with_the_callee_s_dims_renamed() -> None:
    fn = _parse('''
def rows(t: f32[N, 4]) -> f32[N, 1]:
    return reshape(reduce(t, kind="sum", axes=(1,)), shape=(N, 1))

@entry
def f(x: f32[B, 4]) -> f32[B, 1]:
    r = rows(x)
    return add(r, 1.0)
''')
    flat = flatten(fn, (torch.randn(3, 4),))
    text = tfexec.print_ir(flat.function)
    assert "rows(" not in text and "shape=(B, 1)" in text and "N" not in text
    assert [type(c.target).__name__ for c in flat.candidates if isinstance(c, tfexec.Call)] == ["Reduce", "Reshape", "Add"]
    reshape = flat.candidates[1]
    assert reshape.span is not None and reshape.span.binding == "r"  # the inlined root keeps the call's name


def test_weights_become_parameters_with_their_values() -> None:
    llama = tfexec.load_module(ROOT / "examples" / "llama_block")
    flat = flatten(llama, (torch.randn(4, 64),))
    names = [p.name for p in flat.function.params]
    assert names[0] == "x" and "attn_wq" in names and flat.origins[names.index("attn_wq")] == "weight attn.wq"
    assert torch.equal(flat.inputs[names.index("attn_wq")], llama.constant("attn.wq"))


def test_a_tuple_parameter_becomes_one_parameter_per_field() -> None:
    fn = _parse('''
def f(p: (f32[2], f32[2])) -> f32[2]:
    return add(p[0], p[1])
''')
    flat = flatten(fn, ((torch.ones(2), torch.zeros(2)),))
    assert [p.name for p in flat.function.params] == ["p_0", "p_1"]
    assert flat.origins == ("input p field 0", "input p field 1")


TILED = '''
def f(a: f32[8, K], b: f32[K, 8]) -> f32[8, 8]:
    acc0 = full(shape=(8, 8), value=0.0, dtype=f32)
    for k, acc in grid(K // 4, acc0):
        t = dim_mul(k, 4)
        pa = slice(a, (0, t), sizes=(8, 4))
        pb = slice(b, (t, 0), sizes=(4, 8))
        carry(add(acc, matmul(pa, pb)))
    return relu(acc)
'''


def test_a_loop_is_kept_whole_or_cut_whole() -> None:
    flat = flatten(_parse(TILED), (torch.randn(8, 8), torch.randn(8, 8)))
    kinds = [type(c).__name__ for c in flat.candidates]
    assert kinds == ["Call", "GridRegionExpr", "Call"]  # full, the loop (body and all), relu
    kept = build(flat, (1,))
    assert kept is not None and "for k, acc in grid(K // 4, acc0):" in kept.text and kept.names == ("a", "b", "acc0")
    cut = build(flat, (2,))
    assert cut is not None and "grid" not in cut.text and cut.names == ("acc",)


def test_an_unread_parameter_stays_when_it_alone_binds_a_dim() -> None:
    fn = _parse('''
def f(x: f32[S, 2]) -> f32[S]:
    r = arange(extent=S)
    return add(cast(r, dtype=f32), reduce(x, kind="sum", axes=(1,)))
''')
    flat = flatten(fn, (torch.randn(5, 2),))
    arange = [i for i, c in enumerate(flat.candidates) if "arange" in tfexec.describe_expr(c)]
    candidate = build(flat, tuple(arange))
    assert candidate is not None and candidate.names == ("x",)
    assert candidate.origins == ("input x (not read: it binds S)",)


def test_the_original_must_fail() -> None:
    fn = _parse("def f(x: f32[2]) -> f32[2]:\n    return neg(x)\n")
    with pytest.raises(ReductionError, match="the predicate says the original program does not fail"):
        reduce_failing(fn, torch.ones(2), fails=lambda f, xs: False)


def test_a_predicate_that_raises_or_returns_a_non_bool_is_an_error() -> None:
    fn = _parse("def f(x: f32[2]) -> f32[2]:\n    return neg(x)\n")

    def crash(f: Function, xs: tuple[torch.Tensor, ...]) -> bool:
        raise RuntimeError("backend exploded")

    with pytest.raises(ReductionError, match="the predicate raised RuntimeError: backend exploded"):
        reduce_failing(fn, torch.ones(2), fails=crash)
    with pytest.raises(ReductionError, match="returned Tensor"):
        reduce_failing(fn, torch.ones(2), fails=lambda f, xs: torch.tensor(True))  # type: ignore[arg-type, return-value]


def test_tfexec_must_evaluate_the_original_for_golden_values() -> None:
    fn = _parse("def f(x: f32[4]) -> f32[2]:\n    return slice(x, (3,), sizes=(2,))\n")
    with pytest.raises(ReductionError, match="tfexec cannot evaluate the program on these inputs"):
        reduce_failing(fn, torch.ones(4), fails=lambda f, xs: True)


def test_wrong_inputs_are_named() -> None:
    fn = _parse("def f(x: f32[4]) -> f32[4]:\n    return neg(x)\n")
    with pytest.raises(ReductionError, match=r"expects 1 input\(s\) \(x\), got 2"):
        reduce_failing(fn, torch.ones(4), torch.ones(4), fails=lambda f, xs: True)
    with pytest.raises(ReductionError, match="input x must be a tensor, got str"):
        reduce_failing(fn, "x", fails=lambda f, xs: True)
    with pytest.raises(tfexec.ArgumentTypeError):
        reduce_failing(fn, torch.ones(4), fails=3)  # type: ignore[arg-type]
