"""Second order through a helper whose residuals hold integers: the trip count of a loop that
may break, an index array. Differentiating generated code again must keep those integers:
the entry of every derivative made ``as_real`` of each differentiated parameter, so the
residual tuple's trip count became a float (``TypeError: slice indices must be integers``
in ``_range1[:_n1]``, fuzz seed 7707023237). Now only the user's own parameters are made
real. Checked against finite differences of ``srcad.grad`` (forward over reverse, reverse
over reverse with the pullback called twice); an integer argument is refused at both orders.
"""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads


def check_second_order(f, x):
    check_grads(f, (x,))
    gradient = srcad.grad(f)
    u = np.random.default_rng(6).standard_normal(np.shape(x))
    eps = 1e-5
    numeric = (gradient(x + eps * u) - gradient(x - eps * u)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(f)(x, u), numeric, rtol=1e-5, atol=1e-7)
    check_grads(gradient, (np.asarray(x, float),))


def _rows_until(b):
    s = 0.0
    for k, row in enumerate((b / (1.5 + b ** 2)).reshape((4, 3))):
        if row[k % 3] > 0.3:
            break
        s = s + np.sum(np.sin(row) * row[k % 3])
    return s


def helper_loop_breaks(e):
    return _rows_until(e * e)


def _gathered(b):
    order = np.argsort(b)
    picked = b[order[:3]]
    return np.sum(picked ** 3) * np.max(b)


def helper_saves_index_array(e):
    return _gathered(np.cos(e))


def _counted(b):
    k = 0
    s = b[0] * 1.0
    while s < 2.0 and k < 6:
        s = s + np.tanh(b[k % 4] * s)
        k = k + 1
    return s * b[1]


def helper_while_counts(e):
    return _counted(e * 0.5) + _counted(e[::-1])


X = np.array([[0.2, -0.5, 0.7], [0.1, 0.4, -0.3], [0.9, -0.8, 0.25], [0.05, 0.6, -0.45]])


@pytest.mark.parametrize("f, x", [(helper_loop_breaks, X), (helper_loop_breaks, X * 3.0),
                                  (helper_saves_index_array, X.ravel()), (helper_while_counts, X[0, :].repeat(2)[:4])],
                         ids=["loop-breaks", "loop-breaks-late", "index-array", "while-counts"])
def test_second_order_through_helpers_with_integer_residuals(f, x):
    check_second_order(f, x)


def test_integer_argument_refused_at_both_orders():
    # an integer array differentiated is refused (srcad.arguments' allowlist), by the gradient
    # and by second order alike; the same values as floats are differentiated
    x = np.array([1, 2, 0, 3])
    u = np.array([0.5, -1.0, 0.25, 2.0])
    with pytest.raises(srcad.errors.ArgumentError, match="only with respect to floats"):
        srcad.grad(helper_while_counts)(x)
    with pytest.raises(srcad.errors.ArgumentError, match="only with respect to floats"):
        srcad.hvp(helper_while_counts)(x, u)
    gradient = srcad.grad(helper_while_counts)
    xf = x.astype(float)
    eps = 1e-5
    numeric = (gradient(xf + eps * u) - gradient(xf - eps * u)) / (2 * eps)
    np.testing.assert_allclose(srcad.hvp(helper_while_counts)(xf, u), numeric, rtol=1e-5, atol=1e-7)
