"""Steady calls of functions that call a builtin's bound method (``np.multiply.outer``, an array's
``C.T.dot``): the time of one ``srcad.grad(f)(x)`` call once the code is made, best over a second
of calls. Such code was compiled again at every call until the twentieth stop (RESULTS.md).

    OMP_NUM_THREADS=1 python benchmarks/steady_calls.py
"""
import time

import numpy as np

import srcad

C = np.arange(16.0).reshape(4, 4) / 10


def f_dot(x):
    return np.sum(C.T.dot(C.dot(x)) + C.sum(axis=0) * x)


def f_outer(a):
    return np.sum(np.cos(np.multiply.outer(a, a)))


def per_call(grad, x, seconds=1.0):
    grad(x)  # made here
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < seconds or calls < 3:
        grad(x)
        calls += 1
    return (time.perf_counter() - start) / calls


if __name__ == "__main__":
    x = np.linspace(0.1, 0.9, 4)
    for f in (f_dot, f_outer):
        print(f"{f.__name__}: {per_call(srcad.grad(f), x) * 1e6:.0f} µs per call")
