"""Second order (hvp, hessian, grad of grad) through the helpers that rules of np.cumprod,
np.median, np.select, np.linalg.matrix_power, np.linalg.svd(compute_uv=False), np.linalg.qr
(every mode but "raw"; probe 27A bug_06: its helper was refused) and of complex values (np.abs
of a complex value, .imag) emit, against finite differences of the gradient."""
import numpy as np
import pytest

import srcad

R = np.random.default_rng(0).standard_normal((12, 3)) * 0.2 + 0.003
TARGET = np.array([1.0, 0.5, 0.2, 0.1, 0.05])


def compounded_wealth(w):
    wealth = np.cumprod(1.0 + R @ w)
    return -np.log(wealth[-1]) + np.sum(wealth ** 2) + 0.5 * np.sum(w ** 2)


def cumprod_rows(x):
    return np.sum(np.cumprod(x, axis=1) ** 2)


def cumprod_with_zero(x):
    y = x.copy()
    y[1] = 0.0
    return np.sum(np.cumprod(y) ** 2 * x)


def robust_center(x):
    return np.sum((x - np.median(x)) ** 2) + np.sum(x ** 3)


def median_rows(x):
    return np.sum(np.median(x, axis=1) ** 3)


def selected(x):
    return np.sum(np.select([x > 0, x < -0.5], [x ** 3, np.sin(x)], x ** 2) ** 2)


def markov(p):
    return np.sum(np.linalg.matrix_power(p, 3)[0] ** 2)


def inverse_power(p):
    return np.sum(np.linalg.matrix_power(p, -2) ** 2)


def singular_values_cubed(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) ** 3)


def hermitian_singular_values(a):
    return np.sum(np.linalg.svd(a + a.T, compute_uv=False, hermitian=True) ** 3)


def qr_both_factors(a):
    q, r = np.linalg.qr(a)
    corner = np.diagonal(r[..., :2, :2], axis1=-2, axis2=-1)
    return np.sum(np.abs(corner)) + np.sum(q * np.tanh(q)) + np.sum(r[..., 0, :] ** 3)


def qr_r_only(a):
    return np.sum(np.linalg.qr(a, mode="r") ** 2 * a[..., :1, :])


def qr_complete_determined_part(a):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(q[:, :3] ** 3) + np.sum(r ** 2 * r)


def spectral_loss(x):
    power = np.abs(np.fft.rfft(x)) ** 2 / len(x)
    return np.sum((power - TARGET) ** 2)


def spectral_loss_parts(x):
    spectrum = np.fft.rfft(x)
    power = (spectrum.real ** 2 + spectrum.imag ** 2) / len(x)
    return np.sum((power - TARGET) ** 2)


def lowpass_energy(x):
    return np.sum(np.fft.rfft(x, n=16).real ** 2)


rng = np.random.default_rng(3)
BOTH = [(compounded_wealth, np.full(3, 0.3)), (cumprod_rows, rng.standard_normal((3, 4))),
        (cumprod_with_zero, rng.standard_normal(5)), (robust_center, rng.standard_normal(5)),
        (median_rows, rng.standard_normal((3, 4))), (selected, rng.standard_normal(6)),
        (markov, rng.random((3, 3))), (inverse_power, rng.random((3, 3)) + np.eye(3)),
        (singular_values_cubed, rng.standard_normal((3, 3))), (singular_values_cubed, rng.standard_normal((2, 4))),
        (singular_values_cubed, rng.standard_normal((2, 4, 3))), (hermitian_singular_values, rng.standard_normal((3, 3))),
        (qr_both_factors, rng.standard_normal((3, 3)) + 3 * np.eye(3)), (qr_both_factors, rng.standard_normal((4, 3))),
        (qr_both_factors, rng.standard_normal((2, 4))), (qr_both_factors, rng.standard_normal((2, 3, 3))),
        (qr_r_only, rng.standard_normal((4, 3))), (qr_complete_determined_part, rng.standard_normal((5, 3)))]
COMPLEX = [(spectral_loss, rng.standard_normal(8)), (spectral_loss_parts, rng.standard_normal(8)),
           (lowpass_energy, rng.standard_normal(8))]


def gradient_difference(f, x, p, h=1e-6):
    g = srcad.grad(f)
    return (g(x + h * p) - g(x - h * p)) / (2 * h)


def second_difference(f, x, p, h=1e-4):
    return (f(x + h * p) - 2 * f(x) + f(x - h * p)) / h ** 2


@pytest.mark.parametrize("f, x", BOTH + COMPLEX, ids=lambda v: getattr(v, "__name__", ""))
def test_hvp_and_hessian_match_finite_differences(f, x):
    p = np.random.default_rng(7).standard_normal(x.shape)
    expected = gradient_difference(f, x, p)
    np.testing.assert_allclose(srcad.hvp(f)(x, p), expected, rtol=1e-4, atol=1e-6)
    hessian = srcad.hessian(f)(x)
    np.testing.assert_allclose(np.tensordot(hessian, p, p.ndim), expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.sum(p * np.tensordot(hessian, p, p.ndim)), second_difference(f, x, p),
                               rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("f, x", BOTH, ids=lambda v: getattr(v, "__name__", ""))
def test_grad_of_grad_matches_finite_differences(f, x):
    p = np.random.default_rng(8).standard_normal(x.shape)
    along = srcad.grad(lambda y: np.sum(srcad.grad(f)(y) * p))(x)
    np.testing.assert_allclose(along, gradient_difference(f, x, p), rtol=1e-4, atol=1e-6)
    jacobian = srcad.jacobian(srcad.grad(f))(x)
    np.testing.assert_allclose(np.tensordot(jacobian, p, p.ndim), gradient_difference(f, x, p), rtol=1e-4, atol=1e-6)


def test_trust_ncg_with_hessp_on_compounded_wealth():
    import scipy.optimize
    start = np.full(3, 0.3)
    found = scipy.optimize.minimize(compounded_wealth, start, jac=srcad.grad(compounded_wealth),
                                    hessp=srcad.hessp(compounded_wealth), method="trust-ncg")
    reference = scipy.optimize.minimize(compounded_wealth, start, method="BFGS")
    assert found.success
    np.testing.assert_allclose(found.x, reference.x, atol=1e-4)


def singular_vectors(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(u[:, 0] ** 2 * s[0]) + np.sum(vt ** 3)


def test_svd_vectors_refused_at_second_order_at_the_users_line():
    a = np.random.default_rng(4).standard_normal((3, 3))
    srcad.grad(singular_vectors)(a)  # first order works
    with pytest.raises(srcad.SrcadError, match=r"test_second_order_library_23.py:\d+: srcad does not differentiate "
                                               r"np.linalg.svd with compute_uv=True to second order"):
        srcad.hvp(singular_vectors)(a, a)
