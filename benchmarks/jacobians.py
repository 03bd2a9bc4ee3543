"""``jacobian(mode="rev")`` of f(x) = tanh(A @ x) * x, ℝ⁵⁰ → ℝ⁵⁰, against its closed form.

    python benchmarks/jacobians.py [--n 50] [--rounds 7]

One process, one BLAS thread. Three ways, each checked against the closed form first:
``srcad.jacobian(f)`` (one batched pullback of the 50 basis cotangents), the pullback of
one basis cotangent at a time (what ``jacobian(mode="rev")`` did before batching, and
still does for a program whose adjoint does not batch) and ``pullback.batched``
after one ``vjp``. Each is timed in alternating rounds; a way's time is its best round.
"""
import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # before NumPy is imported

import argparse  # noqa: E402
import sys  # noqa: E402
import timeit  # noqa: E402

import numpy as np  # noqa: E402

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # srcad from this checkout
import srcad  # noqa: E402

rng = np.random.default_rng(0)
A = np.empty((0, 0))  # set in main: f reads the global


def f(x):
    return np.tanh(A @ x) * x


def closed_form(x):
    t = np.tanh(A @ x)
    return np.diag(t) + (x * (1 - t ** 2))[:, None] * A


def one_at_a_time(x):
    y, pullback = srcad.vjp(f, x)
    return np.stack([pullback(e) for e in np.eye(y.size)])


def main():
    global A
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    A = rng.standard_normal((options.n, options.n)) / np.sqrt(options.n)
    x = rng.standard_normal(options.n)
    jacobian = srcad.jacobian(f)
    ways = {
        "closed form": lambda: closed_form(x),
        "srcad.jacobian (batched)": lambda: jacobian(x),
        "one cotangent at a time": lambda: one_at_a_time(x),
    }
    expected = closed_form(x)
    for name, call in ways.items():
        assert np.allclose(call(), expected), name
    best = {name: float("inf") for name in ways}
    numbers = {name: max(1, int(0.05 / timeit.Timer(call).timeit(1))) for name, call in ways.items()}
    for _ in range(options.rounds):
        for name, call in ways.items():
            best[name] = min(best[name], timeit.Timer(call).timeit(numbers[name]) / numbers[name])
    base = best["closed form"]
    print(f"jacobian of tanh(A @ x) * x, R^{options.n} -> R^{options.n}, one BLAS thread")
    for name, seconds in best.items():
        print(f"  {name:28s} {seconds * 1e6:9.1f} us   {seconds / base:6.2f}x the closed form")


if __name__ == "__main__":
    main()
