"""srcad.checkpointed keeps about 2·√n states instead of n: peak memory of the adjoint of a
2,000-step loop over a 1,000-float state, measured with tracemalloc (after a first call has
compiled the code), is a small part of the plain loop's. The bound is generous: the ideal
ratio is about 90 / 2,000 states."""
import tracemalloc

import numpy as np
import pytest

import srcad


def explicit_euler(u, dt, n):
    for t in srcad.checkpointed(range(n)):
        u = u + dt * np.sin(u)
    return np.sum(u * u)


def explicit_euler_plain(u, dt, n):
    for t in range(n):
        u = u + dt * np.sin(u)
    return np.sum(u * u)


def peak_bytes(run):
    run()  # compiles
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("how", ["grad", "vjp"])
def test_peak_memory_of_a_long_loop(how):
    u, n = np.linspace(0.0, 1.0, 1000), 2000

    def run(f):
        if how == "grad":
            return lambda: srcad.grad(f)(u, 1e-3, n)
        return lambda: srcad.vjp(f, u, 1e-3, n)[1](1.0)

    checkpointed, plain = peak_bytes(run(explicit_euler)), peak_bytes(run(explicit_euler_plain))
    assert plain > n * u.nbytes  # the plain adjoint keeps every state
    assert checkpointed < 0.2 * plain, (checkpointed, plain)
    np.testing.assert_array_equal(srcad.grad(explicit_euler)(u, 1e-3, n), srcad.grad(explicit_euler_plain)(u, 1e-3, n))
