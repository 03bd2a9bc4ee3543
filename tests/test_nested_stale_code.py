"""A derivative of a derivative made once and called again follows the helpers it was made
from: rebinding a helper (``act = sin_act``) or swapping its code in place (IPython's
``%autoreload``) made ``srcad.grad(srcad.grad(f))``, ``srcad.adjoint(srcad.grad(f))`` and
``srcad.jacobian(srcad.grad(f), mode="rev")`` keep differentiating the old code, while the
first derivative followed (found by an adversarial probe). Checked against finite
differences of the first derivative, which is checked itself."""
import numpy as np
import pytest

import srcad


def tanh_act(z):
    return np.tanh(z)


def sin_act(z):
    return np.sin(z)


act = tanh_act


def called(x):
    return np.sum(act(x) ** 2)


def in_a_loop(x):  # act is inlined here
    s = 0.0
    for _ in range(2):
        x = act(x) + 0.1
        s = s + np.sum(x ** 2)
    return s


def fd_hessian(f, x, eps=1e-6):
    g = srcad.grad(f)
    return np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


X = np.array([0.3, -0.4, 0.9])
V = np.array([1.0, 0.5, -0.3])


@pytest.fixture
def restore_act():
    global act
    yield
    act = tanh_act
    tanh_act.__code__ = _TANH_CODE


_TANH_CODE = tanh_act.__code__


@pytest.mark.parametrize("f", [called, in_a_loop])
@pytest.mark.parametrize("change", ["rebind", "swap code"])
def test_second_derivatives_follow_the_helper(f, change, restore_act):
    global act
    adjoint = srcad.adjoint(srcad.grad(f))
    jacobian = srcad.jacobian(srcad.grad(f), mode="rev")
    np.testing.assert_allclose(adjoint(X, V), fd_hessian(f, X).T @ V, rtol=1e-5, atol=1e-7)
    jacobian(X)
    if change == "rebind":
        act = sin_act
    else:
        tanh_act.__code__ = sin_act.__code__
    expected = fd_hessian(f, X)
    assert not np.allclose(expected.T @ V, fd_hessian(lambda x: np.sum(np.tanh(x) ** 2), X).T @ V)
    np.testing.assert_allclose(adjoint(X, V), expected.T @ V, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(jacobian(X), expected, rtol=1e-5, atol=1e-7)
