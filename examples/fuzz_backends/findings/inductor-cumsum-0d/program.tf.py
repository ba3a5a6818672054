def f():
    for k2, acc_1 in grid(3):
        value(cumsum(k2, axis=0))
    return acc_1
