# A tiled matmul: a grid loop over K in tiles of 32 whose slice starts are computed
# from the loop index (dim_mul), accumulating into one carried value.

@entry
def tiled_matmul(a: f32[128, K], b: f32[K, 128]) -> f32[128, 128]:
    acc0 = full(shape=(128, 128), value=0.0, dtype=f32)
    for k, acc in grid(K // 32, acc0):
        t = dim_mul(k, 32)
        pa = slice(a, (0, t), sizes=(128, 32))
        pb = slice(b, (t, 0), sizes=(32, 128))
        carry(add(acc, matmul(pa, pb)))
    return acc
