"""Forward mode over a generated adjoint: an adjoint that is still None (zero) has the scalar
tangent 0; where ``add_grads`` turned None + b into b, the sum's tangent kept that scalar, and a
later store into the adjoint buffer subscripted it (fuzz seed 20261183783375, hvp:
"'float' object is not subscriptable")."""
import numpy as np
import pytest

import srcad


def early_return_in_loop(s, w):
    s = [s @ s[[0, 2, 0]].sum(axis=0), s @ s[[0, 2, 0]].sum(axis=0)]
    for b in range(1, 2):
        return np.where(0.5, w[1:, ::2].sum(), w.sum())
    t = np.stack([np.dot(w, w.sum(axis=0)) for r in w.max(axis=0)])
    s, w = (w, s)
    return t[1, 1]


def early_return_other_branch(s, w):
    for b in range(1, 2):
        if np.sum(w) < -100.0:
            return np.sum(w[1:, ::2] ** 3)
        return np.sum(np.sin(w) * s)
    return w[1, 1]


@pytest.mark.parametrize("fn", [early_return_in_loop, early_return_other_branch])
def test_hvp_matches_finite_differences_of_the_gradient(fn):
    rng = np.random.default_rng(3)
    s, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    u = (rng.standard_normal((3, 4)), rng.standard_normal((3, 4)))
    grad = srcad.grad(fn, wrt=(0, 1))
    eps = 1e-6
    plus = grad(s + eps * u[0], w + eps * u[1])
    minus = grad(s - eps * u[0], w - eps * u[1])
    hv = srcad.hvp(fn, wrt=(0, 1))(s, w, u)
    for h, p, m in zip(hv, plus, minus):
        np.testing.assert_allclose(h, (p - m) / (2 * eps), rtol=1e-5, atol=1e-6)


def summed_terms(x):
    return sum([np.sum(np.sin(x * i)) for i in range(3)])


def calls_summed_terms(x):
    return summed_terms(x) * 2.0


def test_hvp_through_a_helper_that_loops_over_a_saved_range():
    """The helper's saved range had the scalar zero tangent, which its backward's jvp then
    iterated ("'float' object is not iterable")."""
    x, u, eps = np.array([0.3, 0.7]), np.array([1.0, -0.5]), 1e-6
    grad = srcad.grad(calls_summed_terms)
    expected = (grad(x + eps * u) - grad(x - eps * u)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(calls_summed_terms)(x, u), expected, rtol=1e-5, atol=1e-6)


def scaled_rows_clipped(x):
    tk = np.full((4, 3), 1.26)
    tk += x
    tk[[0, 2]] *= x[[0, 1, 2, 0]] @ tk
    tk = np.clip(tk, -0.5, 0.5)
    return [1.43, tk]


def test_a_second_pullback_call_sees_the_saved_values_unchanged():
    """The backward sweep restored rows into a value it had rebound to a saved residual
    (``tk = _tk_2; tk[rows] = ...``): the first call changed what the second read, a silent
    wrong gradient on every call after the first (fuzz seed 112301338638)."""
    x = np.array([0.536, -0.939, -0.591])
    v = [0.0, np.random.default_rng(2).standard_normal((4, 3))]
    d = srcad.differentiable(scaled_rows_clipped)
    _, pullback = d.vjp(x)
    first, second = pullback(v), pullback(v)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, d.adjoint(x, v), rtol=1e-12)
    eps, u = 1e-6, np.array([0.3, -0.2, 0.5])
    plus, minus = scaled_rows_clipped(x + eps * u)[1], scaled_rows_clipped(x - eps * u)[1]
    np.testing.assert_allclose(first @ u, np.sum(v[1] * (plus - minus)) / (2 * eps), rtol=1e-5, atol=1e-7)
