"""The numba lowering's allocation rewrites (``passes/numba_allocations.py``): a list display
read only as values becomes a tuple, anything else keeps its list; a gradient the function
made itself is finished without a copy, and nothing else is (the caller's cotangent, a value
bound twice, a gradient returned twice). Compiled code is compared with the NumPy backend."""
import gast
import numpy as np
import pytest

import srcad
from srcad import astutil as A
from srcad import runtime
from srcad.passes.numba_allocations import fewer_allocations
from srcad.rules.numpy_shapes import array_grad

NAMES = {"np": np, "np.array": np.array, "np.stack": np.stack, "len": len, "array_grad": array_grad,
         "container_grad": runtime.container_grad, "zeros_like": runtime.zeros_like, "finish": runtime.finish}


def rewritten(src):
    return A.to_source(fewer_allocations(gast.parse(src).body[0], NAMES.get))


def test_a_list_read_as_values_becomes_a_tuple():
    out = rewritten("def f(a, b, g):\n    t = [a, b]\n    y = np.array(t)\n    n = len(t)\n"
                    "    d = container_grad(array_grad(g, t, y), t)\n    return y, (t, n, d[0], t[1])\n")
    assert "t = a, b" in out


@pytest.mark.parametrize("use", ["t.append(b)", "u = t", "y = np.stack(t)", "t[0] = b", "t = [b, a]",
                                 "y = t[i]", "return t, ()"])
def test_a_list_read_or_bound_otherwise_stays_a_list(use):
    out = rewritten(f"def f(a, b, i):\n    t = [a, b]\n    y = np.array(t)\n    {use}\n    return y, ()\n")
    assert "t = [a, b]" in out


def test_a_gradient_made_here_is_finished_without_a_copy_and_no_other():
    out = rewritten("def f(x, y, g):\n    dx = zeros_like(x)\n    dx[0] += g\n    dx *= 2.0\n    dy = g\n"
                    "    dz = x * g\n    dz = dz + 1.0\n    dw = x * g\n    du = x * g\n    du = g\n"
                    "    return finish(dx, x), finish(dy, y), finish(dz, x), finish(dw, x), finish(dw, y), "
                    "finish(du, x), finish(dz, x, True)\n")
    assert out.count("finish_owned(") == 1 and "finish_owned(dx, x)" in out


def lorenz(s, sigma, rho, beta):
    return np.array([sigma * (s[1] - s[0]), s[0] * (rho - s[2]) - s[1], s[0] * s[1] - beta * s[2]])


def euler(s, params, h, steps):
    for _ in range(steps):
        k = lorenz(s, params[0], params[1], params[2])
        s = s + h * k
    return np.sum(s * s)


def collect(x):
    out = []
    for i in range(x.shape[0]):
        pair = [x[i], x[i] * x[i]]
        pair.append(np.sin(x[i]))
        out.append(np.sum(np.array(pair)))
    return sum(out)


def passed_on(x):
    return x  # the gradient is the caller's cotangent: it must be copied, never handed back


@pytest.fixture
def numba():
    return pytest.importorskip("numba")


def test_compiled_code_with_tuples_matches_numpy(numba):
    args = (np.array([1.0, 1.0, 1.0]), np.array([10.0, 28.0, 8.0 / 3.0]), 0.001, 50)
    want = srcad.grad(euler, wrt=(0, 1))(*args)
    got = srcad.grad(euler, wrt=(0, 1), backend="numba")(*args)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(srcad.grad(collect, backend="auto")(x), srcad.grad(collect)(x), rtol=1e-12)


def test_a_compiled_gradient_is_never_the_callers_cotangent(numba):
    x, v = np.array([0.5, 2.0]), np.array([1.0, -1.0])
    pullback = srcad.vjp(passed_on, x, backend="numba")[1]
    g = pullback(v)
    assert not np.shares_memory(g, v)
    g[0] = 7.0
    assert v[0] == 1.0
