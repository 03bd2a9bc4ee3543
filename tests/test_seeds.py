"""The numbers PyTorch printed in the backward(gradient) tutorials, reproduced by
examples/seeds.py (imported here, so the demo and the test run the same code)."""
import numpy as np
import pytest

from conftest import load_example
from srcad.testing import check_grads


@pytest.fixture(scope="module")
def seeds():
    return load_example("seeds")


def test_linear_pullbacks(seeds):
    x = np.array([[2.0, 1.0]])
    M = np.array([[1.0, 2.0], [3.0, 4.0]])
    y, pullback = seeds.linear.vjp(x, M)
    np.testing.assert_array_equal(y, [[5.0, 8.0]])
    np.testing.assert_array_equal(pullback(np.array([[1.0, 0.0]])), [[1.0, 3.0]])
    np.testing.assert_array_equal(pullback(np.array([[0.0, 1.0]])), [[2.0, 4.0]])
    np.testing.assert_array_equal(pullback(np.array([[1.0, 1.0]])), [[3.0, 7.0]])


def test_square(seeds):
    assert seeds.square.adjoint(1.0) == 2.0 and isinstance(seeds.square.adjoint(1.0), float)
    assert seeds.square.adjoint(1.0, 100.0) == 200.0
    xs = np.linspace(-1, 1, 5)
    np.testing.assert_array_equal(seeds.square.adjoint(xs, np.ones(5)), [-2.0, -1.0, 0.0, 1.0, 2.0])


def test_builtin_sum(seeds):
    np.testing.assert_array_equal(seeds.total.grad(np.array([1.0, 2.0])), [1.0, 1.0])
    np.testing.assert_array_equal(seeds.total.adjoint(np.array([1.0, 2.0]), 100.0), [100.0, 100.0])


def test_weighted_and_rowwise(seeds):
    np.testing.assert_array_equal(seeds.weighted.grad(np.array([-1.0, 2.0]), np.array([3.0, 5.0])), [-6.0, 20.0])
    X = np.arange(6, dtype=float).reshape(3, 2)
    g = seeds.rowwise.adjoint(X, np.array([-1, 1]), np.ones(3))
    np.testing.assert_array_equal(g, [[-1.0, 1.0]] * 3)


def test_curve_components(seeds):
    y, pullback = seeds.curve.vjp(1.0)
    np.testing.assert_array_equal(y, [[-1.0, 5.0]])
    assert pullback(np.array([[1.0, 0.0]])) == -3.0
    assert pullback(np.array([[0.0, 1.0]])) == 5.0


def test_doubling_loop(seeds):
    x = np.array([1.2, -0.9, 1.5])
    v = np.array([0.1, 1.0, 0.0001])
    np.testing.assert_allclose(seeds.doubling.adjoint(x, v), 512 * v)
    check_grads(seeds.doubling, (x,))


def test_grid_layer(seeds):
    N = 9
    Y, X = np.mgrid[-4:4:N * 1j, -4:4:N * 1j]
    W = np.array([[0.5, -0.3]])
    b = np.array([0.1])
    Z = seeds.layer(X, Y, W, b)
    gX, gY = seeds.layer.adjoint(X, Y, W, b, np.ones_like(Z))
    assert gX.shape == gY.shape == (9, 9)
    s = 1 / (1 + np.exp(-(0.5 * X - 0.3 * Y + 0.1)))
    np.testing.assert_allclose(gX, 0.5 * s * (1 - s))
    np.testing.assert_allclose(gY, -0.3 * s * (1 - s))
    check_grads(seeds.layer, (X, Y, W, b), wrt=("X", "Y"))
