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
