"""Rules that domain code of probe round 26 missed (Bayesian log-densities, special functions
of physics and statistics, KKT systems, conditioning, polynomial fits): each program's
derivatives checked against central finite differences in random directions, and its Hessian
(forward over reverse) against differences of the gradient."""
import numpy as np
import pytest

import scipy.special as special
import scipy.stats as stats
from scipy.stats import norm

import srcad
from srcad.testing import check_grads, check_jvp

RNG = np.random.default_rng(26)


def numeric_hessian(f, x, eps=1e-5):
    gradient = srcad.grad(f)
    return np.array([(gradient(x + eps * u) - gradient(x - eps * u)) / (2 * eps) for u in np.eye(x.size)])


def check_all_orders(f, x, rtol=1e-5):
    check_grads(f, (x,), modes=("rev",))
    check_jvp(f, (x,))
    np.testing.assert_allclose(srcad.hessian(f)(x), numeric_hessian(f, x), rtol=rtol, atol=1e-7)


# ---- a Bayesian Poisson regression with heavy-tailed and positive priors ------------------------

DESIGN = RNG.standard_normal((8, 2))
COUNTS = np.array([0, 3, 1, 4, 2, 0, 6, 1])


def log_posterior(theta):
    """Counts ~ Poisson(exp(X w)), w ~ Cauchy(0, 2.5), scale s = exp(theta[2]) ~ half-normal and
    inverse-gamma, a Weibull and a gamma-Poisson term in the same parameters."""
    w, s = theta[:2], np.exp(theta[2])
    rate = np.exp(DESIGN @ w)
    total = np.sum(stats.poisson.logpmf(COUNTS, rate))
    total += np.sum(stats.cauchy.logpdf(w, 0.0, 2.5)) + stats.halfnorm.logpdf(s, 0.0, 1.0)
    total += stats.invgamma.logpdf(s, 3.0, scale=2.0) + np.sum(stats.weibull_min.logpdf(rate + 0.1, 1.5, 0.0, s))
    total += np.sum(stats.nbinom.logpmf(COUNTS, 1 + s, special.expit(DESIGN @ w)))
    return total


def test_bayesian_poisson_regression():
    check_all_orders(log_posterior, np.array([0.2, -0.3, 0.1]))


# ---- special functions in a physics loss ---------------------------------------------------------

def radiation_loss(x):
    """Exponential integrals and modified Bessel functions of a positive coordinate, a robust
    (pseudo-)Huber fit and a Box-Cox transform."""
    r = np.exp(x)
    loss = np.sum(special.exp1(r) * special.k0(r) + special.k1(r) * special.expi(r) + special.exprel(x))
    loss += np.sum(special.spence(r) + special.loggamma(1 + r) + special.cbrt(x))
    loss += np.sum(special.huber(1.0, x * 2) + special.pseudo_huber(0.5, x) + special.boxcox1p(r, x[0]))
    return loss


def test_special_functions_in_a_physics_loss():
    check_all_orders(radiation_loss, np.array([0.3, -0.7, 0.9]))


# ---- np.block: an equality-constrained quadratic program solved through its KKT system --------

CONSTRAINTS = RNG.standard_normal((2, 4))


def kkt_solution_cost(theta):
    """min ½ xᵀ H x - qᵀ x s.t. A x = b, with H and q built from theta: the solution of
    [[H, Aᵀ], [A, 0]] [x; λ] = [q; b], and a cost of it."""
    h = np.diag(1.5 + theta ** 2) + 0.2 * np.outer(theta, theta)
    kkt = np.block([[h, CONSTRAINTS.T], [CONSTRAINTS, np.zeros((2, 2))]])
    rhs = np.concatenate([np.sin(theta), np.array([1.0, -0.5])])
    solution = np.linalg.solve(kkt, rhs)
    return np.sum(solution[:4] ** 2) + solution[4] * theta[0]


def test_kkt_system_through_np_block():
    check_all_orders(kkt_solution_cost, RNG.standard_normal(4))


# ---- np.polyfit and np.linalg.cond: a calibration curve and its conditioning ---------------------

SAMPLE_POINTS = np.linspace(0.0, 2.0, 9)


def calibration_loss(theta):
    """Readings y(theta) at moving sample points fitted by a cubic; the fit's slope at 1 and the
    condition number of a matrix built from the coefficients."""
    x = SAMPLE_POINTS + 0.05 * np.sin(theta[0] * SAMPLE_POINTS)
    y = theta[1] * np.exp(-x) + theta[2] * x ** 2
    coefficients = np.polyfit(x, y, 3)
    slope = np.polyval(coefficients[:-1] * np.array([3.0, 2.0, 1.0]), 1.0)
    m = np.array([[coefficients[0], 1.0], [coefficients[1], coefficients[2] + 2.0]])
    return slope ** 2 + np.linalg.cond(m)


def test_calibration_fit_and_its_conditioning():
    check_all_orders(calibration_loss, np.array([0.7, 1.3, -0.4]), rtol=1e-4)


# ---- frozen scipy.stats distributions ---------------------------------------------------------

OBSERVED = np.array([0.4, -1.2, 2.1, 0.3])
PRIOR = norm(0.0, 2.0)  # module-level frozen distributions: constants read through .args / .kwds
NOISE = stats.gamma(2.0, scale=np.array([0.5, 1.5]))


def frozen_log_posterior(theta):
    """A location-scale model written with frozen distributions: made in the call (the
    derivative reaches their parameters) and held in module-level names."""
    mu, log_s = theta[0], theta[1]
    s = np.exp(log_s)
    total = np.sum(stats.norm(mu, s).logpdf(OBSERVED)) + np.sum(norm(loc=mu, scale=2 * s).logcdf(OBSERVED))
    total += PRIOR.logpdf(mu) + np.sum(NOISE.logpdf(np.array([s, s * s])))
    return total + np.sum(stats.poisson(s + 1.0).logpmf(np.array([1, 3]))) + stats.t(4.0, mu).cdf(0.5)


def test_frozen_distributions_in_a_log_posterior():
    check_all_orders(frozen_log_posterior, np.array([0.3, -0.2]))


def test_frozen_and_unfrozen_calls_agree():
    def unfrozen(theta):
        mu, s = theta[0], np.exp(theta[1])
        total = np.sum(stats.norm.logpdf(OBSERVED, mu, s)) + np.sum(norm.logcdf(OBSERVED, loc=mu, scale=2 * s))
        total += norm.logpdf(mu, 0.0, 2.0) + np.sum(stats.gamma.logpdf(np.array([s, s * s]), 2.0,
                                                                       scale=np.array([0.5, 1.5])))
        return total + np.sum(stats.poisson.logpmf(np.array([1, 3]), s + 1.0)) + stats.t.cdf(0.5, 4.0, mu)

    theta = np.array([0.3, -0.2])
    np.testing.assert_allclose(srcad.grad(frozen_log_posterior)(theta), srcad.grad(unfrozen)(theta), rtol=1e-12)


SWAPPED = norm(0.0, 1.0)


def swapped_prior(x):
    return np.sum(SWAPPED.logpdf(x))


def test_a_module_level_frozen_distribution_rebound_recompiles():
    global SWAPPED
    x = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(srcad.grad(swapped_prior)(x), -x)
    SWAPPED = stats.gamma(2.0)  # another distribution: the code is made again for it
    try:
        np.testing.assert_allclose(srcad.grad(swapped_prior)(x), 1 / x - 1)
    finally:
        SWAPPED = norm(0.0, 1.0)


def frozen_in_locals(theta):
    """Frozen distributions bound once to local names and read through their methods, in a
    comprehension too: the locals hold the parameters."""
    mu, s = theta[0], np.exp(theta[1])
    prior = norm(mu, 1.0)
    likelihood = stats.t(4.0, loc=mu, scale=s)
    total = np.sum(prior.logpdf(OBSERVED)) + np.sum([likelihood.logcdf(v) for v in OBSERVED])
    return total + prior.cdf(0.3) * likelihood.logpdf(0.1)


def test_frozen_distributions_in_local_names():
    check_all_orders(frozen_in_locals, np.array([0.2, 0.1]))


def frozen_in_a_local_read_otherwise(x, mu):
    prior = norm(mu, 1.0)
    return np.sum(prior.logpdf(x)) + prior.mean()


def frozen_in_a_local_bound_twice(x, mu):
    prior = norm(mu, 1.0)
    prior = norm(mu, 2.0)
    return np.sum(prior.logpdf(x))


def frozen_point_by_keyword(x, mu):
    return np.sum(norm(mu, 1.0).logpdf(x=x))


def test_frozen_distributions_srcad_cannot_rewrite_are_refused():
    x = np.array([0.5, 1.0])
    for fun in (frozen_in_a_local_read_otherwise, frozen_in_a_local_bound_twice):
        with pytest.raises(srcad.SrcadError, match=r"frozen scipy.stats distribution's .logpdf\(x\) is differentiated "
                                                   r"where the distribution is made in the call .* or in a local name "
                                                   r"bound once and read only through such methods: otherwise write "
                                                   r"stats.norm.logpdf\(x, mu, s\)"):
            srcad.grad(fun, wrt=1)(x, 0.2)
    with pytest.raises(srcad.SrcadError, match=r"norm\(...\).logpdf\(x\) of a frozen scipy.stats distribution with "
                                               r"one positional argument"):
        srcad.grad(frozen_point_by_keyword, wrt=1)(x, 0.2)


# ---- np.linalg.eigvals: the stability margin of a damped linear system --------------------------

def stability_margin(theta):
    """The spectral abscissa (largest real part) and the oscillation frequencies of
    ẋ = A x for a two-mass chain with stiffness k and damping c: a complex-conjugate spectrum."""
    k, c = np.exp(theta[0]), np.exp(theta[1])
    a = np.array([[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0],
                  [-2 * k, k, -c, 0.1 * c], [k, -1.5 * k, 0.1 * c, -0.5 * c]])
    w = np.linalg.eigvals(a)
    return np.max(np.real(w)) + 0.1 * np.sum(np.abs(np.imag(w)))


def test_stability_margin_through_complex_eigenvalues():
    theta = np.array([0.3, -1.0])
    check_grads(stability_margin, (theta,), modes=("rev",))
    check_jvp(stability_margin, (theta,))
