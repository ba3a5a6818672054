"""Hand-written HIR programs for the text-form tests: together they use every construct of
the grammar and every op of the catalogue, and each comes with inputs to evaluate it on."""

import torch

from ir.programs_families import FAMILY_PROGRAMS

ELEMENTWISE = '''
def elementwise(x: f32[4, 8], y: f32[4, 8], m: b1[4, 8], i: i64[4, 8]) -> (f32[4, 8], b1[4, 8], i64[4, 8]):
    s = add(x, y)
    d = sub(s, 1.5)
    p = mul(d, y)
    q = div(p, add(abs(y), 1.0))
    r = pow(abs(q), 2)
    mx = maximum(r, x)
    mn = minimum(mx, 0.5)
    u = neg(mn)
    e = exp(tanh(u))
    lg = log(add(e, 1.0))
    sq = sqrt(abs(lg))
    rs = rsqrt(add(sq, 1.0))
    sg = sigmoid(rs)
    rl = relu(sg)
    si = silu(rl)
    g1 = gelu(si, approximate="tanh")
    g2 = gelu(g1)
    er = erf(g2)
    sn = sin(er)
    cs = cos(sn)
    c1 = eq(x, y)
    c2 = ne(x, y)
    c3 = lt(x, y)
    c4 = le(x, 0.0)
    c5 = gt(x, y)
    c6 = ge(x, -0.25)
    both = logical_and(logical_or(c1, c2), logical_or(c3, c4))
    either = logical_or(both, logical_and(c5, c6))
    w = where(m, cs, x)
    ci = cast(w, dtype=i64)
    return (w, logical_or(either, m), add(ci, i))
'''


def elementwise_inputs() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(4, 8, generator=g), torch.randn(4, 8, generator=g)
    return x, y, torch.rand(4, 8, generator=g) > 0.5, torch.randint(-5, 5, (4, 8), generator=g)


SHAPES = '''
def shapes(x: f32[B, 4, 8], w: f32[8, 16], g: f32[16], b: f32[16], idx: i64[3]) -> (f32[B, 4, 8], f32[()], i64[B, 4], f32[B, 64], f32[B, 16, 4], f32[8, 3], i64[B, 4], f32[B * 2]):
    h = matmul(x, w)
    n1 = rms_norm(h, g, axes=(-1,), eps=1e-06)
    n2 = layer_norm(n1, g, b, axes=(-1,), eps=1e-05)
    n3 = layer_norm(n2)
    n4 = rms_norm(n3)
    sm = softmax(n4, axis=-1)
    r = reduce(sm, kind="sum", axes=(1,), keepdims=True)
    mean = reduce(sm, kind="mean")
    mx = reduce(sm, kind="max", axes=(0, 1))
    mn = reduce(sm, kind="min", axes=(2,))
    pr = reduce(sm, kind="prod", axes=())
    am = argmax(sm, axis=2)
    flat = reshape(pr, shape=(B, 64))
    tr = transpose(sm, perm=(0, 2, 1))
    bc = broadcast_to(r, shape=(B, 4, 16))
    cc = concat(sm, bc, axis=1)
    sl = slice(cc, (0, 2, 0), sizes=(B, 4, 8), strides=(1, 1, 2))
    tk = take(w, idx, axis=1)
    fu = full(shape=(B, 4), value=2, dtype=i64)
    ar = arange(extent=B * 2, dtype=f32)
    total = add(mean, add(reduce(mx, kind="sum"), reduce(mn, kind="sum")))
    return (sl, total, add(am, fu), flat, tr, tk, argmax(sl, axis=-1, keepdims=False), ar)
'''


def shapes_inputs() -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1)
    return (
        torch.randn(3, 4, 8, generator=g), torch.randn(8, 16, generator=g), torch.rand(16, generator=g) + 0.5,
        torch.randn(16, generator=g), torch.tensor([0, 15, 7]),
    )


DISTRIBUTION = '''
def dist(x: f32[8, 4] @ Layout((2, 16)), n: i64[()]) -> (f32[8, 4], i64[()]):
    a = reshard(x, layout=Layout((2, 4, 4)))
    b = reshard(a, layout=ShardLayout(Mesh((2,), ("x",)), (Replicate(),), Layout((32,))))
    c = local(b)
    d = reshard(c, layout=None)
    i = dim_add(n, 3)
    j = dim_sub(i, 1)
    k = dim_mul(j, n)
    q = dim_floordiv(k, 2)
    r = dim_mod(q, 5)
    s = dim_min(r, dim_max(n, 1))
    return (d, s)
'''


def distribution_inputs() -> tuple[torch.Tensor, ...]:
    return torch.arange(32.0).reshape(8, 4), torch.tensor(7)


LOOPS = '''
def tiled_matmul(a: f32[128, K], b: f32[K, 128]) -> f32[128, 128]:
    acc0 = full(shape=(128, 128), value=0.0, dtype=f32)
    for k, acc in grid(K // 32, acc0):          # induction var, then one name per carry
        t = dim_mul(k, 32)
        pa = slice(a, (0, t), sizes=(128, 32))
        pb = slice(b, (t, 0), sizes=(32, 128))
        carry(add(acc, matmul(pa, pb)))         # the yield values
    return acc

def running(x: f32[N, 4]) -> (f32[4], f32[4], f32[4], f32[4]):
    zero = full(shape=(4,), value=0.0, dtype=f32)
    for i, (s, m) in (both := grid(N, zero, full(shape=(4,), value=float("-inf"), dtype=f32))):
        row = reshape(slice(x, (i, 0), sizes=(1, 4)), shape=(4,))
        carry(add(s, row), maximum(m, row))
    for j, last in grid(N):
        value(reshape(slice(x, (j, 0), sizes=(1, 4)), shape=(4,)))
    pair = both
    return (s, m, last, pair[0])

def nested(x: f32[4, 4]) -> f32[4, 4]:
    for i, outer in grid(3, x):
        scale = cast(i, dtype=f32)
        for j, inner in grid(2, outer, types=(f32[4, 4],)):
            step = add(inner, mul(scale, cast(j, dtype=f32)))
            carry(step, body=step)
        carry(inner)
    return outer
'''


def loops_inputs() -> dict[str, tuple[torch.Tensor, ...]]:
    g = torch.Generator().manual_seed(2)
    return {
        "tiled_matmul": (torch.randn(128, 64, generator=g), torch.randn(64, 128, generator=g)),
        "running": (torch.randn(5, 4, generator=g),),
        "nested": (torch.randn(4, 4, generator=g),),
    }


MODULE = '''
"""A module with constants, a child module, function calls and an entry."""
wq: f32[4, 4] = const()
w_layer: f32[4] = const("layers.0.weight")

class attn:
    wk: f32[4, 4] = const()

    class inner:
        bias: f32[4] = const()

    @entry
    def forward(x: f32[S, 4]) -> f32[S, 4]:
        return add(matmul(x, wk), inner.bias)

def double(x: f32[S, 4]) -> f32[S, 4]:
    return add(x, x)

def pair(x: f32[S, 4]) -> (f32[S, 4], f32[S, 4]):
    return (double(x), neg(x))

@entry
def main(x: f32[S, 4]) -> f32[S, 4]:
    """The entry step."""
    q = matmul(x, wq)
    a, b = pair(q)
    k = matmul(a, attn.wk)
    c = constant([[1.0, 2.0, 3.0, 4.0]], dtype=f32)
    h = constant(0.5, dtype=f16)
    z = constant([], dtype=f32, shape=(0, 4))
    e = constant([3], dtype=i64, shape=())
    n = cast(constant(1.5, dtype=f16, weak=True), dtype=f32)
    y = add(mul(add(k, b), c), add(add(cast(h, dtype=f32), cast(e, dtype=f32)), n))
    both = concat(y, z, axis=0)
    return add(mul(both, w_layer), attn.inner.bias)
'''


def module_reading() -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    return {
        "wq": torch.randn(4, 4, generator=g), "layers.0.weight": torch.randn(4, generator=g),
        "attn.wk": torch.randn(4, 4, generator=g), "attn.inner.bias": torch.randn(4, generator=g),
    }


ALL = {
    "elementwise": ELEMENTWISE, "shapes": SHAPES, "distribution": DISTRIBUTION, "loops": LOOPS, "module": MODULE,
    "families": FAMILY_PROGRAMS,
}
