"""Linear-algebra rules at singular matrices and repeated eigen/singular values
(srcad/rules/linalg_conditioning.py): where the derivative exists it is computed (det's is the
adjugate, a projector on distinct eigenvectors is smooth), where it does not the rule refuses at
the user's line instead of returning rounding error, inf or NaN; a condition number of 1e6 is
still differentiated. Finite differences confirm the values; one-sided differences that disagree
show where there is no derivative."""
import numpy as np
import pytest
import scipy.linalg as sl

import srcad
from srcad.testing import check_grads, check_jvp

RNG = np.random.default_rng(7)
Q3 = np.linalg.qr(RNG.standard_normal((3, 3)))[0]
Q4 = np.linalg.qr(RNG.standard_normal((4, 4)))[0]
WEIGHTS = np.arange(9.0).reshape(3, 3)

RANK_TWO = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])  # LU meets an exact zero pivot
ROUNDED_SINGULAR = Q3 @ np.diag([3.0, 1.0, 0.0]) @ RNG.standard_normal((3, 3))  # singular up to rounding
# Semi-definite to working precision with an exactly computed first pivot: a rotated Q diag(0, 1, 3) Qᵀ
# has a last pivot of rounding size whose sign depends on the LAPACK build (negative, LAPACK itself
# refuses before srcad is asked)
SEMIDEFINITE = np.block([[np.full((1, 1), 1e-20), np.zeros((1, 2))], [np.zeros((2, 1)), np.array([[2.0, 1.0], [1.0, 3.0]])]])
REPEATED = Q4 @ np.diag([1.0, 1.0, 3.0, 4.0]) @ Q4.T  # eigenvalues and singular values 1, 1, 3, 4
ILL_CONDITIONED = Q4 @ np.diag([1.0, 1e-3, 1e-5, 1e-6]) @ np.linalg.qr(RNG.standard_normal((4, 4)))[0]


def one_sided(f, a, v, h=1e-6):
    return (f(a + h * v) - f(a)) / h, (f(a) - f(a - h * v)) / h


def refused(f, args, match):
    """The gradient and the jvp are refused at the line of ``f`` that calls the rule."""
    for run in (lambda: srcad.grad(f)(*args), lambda: srcad.jvp(f, args, (np.ones_like(args[0]),))):
        with pytest.raises(srcad.UnsupportedCaseError, match=match) as info:
            run()
        assert "test_rules_linalg_singular.py:" in str(info.value)


# ---- determinants ------------------------------------------------------------------------------

def numpy_det(a):
    return np.linalg.det(a)


def scipy_det(a):
    return sl.det(a)


def log_abs_det(a):
    return np.linalg.slogdet(a)[1]


@pytest.mark.parametrize("det", [numpy_det, scipy_det])
@pytest.mark.parametrize("a", [RANK_TWO, ROUNDED_SINGULAR, np.zeros((3, 3))], ids=["exact", "rounded", "zero"])
def test_det_of_a_singular_matrix_has_the_adjugate_as_gradient(det, a):
    # (was NumPy's LinAlgError from the inverse, or scipy's exact 0 times the inverse: a zero gradient)
    check_grads(det, (a,), modes=("rev",))
    check_jvp(det, (a,))


def test_det_gradient_at_a_rank_one_matrix_is_its_cofactors():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_allclose(srcad.grad(numpy_det)(a), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)


def test_det_of_a_singular_float32_matrix():
    a = RANK_TWO.astype(np.float32)
    g = srcad.grad(numpy_det)(a)
    expected = srcad.grad(numpy_det)(RANK_TWO)
    np.testing.assert_allclose(g, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def test_log_abs_det_near_a_singular_matrix_grows_like_its_derivative():
    """log|det| has no derivative at a singular matrix: its gradient A⁻ᵀ grows without bound as A
    nears one, as inv's does, and srcad returns it unchecked (so that the reverse sweep reads the
    forward's inv(S), as the Kalman filter's does, at no cost): it matches finite differences
    near the singular set and is large there, not rounding error passed off as a value."""
    for eps in (1e-3, 1e-6):
        a = RANK_TWO + eps * np.eye(3)
        g = check_grads(log_abs_det, (a,), eps=1e-3 * eps, rtol=1e-4)
        assert np.abs(g).max() > 0.1 / eps


# ---- Cholesky ----------------------------------------------------------------------------------

def scipy_cholesky(a):
    return np.sum(sl.cholesky(a) * WEIGHTS)


def test_cholesky_of_a_semidefinite_matrix_is_refused():
    # (the factor was computed, its gradient was 1e9 of rounding error)
    refused(scipy_cholesky, (SEMIDEFINITE,), "positive definite matrix; here a pivot")


# ---- eigh, eigvalsh, eigvals -------------------------------------------------------------------

def first_eigenvector(a):
    return np.sum(np.linalg.eigh(a)[1][:, 0] ** 2 * np.arange(4.0))


def first_eigenvector_scipy(a):
    return np.sum(sl.eigh(a)[1][:, 0] ** 2 * np.arange(4.0))


def weighted_eigenvalues(a):
    return np.sum(np.linalg.eigvalsh(a) * np.arange(4.0))


def eigenvalue_sum(a):
    return np.sum(np.linalg.eigvalsh(a) ** 2)


def squared_through_eigh(a):
    w, v = np.linalg.eigh(a)
    return np.sum((v @ np.diag(w**2) @ v.T) * np.arange(16.0).reshape(4, 4))


def projector_on_distinct(a):
    v = np.linalg.eigh(a)[1]
    return np.sum(v[:, 2:] @ v[:, 2:].T * np.arange(16.0).reshape(4, 4))


def weighted_eigvals(a):
    return np.sum(np.real(np.linalg.eigvals(a)) * np.arange(4.0))


@pytest.mark.parametrize("f", [first_eigenvector, first_eigenvector_scipy])
def test_eigenvectors_of_a_repeated_eigenvalue_are_refused(f):
    # (the gradient was 1e15 of rounding error; one-sided differences give 1e5, both signs)
    refused(f, (REPEATED,), "eigenvectors of repeated eigenvalues")


def test_eigenvalues_weighed_differently_at_a_repeated_value_are_refused():
    v = RNG.standard_normal((4, 4))
    right, left = one_sided(weighted_eigenvalues, REPEATED, v + v.T)
    assert abs(right - left) > 0.1  # a kink: no derivative
    with pytest.raises(srcad.UnsupportedCaseError, match="eigenvalues are repeated"):
        srcad.grad(weighted_eigenvalues)(REPEATED)
    with pytest.raises(srcad.UnsupportedCaseError, match="eigenvalues are repeated"):
        srcad.grad(squared_through_eigh)(REPEATED)  # a 0/0 limit through the vectors


def test_symmetric_functions_and_distinct_vectors_at_a_repeated_eigenvalue_are_differentiated():
    check_grads(eigenvalue_sum, (REPEATED,), modes=("rev",))
    check_jvp(eigenvalue_sum, (REPEATED,))
    check_grads(projector_on_distinct, (REPEATED,))


def test_eigvals_at_a_repeated_eigenvalue_is_refused():
    # (was NumPy's LinAlgError from the inverse of the eigenvector matrix)
    refused(weighted_eigvals, (REPEATED,), "np.linalg.eigvals has repeated eigenvalues")


# ---- SVD, norms, cond --------------------------------------------------------------------------

def singular_vector_in_a_pair(a):
    return np.sum(np.linalg.svd(a)[0][:, 3] ** 2 * np.arange(4.0))


def weighted_singular_values(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) * np.arange(1.0, 1.0 + min(a.shape)))


def nuclear_norm(a):
    return np.linalg.norm(a, "nuc")


def spectral_norm(a):
    return np.linalg.norm(a, 2)


def condition_number(a):
    return np.linalg.cond(a)


def test_singular_vectors_of_a_repeated_singular_value_are_refused():
    refused(singular_vector_in_a_pair, (REPEATED,), "singular vectors of repeated singular values")


@pytest.mark.parametrize("f", [weighted_singular_values, nuclear_norm])
def test_a_zero_singular_value_is_refused(f):
    # (the gradient was one side's slope, with LAPACK's arbitrary sign of the null vectors)
    v = RNG.standard_normal((3, 3))
    right, left = one_sided(f, ROUNDED_SINGULAR, v)
    assert abs(right - left) > 0.1
    refused(f, (ROUNDED_SINGULAR,), "zero")


def test_spectral_norm_at_a_repeated_largest_singular_value_is_refused():
    a = Q3 @ np.diag([2.0, 2.0, 1.0]) @ Q3.T
    v = RNG.standard_normal((3, 3))
    right, left = one_sided(spectral_norm, a, v)
    assert abs(right - left) > 0.1
    refused(spectral_norm, (a,), r"np.linalg.norm\(ord=2\) is not differentiable here")


@pytest.mark.parametrize("a", [ROUNDED_SINGULAR, REPEATED], ids=["singular", "repeated-smallest"])
def test_cond_at_a_singular_matrix_or_a_repeated_extreme_value_is_refused(a):
    # (was 1e31 at the singular matrix; at the repeated smallest value one side's slope)
    refused(condition_number, (a,), "np.linalg.cond")


# ---- pinv, lstsq -------------------------------------------------------------------------------

def pseudo_inverse(a):
    return np.sum(np.linalg.pinv(a) * WEIGHTS)


def least_squares(a):
    return np.sum(np.linalg.lstsq(a, np.ones(3), rcond=None)[0] * np.arange(3.0))


@pytest.mark.parametrize("f, match", [(pseudo_inverse, "np.linalg.pinv drops a singular value"),
                                      (least_squares, "np.linalg.lstsq of a matrix of rank 2")])
def test_pinv_and_lstsq_of_a_rank_deficient_matrix_are_refused(f, match):
    # (the gradient was of the rank-2 formula, -3; finite differences cross the rank change: 1e12)
    v = RNG.standard_normal((3, 3))
    assert min(np.abs(one_sided(f, RANK_TWO, v))) > 1e6
    refused(f, (RANK_TWO,), match)


# ---- polar, sqrtm, logm ------------------------------------------------------------------------

def polar_factor(a):
    return np.sum(sl.polar(a)[0] * WEIGHTS)


def square_root(a):
    return np.sum(sl.sqrtm(a) * np.arange(a.size).reshape(a.shape))


def logarithm(a):
    return np.sum(sl.logm(a) * np.arange(a.size).reshape(a.shape))


@pytest.mark.parametrize("f, a, match", [(polar_factor, ROUNDED_SINGULAR, "scipy.linalg.polar"),
                                         (square_root, np.array([[1.0, 2.0], [2.0, 4.0]]), "scipy.linalg.sqrtm"),
                                         (logarithm, np.array([[1.0, 2.0], [2.0, 4.0]]), "scipy.linalg.logm")])
def test_matrix_functions_of_a_singular_matrix_are_refused(f, a, match):
    # (polar's gradient was one side's slope; sqrtm's 1e14 and logm's 1e19 of rounding error)
    refused(f, (a,), match + " of a matrix singular")


# ---- ill-conditioned but regular ---------------------------------------------------------------

def inverse_entry(a):
    return np.linalg.inv(a)[0, 1]


def pinv_entry(a):
    return np.linalg.pinv(a)[0, 1]


@pytest.mark.parametrize("f", [numpy_det, log_abs_det, inverse_entry, pinv_entry, condition_number,
                               weighted_singular_values, nuclear_norm])
def test_a_condition_number_of_a_million_is_still_differentiated(f):
    a = ILL_CONDITIONED
    g = srcad.grad(f)(a)
    for _ in range(3):
        v = RNG.standard_normal(a.shape)
        h = 1e-11 * np.linalg.norm(a, 2)
        numeric = (f(a + h * v) - f(a - h * v)) / (2 * h)
        np.testing.assert_allclose(np.sum(g * v), numeric, rtol=1e-3)
        np.testing.assert_allclose(srcad.jvp(f, (a,), (v,))[1], numeric, rtol=1e-3)


def test_eigenvectors_of_close_but_distinct_eigenvalues_are_still_differentiated():
    a = Q4 @ np.diag([1.0, 1.0 + 1e-6, 3.0, 4.0]) @ Q4.T
    v = RNG.standard_normal((4, 4))
    v = v + v.T
    g = srcad.grad(first_eigenvector)(a)
    numeric = (first_eigenvector(a + 1e-10 * v) - first_eigenvector(a - 1e-10 * v)) / 2e-10
    np.testing.assert_allclose(np.sum(g * v), numeric, rtol=1e-4)


def det_in_a_loop(a):
    total = 0.0
    for k in range(3):
        total = total + np.linalg.det(a * (1.0 + 0.5 * k))
    return total


@pytest.mark.parametrize("a", [RANK_TWO, ROUNDED_SINGULAR, np.zeros((3, 3)), ILL_CONDITIONED, REPEATED],
                         ids=["exact", "rounded", "zero", "ill-conditioned", "regular"])
def test_det_under_numba_is_the_adjugate_as_numpy_computes_it(a):
    pytest.importorskip("numba")
    compiled = srcad.grad(det_in_a_loop, backend="numba")(a)
    np.testing.assert_allclose(compiled, srcad.grad(det_in_a_loop)(a), rtol=1e-9, atol=1e-12 * np.abs(a).max() ** 2)
