# A Llama-style decoder block: RMSNorm, RoPE, causal attention with softmax, SwiGLU.
# d_model 64, 4 heads of 16, SwiGLU hidden 172; the sequence length S is symbolic.
# Weights are module constants named as a PyTorch state_dict names them.

attn_norm: f32[64] = const('attn_norm.weight')
wq: f32[64, 64] = const('attn.wq')
wk: f32[64, 64] = const('attn.wk')
wv: f32[64, 64] = const('attn.wv')
wo: f32[64, 64] = const('attn.wo')
mlp_norm: f32[64] = const('mlp_norm.weight')
w_gate: f32[64, 172] = const('mlp.w_gate')
w_up: f32[64, 172] = const('mlp.w_up')
w_down: f32[172, 64] = const('mlp.w_down')
inv_freq: f32[8] = const('rope.inv_freq')


def heads(t: f32[S, 64]) -> f32[4, S, 16]:
    split = reshape(t, shape=(S, 4, 16))
    return transpose(split, perm=(1, 0, 2))


def rope(t: f32[4, S, 16], cos_t: f32[S, 16], sin_t: f32[S, 16]) -> f32[4, S, 16]:
    first = slice(t, (0, 0, 0), sizes=(4, S, 8))
    second = slice(t, (0, 0, 8), sizes=(4, S, 8))
    rotated = concat(neg(second), first, axis=-1)
    return add(mul(t, cos_t), mul(rotated, sin_t))


@entry
def block(x: f32[S, 64]) -> f32[S, 64]:
    pos = reshape(cast(arange(extent=S), dtype=f32), shape=(S, 1))
    angles = mul(pos, reshape(inv_freq, shape=(1, 8)))
    cos_t = concat(cos(angles), cos(angles), axis=-1)
    sin_t = concat(sin(angles), sin(angles), axis=-1)

    xn = rms_norm(x, attn_norm, axes=(-1,), eps=1e-06)
    q = rope(heads(matmul(xn, wq)), cos_t, sin_t)
    k = rope(heads(matmul(xn, wk)), cos_t, sin_t)
    v = heads(matmul(xn, wv))
    scores = mul(matmul(q, transpose(k, perm=(0, 2, 1))), 0.25)
    rows = reshape(arange(extent=S), shape=(S, 1))
    cols = reshape(arange(extent=S), shape=(1, S))
    masked = where(le(cols, rows), scores, float("-inf"))
    probs = softmax(masked, axis=-1)
    attn = reshape(transpose(matmul(probs, v), perm=(1, 0, 2)), shape=(S, 64))
    h = add(x, matmul(attn, wo))

    hn = rms_norm(h, mlp_norm, axes=(-1,), eps=1e-06)
    gate = silu(matmul(hn, w_gate))
    up = matmul(hn, w_up)
    return add(h, matmul(mul(gate, up), w_down))
