"""Jacobians (both modes), Hessians and Hessian-vector products against finite differences."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_jvp


def checked_jacobian(fun, args, wrt, **tolerances):
    """The Jacobian column by column (shape y.shape + x.shape): the jvp along each unit
    direction of argument ``wrt``, each compared with central differences by ``check_jvp``."""
    x_shape = np.shape(args[wrt])
    columns = [check_jvp(fun, args, wrt, direction=e.reshape(x_shape), **tolerances)
               for e in np.eye(int(np.prod(x_shape)))]
    return np.stack(columns, axis=-1).reshape(np.shape(fun(*args)) + x_shape)


def layer(x, W):
    return np.tanh(W @ x) * x.sum()


def matrix_output(A, x):
    return np.exp(A * x) - A @ A


def rosenbrock(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def quadratic(x, A):
    return x @ A @ x


def log_sum_exp_with_branch(x):
    m = np.max(x)
    z = np.log(np.exp(x - m).sum()) + m
    if z > 1.0:
        z = z * z
    return z + np.prod(x[:3])


def looped_network(x, W):
    h = x
    total = 0.0
    for i in range(3):
        h = np.tanh(W @ h)
        if h.sum() > 0:
            total = total + (h ** 2).sum()
        else:
            total = total + h.sum() * x[0]
    return total


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_of_vector_function(mode, rng):
    x, W = rng.standard_normal(3), rng.standard_normal((4, 3))
    J = srcad.jacobian(layer, mode=mode)(x, W)
    assert J.shape == (4, 3)
    np.testing.assert_allclose(J, checked_jacobian(layer, (x, W), 0), rtol=1e-12, atol=1e-12)
    JW = srcad.jacobian(layer, wrt="W", mode=mode)(x, W)
    assert JW.shape == (4, 4, 3)
    np.testing.assert_allclose(JW, checked_jacobian(layer, (x, W), 1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_shape_is_output_shape_then_input_shape(mode, rng):
    A, x = rng.standard_normal((2, 2)), rng.standard_normal(2)
    J = srcad.jacobian(matrix_output, wrt=0, mode=mode)(A, x)
    assert J.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(J, checked_jacobian(matrix_output, (A, x), 0), rtol=1e-12, atol=1e-12)
    g = srcad.jacobian(rosenbrock, mode=mode)(x)  # scalar output: the gradient
    assert g.shape == (2,)
    np.testing.assert_allclose(g, srcad.grad(rosenbrock)(x))


def test_both_modes_agree_through_loops_and_branches(rng):
    x, W = rng.standard_normal(3), rng.standard_normal((3, 3)) * 0.8
    fwd = srcad.jacobian(looped_network, wrt=1, mode="fwd")(x, W)
    rev = srcad.jacobian(looped_network, wrt=1, mode="rev")(x, W)
    np.testing.assert_allclose(fwd, rev, rtol=1e-12, atol=1e-12)


def test_pytorch_tutorial_example():
    def f(x):
        y = np.zeros(2)
        y[0] = -x ** 3
        y[1] = 5 * x
        return y

    np.testing.assert_allclose(srcad.jacobian(f, mode="fwd")(1.0), [-3.0, 5.0])
    np.testing.assert_allclose(srcad.jacobian(f, mode="rev")(1.0), [-3.0, 5.0])


def checked_hessian(fun, args, wrt, rtol, atol):
    """The Hessian column by column: Hessian-vector products (jvp of the gradient) along unit
    directions, each compared with central differences of the gradient."""
    return checked_jacobian(srcad.grad(fun, wrt), args, wrt, eps=1e-5, rtol=rtol, atol=atol)


def test_rosenbrock_loop_hessian(rng):
    x = rng.standard_normal(5)
    H = srcad.hessian(rosenbrock)(x)
    assert H.shape == (5, 5)
    np.testing.assert_allclose(H, checked_hessian(rosenbrock, (x,), 0, rtol=1e-6, atol=1e-5), rtol=1e-12)
    np.testing.assert_allclose(H, H.T)
    # closed form at a point: the tridiagonal Rosenbrock Hessian
    x = np.array([1.0, 2.0, 0.5])
    expected = np.array([[1200 * 1 - 400 * 2 + 2, -400, 0], [-400, 200 + 1200 * 4 - 400 * 0.5 + 2, -800],
                         [0, -800, 200]])
    np.testing.assert_allclose(srcad.hessian(rosenbrock)(x), expected)


def test_quadratic_form_hessian_is_exact(rng):
    x, A = rng.standard_normal(4), rng.standard_normal((4, 4))
    np.testing.assert_allclose(srcad.hessian(quadratic)(x, A), A + A.T, rtol=1e-12)


@pytest.mark.parametrize("wrt", [0, 1])
def test_hessian_through_loops_branches_and_matmul(wrt, rng):
    x, W = rng.standard_normal(3), rng.standard_normal((3, 3)) * 0.8
    H = srcad.hessian(looped_network, wrt=wrt)(x, W)
    shape = np.shape((x, W)[wrt])
    assert H.shape == shape + shape
    np.testing.assert_allclose(H, checked_hessian(looped_network, (x, W), wrt, rtol=1e-5, atol=1e-6), rtol=1e-12)


def test_hessian_of_reductions(rng):
    x = rng.standard_normal(5)
    H = srcad.hessian(log_sum_exp_with_branch)(x)
    np.testing.assert_allclose(H, checked_hessian(log_sum_exp_with_branch, (x,), 0, rtol=1e-5, atol=1e-6),
                               rtol=1e-12)


def test_hvp_equals_hessian_times_vector(rng):
    x, W, v = rng.standard_normal(3), rng.standard_normal((3, 3)) * 0.8, rng.standard_normal(3)
    Hv = srcad.hvp(looped_network)(x, W, v)
    np.testing.assert_allclose(Hv, srcad.hessian(looped_network)(x, W) @ v, rtol=1e-10, atol=1e-12)
    V = rng.standard_normal((3, 3))
    HV = srcad.hvp(looped_network, wrt="W")(x, W, V)
    H = srcad.hessian(looped_network, wrt="W")(x, W)
    np.testing.assert_allclose(HV, np.tensordot(H, V, 2), rtol=1e-10, atol=1e-12)


def test_bad_arguments():
    with pytest.raises(ValueError):
        srcad.jacobian(rosenbrock, mode="sideways")
    with pytest.raises(ValueError):
        srcad.hvp(quadratic, wrt=(0, 1))(np.ones(2), np.eye(2), np.ones(2))  # one vector for two arguments


def eigenvalue_energy(A):
    return (np.linalg.eigvalsh(A) ** 2).sum()


def pad_energy(x):
    return (np.pad(x, 2) ** 3).sum()


def i0_sum(x):
    return np.i0(x).sum()


@pytest.mark.parametrize("fun,make", [
    (eigenvalue_energy, lambda rng: (lambda B: B @ B.T + 3 * np.eye(3))(rng.standard_normal((3, 3)))),
    (pad_energy, lambda rng: rng.standard_normal(4)),
    (i0_sum, lambda rng: np.array([0.3, 2.0, 6.0])),
])
def test_second_derivatives_through_library_rules(fun, make, rng):
    x = make(rng)
    H = srcad.hessian(fun)(x)
    np.testing.assert_allclose(H, checked_hessian(fun, (x,), 0, rtol=1e-5, atol=1e-5), rtol=1e-12)


def stores_through_repeats(x, e):
    S = np.zeros(3)
    S[[0, 0, 2]] = e  # position 0 keeps e[1]
    return (S * x).sum()


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_mixed_second_derivative_through_repeated_stores(mode):
    x, e = np.array([0.3, -0.2, 0.5]), np.array([1.0, 2.0, 3.0])
    J = srcad.jacobian(srcad.grad(stores_through_repeats, wrt=1), wrt=0, mode=mode)(x, e)
    np.testing.assert_array_equal(J, [[0, 0, 0], [1, 0, 0], [0, 0, 1]])


def cast_energy(x):
    y = (x * x).astype(np.float32)
    return (y.astype(np.float64) * x).sum()


def test_second_derivative_through_astype():
    x = np.array([0.5, -1.0, 2.0])
    H = srcad.hessian(cast_energy)(x)
    np.testing.assert_allclose(H, np.diag(6 * x), rtol=1e-6)
