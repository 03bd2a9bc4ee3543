"""Rules that domain code of probe round 26 missed (Bayesian log-densities, special functions
of physics and statistics, KKT systems, conditioning, polynomial fits): each program's
derivatives checked against central finite differences in random directions, and its Hessian
(forward over reverse) against differences of the gradient."""
import numpy as np

import scipy.special as special
import scipy.stats as stats

import srcad
from srcad.testing import check_grads, check_jvp

RNG = np.random.default_rng(26)


def numeric_hessian(f, x, eps=1e-5):
    gradient = srcad.grad(f)
    return np.array([(gradient(x + eps * u) - gradient(x - eps * u)) / (2 * eps) for u in np.eye(x.size)])


def check_all_orders(f, x, rtol=1e-5):
    check_grads(f, (x,))
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
