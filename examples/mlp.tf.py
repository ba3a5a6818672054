# A two-layer MLP: the first program of the README's tour.

@entry
def mlp(x: f32[B, 64], w1: f32[64, 256], w2: f32[256, 64]) -> f32[B, 64]:
    h = matmul(x, w1)
    a = silu(h)
    return matmul(a, w2)
