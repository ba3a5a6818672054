# Tiled flash attention for one head: an online softmax over key tiles of 16.
# The loop carries the running row maximum m, the running denominator l and the
# unnormalised output acc; each iteration reads one key/value tile whose start is
# computed from the loop index (dim_mul). `plain` is ordinary attention for comparison.


def plain(q: f32[S, 32], k: f32[T, 32], v: f32[T, 32]) -> f32[S, 32]:
    scores = mul(matmul(q, transpose(k, perm=(1, 0))), 0.17677669529663687)
    return matmul(softmax(scores, axis=-1), v)


@entry
def flash(q: f32[S, 32], k: f32[T, 32], v: f32[T, 32]) -> f32[S, 32]:
    m0 = full(shape=(S, 1), value=float("-inf"), dtype=f32)
    l0 = full(shape=(S, 1), value=0.0, dtype=f32)
    acc0 = full(shape=(S, 32), value=0.0, dtype=f32)
    for j, (m, l, acc) in grid(T // 16, m0, l0, acc0):
        start = dim_mul(j, 16)
        kt = slice(k, (start, 0), sizes=(16, 32))
        vt = slice(v, (start, 0), sizes=(16, 32))
        s = mul(matmul(q, transpose(kt, perm=(1, 0))), 0.17677669529663687)
        m_new = maximum(m, reduce(s, kind="max", axes=(-1,), keepdims=True))
        p = exp(sub(s, m_new))
        correction = exp(sub(m, m_new))
        l_new = add(mul(l, correction), reduce(p, kind="sum", axes=(-1,), keepdims=True))
        acc_new = add(mul(acc, correction), matmul(p, vt))
        carry(m_new, l_new, acc_new)
    return div(acc, l)
