"""Text-form programs that use the ops of the families added after the first catalogue
together (rounding, math, activations, integer, arrays, vision, linear), with inputs.

``tests/text/text_programs.py`` lists them among the programs whose round trip the text tests
check; ``tests/ir/test_text_form_families.py``
evaluates both parses."""

import torch

FAMILY_PROGRAMS = '''
def elementwise_families(x: f32[4, 6], n: i32[4, 6], m: b1[4, 6]) -> (f32[4, 6], i32[4, 6], b1[4, 6]):
    r = add(floor(x), ceil(x))
    r2 = add(round(x, decimals=1), add(trunc(x), sign(x)))
    c = clamp(add(r, r2), -2.0, 2.0)
    e = add(log1p(abs(x)), expm1(c))
    l = add(log2(add(abs(x), 1.0)), log10(add(abs(x), 1.0)))
    t = add(atan(tan(c)), reciprocal(add(abs(x), 1.0)))
    a1 = add(elu(e, alpha=0.5), selu(l))
    a2 = add(celu(t, alpha=2.0), leaky_relu(a1, negative_slope=0.2))
    a3 = add(softplus(a2, beta=2.0, threshold=5.0), hardsigmoid(a2))
    a4 = add(hardswish(a3), mish(a3))
    q = add(floor_divide(n, 3), trunc_divide(n, -2))
    rm = add(remainder(n, 4), fmod(n, 3))
    bits = bitwise_xor(bitwise_and(q, rm), bitwise_or(n, 1))
    ib = bitwise_not(bits)
    p = logical_xor(isnan(x), isinf(x))
    mask = logical_or(logical_and(p, isfinite(x)), logical_not(m))
    return (a4, ib, mask)


def arrays(x: f32[4, 6], idx: i64[4, 2], rows: i64[3], mask: b1[4, 6]) -> (f32[4, 6], f32[4, 2], f32[3, 6], i64[4, 6], b1[4], f32[4]):
    cs = cumsum(x, axis=1)
    cp = cumprod(x, axis=0, dtype=f32)
    g = gather(cs, idx, axis=1)
    picked = index(cp, rows, axes=(0,))
    both = index(x, rows, constant([0, 5, 2], dtype=i64), axes=(0, 1))
    sc = scatter(x, idx, g, axis=1)
    sa = scatter_add(sc, idx, g, axis=1)
    fl = flip(sa, axes=(0,))
    ro = roll(fl, shifts=(1, -2), axes=(0, 1))
    tu = add(triu(ro, diagonal=1), tril(ro, diagonal=-1))
    d = diagonal(tu, offset=1)
    pd = pad(picked, pads=(1, 1), mode="constant", value=0.5)
    sl = slice(pd, (0, 1), sizes=(3, 6))
    s = sort(tu, axis=1, descending=True)
    order = argsort(s, axis=0)
    top = topk(s, k=2)
    where_top = argtopk(top, k=1, largest=False)
    anyrow = any(mask, axes=(1,))
    allrow = all(mask, axes=(1,), keepdims=True)
    nrm = vector_norm(tu, ord=2.0, axes=(1,))
    flags = logical_and(anyrow, reshape(allrow, shape=(4,)))
    att = attention(tu, ro, fl, is_causal=True, scale=0.5)
    proj = linear(x, tu, nrm)
    counts = histc(tu, bins=4, min=-2.0, max=2.0)
    return (add(tu, att), add(top, cast(where_top, dtype=f32)), add(sl, reduce(both, kind="sum")), order, flags, add(add(add(nrm, d), reduce(proj, kind="mean", axes=(1,))), counts))


def vision(img: f32[2, 4, 6, 6], w: f32[6, 2, 3, 3], b: f32[6], mean: f32[6], var: f32[6]) -> (f32[2, 6, 3, 3], f32[2, 6, 2, 2], f32[2, 6, 1, 1], f32[2, 6, 4, 6]):
    y = conv(img, w, b, stride=(2,), padding=(1,), groups=2)
    bn = batch_norm(y, mean, add(var, 1.0), b, mean, eps=0.001)
    gn = group_norm(bn, b, mean, groups=3)
    mp = max_pool(gn, kernel=(2, 2), stride=(1, 1))
    ap = avg_pool(gn, kernel=(2, 2), stride=(2, 2), padding=(1, 1), ceil_mode=True, count_include_pad=False)
    gp = adaptive_avg_pool(gn, output_size=(1, 1))
    up = interpolate(gn, size=(4, 6), mode="nearest")
    back = conv_transpose(gn, w, stride=(2,), padding=(1,), groups=3)
    return (gn, mp, gp, add(up, reduce(add(ap, reduce(back, kind="mean")), kind="mean")))
'''


def family_program_inputs() -> dict[str, tuple[torch.Tensor, ...]]:
    """Inputs for each function of ``FAMILY_PROGRAMS``, by name."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 6, generator=g)
    n = torch.randint(-9, 10, (4, 6), generator=g, dtype=torch.int32)
    m = torch.rand(4, 6, generator=g) > 0.5
    idx = torch.tensor([[0, 5], [1, 3], [2, 4], [5, 0]])
    return {
        "elementwise_families": (x, n, m),
        "arrays": (x, idx, torch.tensor([3, 0, 2]), m),
        "vision": (
            torch.randn(2, 4, 6, 6, generator=g), torch.randn(6, 2, 3, 3, generator=g), torch.randn(6, generator=g),
            torch.randn(6, generator=g), torch.rand(6, generator=g),
        ),
    }
