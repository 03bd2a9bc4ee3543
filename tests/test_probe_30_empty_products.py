"""What probe 30 found in scientific code: products and running products over no entries (a
batch of zero rows, an empty window) crashed in every mode with NumPy's IndexError or
ValueError from srcad's product helpers (a -1 reshape of a size-0 array, running products
started from an entry that is not there). Their derivatives are arrays with no entries."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp


def zero_rows(X):
    E = X[:0]
    return (np.prod(E, axis=0) @ X[0] + np.sum(np.prod(E, axis=1)) + np.sum(np.cumprod(E, axis=0))
            + np.sum(X ** 3))


def zero_columns(X):
    E = X[:, :0]
    return np.sum(np.prod(E, axis=1) * X[:, 0] ** 2) + np.sum(np.cumprod(E, axis=1)) + np.sum(np.cumprod(X, axis=1))


def flat_empty(X):
    return np.prod(X[:0]) * np.sum(X ** 2) + np.sum(np.cumprod(X[:0])) + np.prod(X)


PROGRAMS = [zero_rows, zero_columns, flat_empty]
X = np.array([[0.7, -1.2, 0.4], [1.1, 0.3, -0.8]])


def numeric_hessian_form(f, x, u, w, e=1e-4):
    return (f(x + e * u + e * w) - f(x + e * u - e * w) - f(x - e * u + e * w) + f(x - e * u - e * w)) / (4 * e * e)


@pytest.mark.parametrize("f", PROGRAMS)
def test_first_order_in_both_modes(f):
    x = X.copy()
    check_grads(f, (x,), modes=("rev",))
    check_jvp(f, (x,))
    np.testing.assert_array_equal(x, X)


@pytest.mark.parametrize("f", PROGRAMS)
def test_second_order_forward_over_reverse_and_reverse_over_reverse(f):
    rng = np.random.default_rng(30)
    u, w = rng.standard_normal(X.shape), rng.standard_normal(X.shape)
    numeric = numeric_hessian_form(f, X, u, w)
    assert np.sum(srcad.hvp(f)(X, u) * w) == pytest.approx(numeric, rel=1e-5, abs=1e-6)
    hessian = srcad.jacobian(srcad.grad(f))(X)
    assert np.einsum("ij,ijkl,kl->", w, hessian, u) == pytest.approx(numeric, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_gradient_of_an_empty_argument_is_empty(axis):
    def f(E, y):
        return np.sum(np.prod(E, axis=axis)) * y + np.sum(np.cumprod(E, axis=axis)) + y ** 2

    E = np.zeros((0, 3))
    gE, gy = srcad.grad(f, wrt=(0, 1))(E, 1.5)
    assert gE.shape == (0, 3)
    assert gy == pytest.approx(2 * 1.5 + np.sum(np.prod(E, axis=axis)))  # products of no entries are 1
    _, tangent = srcad.jvp(f, (E, 1.5), (np.zeros((0, 3)), 1.0))
    assert tangent == pytest.approx(gy)
