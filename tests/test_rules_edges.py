"""Rules at the edges of their domains (probe 13B): values where a formula is 0 · ∞, second
derivatives that a constant branch or a dense zero tangent got wrong, stacks of matrices, and
arguments that let a library overwrite its input. Every value against finite differences."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

scipy = pytest.importorskip("scipy")
from scipy import linalg, special  # noqa: E402


def second_derivative_fd(f, x, eps=1e-5):
    """The Hessian of scalar ``f`` at ``x`` by central differences of srcad's gradient."""
    g = srcad.grad(f)
    cols = [(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]
    return np.array(cols).T


def assert_second_order(f, x, rtol=1e-5, atol=1e-6):
    H = srcad.hessian(f)(x)
    np.testing.assert_allclose(H, second_derivative_fd(f, x), rtol=rtol, atol=atol)
    v = np.linspace(0.5, 1.5, x.size)
    np.testing.assert_allclose(srcad.hvp(f)(x, v), H @ v, rtol=rtol, atol=atol)


def powers(x):
    return np.sum(x[:, None] ** np.arange(3) * np.array([1.0, 2.0, 3.0]))


def first_power(x):
    return np.sum(x ** 1) + np.sum(x ** 0.0)


def test_the_slope_of_x_to_the_zero_at_zero_is_zero():
    x = np.array([0.0, 0.5, -1.5])
    np.testing.assert_allclose(srcad.grad(powers)(x), 2.0 + 6.0 * x)  # 1 + 2x + 3x²: no 0 · 0⁻¹
    check_jvp(powers, (x,))
    np.testing.assert_allclose(srcad.hessian(first_power)(x), np.zeros((3, 3)))


def power(b, p):
    return b ** p


def through_a_helper(x):
    return np.sum(power(x, 3)) + np.sum(power(x, 2.0))


def test_second_order_through_a_helper_given_a_constant_exponent():
    """A negative base: the constant exponent's zero tangent times log(x) was nan."""
    x = np.array([-0.5, 0.4, -1.2])
    np.testing.assert_allclose(srcad.hessian(through_a_helper)(x), np.diag(6 * x + 2.0))
    assert_second_order(through_a_helper, x)


def test_second_derivative_of_sinc_at_zero():
    f = lambda x: np.sum(np.sinc(x))  # noqa: E731
    x = np.array([0.0, 0.3, -1.7])
    H = srcad.hessian(f)(x)
    assert H[0, 0] == pytest.approx(-np.pi ** 2 / 3)
    assert_second_order(f, x)


def test_reciprocal_gamma_at_the_poles_of_gamma():
    f = lambda x: np.sum(special.rgamma(x))  # noqa: E731
    x = np.array([0.0, -1.0, -2.0, 0.7, -1.5])
    np.testing.assert_allclose(srcad.grad(f)(x)[:3], [1.0, -1.0, 2.0])  # (-1)ⁿ n!, not 0 · ∞
    check_grads(f, (x,), modes=("rev",))
    check_jvp(f, (x,))
    assert_second_order(f, x, rtol=1e-4)


def hermitian_pinv(a):
    return np.sum(np.linalg.pinv(a, hermitian=True) * np.arange(9.0).reshape(3, 3))


def test_pinv_of_one_triangle():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)  # not symmetric: pinv reads its lower triangle
    check_grads(hermitian_pinv, (a,), modes=("rev",))
    check_jvp(hermitian_pinv, (a,))
    s = a + a.T
    assert_second_order(lambda m: hermitian_pinv(m.reshape(3, 3)), s.ravel(), rtol=1e-4, atol=1e-5)


def test_scipy_det_and_expm_of_a_stack_of_matrices():
    rng = np.random.default_rng(0)
    stack = rng.uniform(-1, 1, (3, 3, 3)) + 2 * np.eye(3)  # as many matrices as rows: no broadcast hides it
    det = lambda a: np.sum(linalg.det(a) ** 2)  # noqa: E731
    np.testing.assert_allclose(srcad.grad(det)(stack), srcad.grad(lambda a: np.sum(np.linalg.det(a) ** 2))(stack))
    check_grads(det, (stack,), modes=("rev",))
    check_jvp(det, (stack,))
    expm = lambda a: np.sum(linalg.expm(a) ** 2)  # noqa: E731
    check_grads(expm, (stack[:2] * 0.3,), modes=("rev",))
    check_jvp(expm, (stack[:2] * 0.3,))


def log_abs_det_from_lu(a):
    lu, piv = linalg.lu_factor(a)
    return np.sum(np.log(np.abs(np.diag(lu))))


def test_second_order_through_lu_factor():
    a = np.array([[2.0, 0.3, -0.4], [0.5, 1.5, 0.2], [-0.3, 0.8, 2.5]])
    assert_second_order(lambda m: log_abs_det_from_lu(m.reshape(3, 3)), a.ravel(), rtol=1e-4, atol=1e-5)


def test_overwriting_the_input_is_refused():
    a = np.array([[2.0, 0.3], [0.5, 1.5]])
    kept = a.copy()
    with pytest.raises(srcad.SrcadSyntaxError, match="overwrite_a other than False"):
        srcad.grad(lambda m: linalg.det(m, overwrite_a=True))(a)
    with pytest.raises(srcad.SrcadSyntaxError, match="overwrite_b other than False"):
        srcad.grad(lambda m: np.sum(linalg.solve(kept, m, overwrite_b=True)))(a)
    np.testing.assert_array_equal(a, kept)


def test_hypot_and_arctan2_of_large_numbers():
    big = np.array([1e200, -3e200])
    np.testing.assert_allclose(srcad.jvp(lambda x: np.hypot(x, 2e200), (big,), (np.ones(2),))[1],
                               big / np.hypot(big, 2e200))
    g = srcad.grad(lambda a, b: np.arctan2(a, b), wrt=(0, 1))(1e200, 2e200)  # Python floats: ** overflowed
    np.testing.assert_allclose(g, [0.4e-200, -0.2e-200])  # b / (a² + b²), -a / (a² + b²)


def top_two(x):
    return np.sum(np.take_along_axis(x, np.argpartition(x, 2, axis=1), axis=1)[:, :2] ** 2)


def peak(x):
    return np.sin(x[np.nanargmax(x)] ** 3)


def smoothed(x):
    spectrum = np.fft.rfft(x) * np.array([1.0, 0.5, 0.25, 0.0])
    return np.sum(np.fft.irfft(spectrum, n=6) ** 2)  # real: squaring it is real arithmetic


def test_indices_and_real_spectra_are_what_they_are():
    """np.argpartition and np.nanargmax give indices (they were refused as having no rule), and
    np.fft.irfft a real array (it was refused as complex)."""
    x = np.array([[0.3, 2.0, -1.0, 1.5], [1.0, -2.0, 0.5, 0.1]])
    check_grads(top_two, (x,), modes=("rev",))
    check_jvp(top_two, (x,))
    check_grads(peak, (x[0],))
    assert_second_order(peak, x[0], rtol=1e-4)
    signal = np.array([0.3, -1.2, 0.8, 0.5, -0.1, 0.9])
    check_grads(smoothed, (signal,), modes=("rev",))
    check_jvp(smoothed, (signal,))


def summed_onto(x, y):
    return np.sum(sum([x[0], x[1]], y) ** 2)  # numbers summed onto a start array: the sum is y's shape


def test_builtin_sum_whose_start_broadcasts_the_items():
    x, y = np.array([1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(srcad.grad(summed_onto, wrt=0)(x, y), [2 * np.sum(3 + y)] * 2)
    check_grads(summed_onto, (x, y), wrt=(0, 1), modes=("rev",))
    check_jvp(summed_onto, (x, y), wrt=(0, 1))
    check_jvp(srcad.grad(summed_onto, wrt=0), (x, y), wrt=0, rtol=1e-4, atol=1e-6)


def float_power_helper(a, p):
    return np.float_power(a, p)


def through_float_power(x):
    return np.sum(float_power_helper(x, 2)) + np.sum(np.float_power(x, 0.0))


def test_float_power_as_power_at_its_edges():
    """A constant exponent given to a helper: hvp and hessian were nan at a negative base (probe 15A)."""
    x = np.array([-0.5, 0.4, -1.2])
    np.testing.assert_allclose(srcad.grad(through_float_power)(x), 2 * x)  # no 0 · 0⁻¹ from x ** 0
    np.testing.assert_allclose(srcad.hessian(through_float_power)(x), 2 * np.eye(3))
    assert_second_order(through_float_power, x)
