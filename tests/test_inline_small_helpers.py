"""A small helper of the same module called in a loop (``softmin3`` of soft-DTW, ``lorenz``
of an RK4 step) is inlined: its adjoint has no call boundary per iteration. Every other
helper stays a call. Both kinds are checked against finite differences in every mode, and
swapping an inlined helper's code in place (IPython's ``%autoreload``) recompiles."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes
from srcad.testing import check_grads

RNG = np.random.default_rng(3)
X, Y = RNG.random(5), RNG.random(4)


def softmin3(a, b, c, gamma):
    """A soft minimum, written as soft-DTW writes it."""
    m = min(a, b, c)
    s = np.exp(-(a - m) / gamma) + np.exp(-(b - m) / gamma) + np.exp(-(c - m) / gamma)
    return m - gamma * np.log(s)


def soft_dtw(x, y):
    n, m = x.shape[0], y.shape[0]
    R = np.full((n + 1, m + 1), 1e10)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            R[i, j] = (x[i - 1] - y[j - 1]) ** 2 + softmin3(R[i - 1, j], R[i, j - 1], R[i - 1, j - 1], 0.7)
    return R[n, m]


def lorenz(s, sigma):
    dx = sigma * (s[1] - s[0])
    dy = s[0] * (28.0 - s[2]) - s[1]
    dz = s[0] * s[1] - 8.0 / 3.0 * s[2]
    return np.array([dx, dy, dz])


def rk4(s0, sigma):
    s, h = s0, 0.01
    for _ in range(20):
        k1 = lorenz(s, sigma)
        k2 = lorenz(s + 0.5 * h * k1, sigma)
        k3 = lorenz(s + 0.5 * h * k2, sigma)
        k4 = lorenz(s + h * k3, sigma)
        s = s + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(s ** 2)


def inlined(f, *args):
    """Is no user function called through a forward/backward pair in ``f``'s adjoint?"""
    d = srcad.differentiable(f, wrt=tuple(range(len(args))))
    d.adjoint(*args, 1.0)
    return "_forward(" not in d.adjoint_source and "_backward(" not in d.adjoint_source


@pytest.mark.parametrize("wrt", [0, 1])
def test_soft_dtw_helper_inlined(wrt):
    check_all_modes(soft_dtw, (X, Y), wrt=wrt)
    assert inlined(soft_dtw, X, Y)


def running_min(x):
    R = np.zeros(x.shape[0] + 1)
    for i in range(1, x.shape[0] + 1):
        a = R[i - 1]
        b = x[i - 1] * a + 0.5
        m = min(a, b)
        R[i] = m * np.sin(a) + b
    return R[-1]


def repeated_products(x):
    """``best`` is an element of ``V`` pushed in the inner loop and kept past ``V[t] = ...``:
    its push is a copy (second order was refused without it; found by an adversarial probe)."""
    V = np.zeros(x.shape[0])
    V[0] = x[0]
    for t in range(1, x.shape[0]):
        best = V[t - 1]
        for _ in range(2):
            best = best * x[t]
        V[t] = best + 0.1
    return V[-1]


def test_element_kept_past_an_update_of_its_array():
    check_all_modes(repeated_products, (np.array([0.3, 0.8, 1.1, 0.9]),))


def test_elements_of_an_array_are_saved_without_copies():
    """``R[i - 1]``, copied once before ``R[i]`` is stored (what differentiating the adjoint
    again needs), is pushed as that copy; ``min(a, b)`` is one of them, not a list holding
    them, so nothing is copied deeply."""
    x = np.array([0.3, 0.9, -0.4, 0.7])
    check_all_modes(running_min, (x,))
    d = srcad.differentiable(running_min)
    d.adjoint(x, 1.0)
    assert "deepcopy(" not in d.adjoint_source and "append(copy_value(" not in d.adjoint_source


@pytest.mark.parametrize("wrt", [0, 1])
def test_rk4_helper_inlined(wrt):
    check_all_modes(rk4, (np.array([1.0, 1.2, 0.8]), 10.0), wrt=wrt)
    assert inlined(rk4, np.array([1.0, 1.2, 0.8]), 10.0)


# ---- helpers that stay calls --------------------------------------------------------------

scale = 3.0


def reads_scale(a):
    return np.sin(a) * scale


def caller_binds_scale(x):
    total = 0.0
    for k in range(3):
        scale = k + 1.0  # a local of the caller: the helper's global 'scale' is another value
        total = total + reads_scale(x * scale)
    return np.sum(total)


def with_default(a, b=2.0):
    return np.tanh(a) * b


def calls_default(x):
    total = 0.0
    for _ in range(3):
        total = total + with_default(x)
    return np.sum(total)


def looping(a):
    out = a
    for _ in range(2):
        out = np.sin(out)
    return out


def nested(a):
    c = reads_scale(a) * a
    return c


def calls_looping_and_nested(x):
    total = 0.0
    for _ in range(2):
        total = total + looping(x + total) + nested(x - total)
    return np.sum(total)


@pytest.mark.parametrize("f", [caller_binds_scale, calls_default, calls_looping_and_nested])
def test_other_helpers_stay_calls(f):
    x = np.array([0.3, -0.2])
    check_all_modes(f, (x,))
    assert not inlined(f, x)


def test_a_helper_outside_a_loop_stays_a_call():
    def once(x):
        return np.sum(reads_scale(x) * 2.0)
    check_grads(once, (np.array([0.4, 0.1]),))
    assert not inlined(once, np.array([0.4, 0.1]))


def twice(a):
    return 2.0 * np.sin(a)


def thrice(a):
    return 3.0 * np.cos(a)


def calls_twice(x):
    total = 0.0
    for _ in range(2):
        total = total + twice(x)
    return np.sum(total)


def test_swapping_an_inlined_helpers_code_recompiles():
    g = srcad.grad(calls_twice)
    np.testing.assert_allclose(g(0.3), 4.0 * np.cos(0.3))
    assert inlined(calls_twice, 0.3)
    saved = twice.__code__
    try:
        twice.__code__ = thrice.__code__  # what IPython's %autoreload does to an edited function
        np.testing.assert_allclose(g(0.3), -6.0 * np.sin(0.3))
        np.testing.assert_allclose(srcad.grad(calls_twice)(0.3), -6.0 * np.sin(0.3))
    finally:
        twice.__code__ = saved
    np.testing.assert_allclose(g(0.3), 4.0 * np.cos(0.3))
