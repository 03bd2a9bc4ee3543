"""Rules for SciPy calls (srcad/rules/scipy_*.py) against finite differences: every row is
checked in reverse mode (joint and pullback), forward mode, with float32 arguments, and second
order (hvp in the first argument)."""
import numpy as np
import pytest
import importlib.util
import inspect
import pathlib
import subprocess
import sys
import textwrap

import scipy.linalg as linalg
import scipy.optimize as optimize
import scipy.signal as signal
import scipy.spatial.distance as distance
import scipy.special as special
import scipy.stats as stats

import srcad
from library_check import check_first_order, check_float32, check_second_order, samplers

R, positive, unit = samplers(10)


def spd(n):
    b = R(n, n)
    return b @ b.T + n * np.eye(n)


def general(n):
    return R(n, n) + n * np.eye(n)


# ---- scipy.special -----------------------------------------------------------------------------

def f_erfinv(x):
    return special.erfinv(x)


def f_erfcinv(x):
    return special.erfcinv(x)


def f_erfcx(x):
    return special.erfcx(x)


def f_normal_cdf_and_quantile(x, p):
    return special.ndtr(x) * special.ndtri(p)


def f_log_expit(x):
    return special.log_expit(x)


def f_rgamma(x):
    return special.rgamma(x)


def f_entr(x):
    return special.entr(x)


def f_i0(x):
    return special.i0(x)


def f_i1(x):
    return special.i1(x)


def f_i0e(x):
    return special.i0e(x)


def f_i1e(x):
    return special.i1e(x)


def f_j0(x):
    return special.j0(x)


def f_j1(x):
    return special.j1(x)


def f_y0(x):
    return special.y0(x)


def f_y1(x):
    return special.y1(x)


def f_polygamma(x):
    return special.polygamma(1, x)


def f_iv(x):
    return special.iv(1.5, x)


def f_ive(x):
    return special.ive(2, x)


def f_jv(x):
    return special.jv(2.5, x)


def f_jn(x):
    return special.jn(2, x)


def f_yv(x):
    return special.yv(0.5, x)


def f_yn(x):
    return special.yn(1, x)


def f_multigammaln(x):
    return special.multigammaln(x, 3)


def f_beta(a, b):
    return special.beta(a, b)


def f_betaln(a, b):
    return special.betaln(a, b)


def f_rel_entr(x, y):
    return special.rel_entr(x, y)


def f_kl_div(x, y):
    return special.kl_div(x, y)


def f_gammainc(x):
    return special.gammainc(2.5, x)


def f_gammaincc(x):
    return special.gammaincc(1.5, x)


def f_norm_logpdf(x, loc, scale):
    return stats.norm.logpdf(x, loc, scale)


def f_norm_pdf(x, loc, scale):
    return stats.norm.pdf(x, loc=loc, scale=scale)


def f_norm_cdf(x, loc, scale):
    return stats.norm.cdf(x, loc, scale)


def f_norm_logcdf(x, scale):
    return stats.norm.logcdf(x, scale=scale)


def f_norm_sf(x, loc):
    return stats.norm.sf(x, loc)


def f_norm_logsf(x, scale):
    return stats.norm.logsf(x, 0.1, scale)


def f_norm_ppf(q, loc, scale):
    return stats.norm.ppf(q, loc, scale)


def f_norm_isf(q, scale):
    return stats.norm.isf(q, scale=scale)


def f_t_logpdf(x, df, scale):
    return stats.t.logpdf(x, df, 0.2, scale)


def f_t_pdf(x, df, loc):
    return stats.t.pdf(x, df, loc)


def f_t_cdf(x, loc, scale):
    return stats.t.cdf(x, 4.0, loc, scale)


def f_t_logcdf(x, scale):
    return stats.t.logcdf(x, 3.0, scale=scale)


def f_t_sf(x):
    return stats.t.sf(x, 2.5)


def f_t_logsf(x, loc):
    return stats.t.logsf(x, 5.0, loc)


def f_t_ppf(q, scale):
    return stats.t.ppf(q, 4.0, 0.1, scale)


def f_t_isf(q):
    return stats.t.isf(q, 4.0)


def f_gamma_logpdf(x, a, scale):
    return stats.gamma.logpdf(x, a, 0.0, scale)


def f_gamma_pdf(x, a, loc):
    return stats.gamma.pdf(x, a, loc)


def f_gamma_cdf(x, scale):
    return stats.gamma.cdf(x, 2.0, scale=scale)


def f_gamma_logcdf(x, loc):
    return stats.gamma.logcdf(x, 1.5, loc)


def f_gamma_sf(x):
    return stats.gamma.sf(x, 3.0)


def f_gamma_logsf(x, scale):
    return stats.gamma.logsf(x, 2.0, 0.0, scale)


def f_gamma_ppf(q, scale):
    return stats.gamma.ppf(q, 2.5, 0.2, scale)


def f_gamma_isf(q):
    return stats.gamma.isf(q, 2.5)


def f_beta_logpdf(x, a, b):
    return stats.beta.logpdf(x, a, b)


def f_beta_pdf(x, a, b):
    return stats.beta.pdf(x, a, b, 0.0, 1.0)


def f_beta_pdf_loc_scale(x, loc, scale):
    return stats.beta.pdf(x, 2.0, 3.0, loc, scale)


def f_beta_cdf(x, scale):
    return stats.beta.cdf(x, 2.0, 3.0, 0.0, scale)


def f_beta_logcdf(x):
    return stats.beta.logcdf(x, 2.0, 1.5)


def f_beta_sf(x):
    return stats.beta.sf(x, 2.0, 1.5)


def f_beta_logsf(x):
    return stats.beta.logsf(x, 2.0, 1.5)


def f_beta_ppf(q, loc):
    return stats.beta.ppf(q, 2.0, 3.0, loc)


def f_beta_isf(q):
    return stats.beta.isf(q, 2.0, 3.0)


def f_multivariate_normal_logpdf(x, mean, cov):
    return stats.multivariate_normal.logpdf(x, mean, cov)


def f_multivariate_normal_logpdf_one_point(x, cov):
    return stats.multivariate_normal.logpdf(x, cov=cov)


def f_solve_triangular_lower(a, b):
    return linalg.solve_triangular(a, b, lower=True)


def f_solve_triangular_trans_unit(a, b):
    return linalg.solve_triangular(a, b, trans=1, unit_diagonal=True)


def f_solve_triangular_trans_T(a, b):
    return linalg.solve_triangular(a, b, trans="T", lower=True)


def f_cholesky(a):
    return linalg.cholesky(a)


def f_cholesky_lower(a):
    return linalg.cholesky(a, lower=True)


def f_solve(a, b):
    return linalg.solve(a, b)


def f_solve_pos(a, b):
    return linalg.solve(a, b, assume_a="pos")


def f_solve_sym_lower(a, b):
    return linalg.solve(a, b, lower=True, assume_a="sym")


def f_solve_transposed(a, b):
    return linalg.solve(a, b, transposed=True)


def f_inv(a):
    return linalg.inv(a)


def f_det(a):
    return linalg.det(a)


def f_eigh_eigvals_only(a):
    return linalg.eigh(a, eigvals_only=True)


def f_eigh_upper(a):
    return linalg.eigh(a, lower=False)[0]


def f_expm(a):
    return linalg.expm(a)


def f_sqrtm(a):
    return linalg.sqrtm(a)


def f_solve_sylvester(a, b, q):
    return linalg.solve_sylvester(a, b, q)


def f_solve_continuous_lyapunov(a, q):
    return linalg.solve_continuous_lyapunov(a, q)


def f_lyapunov_in_q(q, a):
    return linalg.solve_continuous_lyapunov(a, q)


def f_logm(a):
    return linalg.logm(a)


def f_cbrt(x):
    return special.cbrt(x)


def f_exprel(x):
    return special.exprel(x)


def f_exp1(x):
    return special.exp1(x)


def f_expi(x):
    return special.expi(x)


def f_spence(x):
    return special.spence(x)


def f_loggamma(x):
    return special.loggamma(x)


def f_k0(x):
    return special.k0(x)


def f_k1(x):
    return special.k1(x)


def f_boxcox1p(x, lmbda):
    return special.boxcox1p(x, lmbda)


def f_huber(delta, r):
    return special.huber(delta, r)


def f_pseudo_huber(delta, r):
    return special.pseudo_huber(delta, r)


COUNTS = np.array([0, 2, 5])


def f_poisson_logpmf(mu):
    return stats.poisson.logpmf(COUNTS, mu)


def f_binom_logpmf(p):
    return stats.binom.logpmf(COUNTS, 7, p)


def f_nbinom_logpmf(p, n):
    return stats.nbinom.logpmf(COUNTS, n, p)


def f_expon_logpdf(x, loc, scale):
    return stats.expon.logpdf(x, loc, scale)


def f_expon_cdf(x, scale):
    return stats.expon.cdf(x, scale=scale)


def f_lognorm_logpdf(x, s, scale):
    return stats.lognorm.logpdf(x, s, 0.1, scale)


def f_lognorm_cdf(x, s, loc):
    return stats.lognorm.cdf(x, s, loc, 1.3)


def f_cauchy_logpdf(x, loc, scale):
    return stats.cauchy.logpdf(x, loc, scale)


def f_cauchy_cdf(x, loc, scale):
    return stats.cauchy.cdf(x, loc=loc, scale=scale)


def f_laplace_logpdf(x, loc, scale):
    return stats.laplace.logpdf(x, loc, scale)


def f_laplace_cdf(x, scale):
    return stats.laplace.cdf(x, 0.2, scale)


def f_logistic_logpdf(x, loc, scale):
    return stats.logistic.logpdf(x, loc, scale)


def f_logistic_cdf(x, loc, scale):
    return stats.logistic.cdf(x, loc, scale)


def f_dawsn(x):
    return special.dawsn(x)


def f_gumbel_r_logpdf(x, loc, scale):
    return stats.gumbel_r.logpdf(x, loc, scale)


def f_gumbel_r_cdf(x, loc):
    return stats.gumbel_r.cdf(x, loc, 1.4)


def f_weibull_min_logpdf(x, c, scale):
    return stats.weibull_min.logpdf(x, c, 0.0, scale)


def f_weibull_min_cdf(x, c, loc):
    return stats.weibull_min.cdf(x, c, loc)


def f_chi2_logpdf(x, df, scale):
    return stats.chi2.logpdf(x, df, scale=scale)


def f_chi2_cdf(x, scale):
    return stats.chi2.cdf(x, 3.0, 0.1, scale)


def f_halfnorm_logpdf(x, loc, scale):
    return stats.halfnorm.logpdf(x, loc, scale)


def f_halfnorm_cdf(x, scale):
    return stats.halfnorm.cdf(x, scale=scale)


def f_invgamma_logpdf(x, a, scale):
    return stats.invgamma.logpdf(x, a, 0.0, scale)


def f_invgamma_cdf(x, loc):
    return stats.invgamma.cdf(x, 2.5, loc)


R27, positive27, _ = samplers(27)  # the draws of later cases: their own generator leaves the others' as they were


def general27(n):
    return R27(n, n) + n * np.eye(n)


def f_softplus(x):
    return special.softplus(x)


ZETA_X = np.array([2.5, 3.0, 4.0, 5.5])


def f_zeta_in_q(q):
    return special.zeta(ZETA_X, q) + special.zeta(3.0, q + 1.0)


SPECIAL = [
    *([("softplus", f_softplus, [R27(4) * 3])] if hasattr(special, "softplus") else []),  # SciPy 1.15 and later
    ("zeta-in-q", f_zeta_in_q, [positive27(4)]),
    ("erfinv", f_erfinv, [unit(4) - 0.5]),
    ("erfcinv", f_erfcinv, [unit(4)]),
    ("erfcx", f_erfcx, [R(4)]),
    ("ndtr-ndtri", f_normal_cdf_and_quantile, [R(4), unit(4)]),
    ("log_expit", f_log_expit, [R(2, 3)]),
    ("rgamma", f_rgamma, [positive(4)]),
    ("entr", f_entr, [positive(4)]),
    ("i0", f_i0, [R(4)]),
    ("i1", f_i1, [R(4)]),
    ("i0e", f_i0e, [R(4)]),
    ("i1e", f_i1e, [R(4)]),
    ("j0", f_j0, [positive(4)]),
    ("j1", f_j1, [positive(4)]),
    ("y0", f_y0, [positive(4)]),
    ("y1", f_y1, [positive(4)]),
    ("polygamma", f_polygamma, [positive(4)]),
    ("iv", f_iv, [positive(4)]),
    ("ive", f_ive, [R(4)]),
    ("jv", f_jv, [positive(4)]),
    ("jn", f_jn, [positive(4)]),
    ("yv", f_yv, [positive(4)]),
    ("yn", f_yn, [positive(4)]),
    ("multigammaln", f_multigammaln, [positive(4) + 2]),
    ("beta", f_beta, [positive(3), positive(2, 3)]),
    ("betaln", f_betaln, [positive(3), positive(3)]),
    ("rel_entr", f_rel_entr, [positive(3), positive(3)]),
    ("kl_div", f_kl_div, [positive(2, 3), positive(3)]),
    ("gammainc", f_gammainc, [positive(4)]),
    ("gammaincc", f_gammaincc, [positive(4)]),
    ("cbrt", f_cbrt, [R(4)]),
    ("dawsn", f_dawsn, [R(4)]),
    ("exprel", f_exprel, [np.array([-1.3, -2e-4, 0.0, 3e-4, 0.8])]),  # 0 and near it: the series
    ("exp1", f_exp1, [positive(4)]),
    ("expi", f_expi, [np.array([-1.5, -0.4, 0.6, 2.2])]),
    ("spence", f_spence, [np.array([0.3, 1.0, 1.7, 2.5])]),  # 1: the slope's limit
    ("loggamma", f_loggamma, [positive(4)]),
    ("k0", f_k0, [positive(4)]),
    ("k1", f_k1, [positive(4)]),
    ("boxcox1p", f_boxcox1p, [positive(3), np.array([-0.7, 0.0, 1.3])]),  # λ = 0: log1p's limit
    ("huber", f_huber, [positive(3) + 0.5, np.array([-2.9, 0.4, 3.1])]),  # outside, inside, outside
    ("pseudo_huber", f_pseudo_huber, [positive(3), R(3)]),
]

# ---- scipy.stats -------------------------------------------------------------------------------

STATS = [
    ("norm.logpdf", f_norm_logpdf, [R(3), R(3), positive(3)]),
    ("norm.pdf", f_norm_pdf, [R(3), 0.3, 1.4]),
    ("norm.cdf", f_norm_cdf, [R(2, 3), R(3), 1.2]),
    ("norm.logcdf", f_norm_logcdf, [R(3), 1.3]),
    ("norm.sf", f_norm_sf, [R(3), 0.2]),
    ("norm.logsf", f_norm_logsf, [R(3), positive(3)]),
    ("norm.ppf", f_norm_ppf, [unit(3), 0.4, 1.3]),
    ("norm.isf", f_norm_isf, [unit(3), positive(3)]),
    ("t.logpdf", f_t_logpdf, [R(3), positive(3) + 1, 1.3]),
    ("t.pdf", f_t_pdf, [R(3), 3.5, R(3)]),
    ("t.cdf", f_t_cdf, [R(3), 0.3, 1.5]),
    ("t.logcdf", f_t_logcdf, [R(3), 1.5]),
    ("t.sf", f_t_sf, [R(3)]),
    ("t.logsf", f_t_logsf, [R(3), 0.2]),
    ("t.ppf", f_t_ppf, [unit(3), 1.2]),
    ("t.isf", f_t_isf, [unit(3)]),
    ("gamma.logpdf", f_gamma_logpdf, [positive(3), positive(3) + 1, 1.3]),
    ("gamma.pdf", f_gamma_pdf, [positive(3), 2.5, -0.2]),
    ("gamma.cdf", f_gamma_cdf, [positive(3), 1.5]),
    ("gamma.logcdf", f_gamma_logcdf, [positive(3), 0.1]),
    ("gamma.sf", f_gamma_sf, [positive(3)]),
    ("gamma.logsf", f_gamma_logsf, [positive(3), 1.4]),
    ("gamma.ppf", f_gamma_ppf, [unit(3), 1.5]),
    ("gamma.isf", f_gamma_isf, [unit(3)]),
    ("beta.logpdf", f_beta_logpdf, [unit(3), positive(3) + 1, positive(3) + 1]),
    ("beta.pdf", f_beta_pdf, [unit(3), 2.5, 3.0]),
    ("beta.pdf-loc-scale", f_beta_pdf_loc_scale, [unit(3), -0.1, 1.3]),
    ("beta.cdf", f_beta_cdf, [unit(3), 1.2]),
    ("beta.logcdf", f_beta_logcdf, [unit(3)]),
    ("beta.sf", f_beta_sf, [unit(3)]),
    ("beta.logsf", f_beta_logsf, [unit(3)]),
    ("beta.ppf", f_beta_ppf, [unit(3), 0.3]),
    ("beta.isf", f_beta_isf, [unit(3)]),
    ("multivariate_normal.logpdf", f_multivariate_normal_logpdf,
     [R(4, 3), R(3), spd(3)]),
    ("multivariate_normal.logpdf-one-point", f_multivariate_normal_logpdf_one_point,
     [R(3), spd(3)]),
    ("poisson.logpmf", f_poisson_logpmf, [positive(3)]),
    ("binom.logpmf", f_binom_logpmf, [unit(3)]),
    ("nbinom.logpmf", f_nbinom_logpmf, [unit(3), positive(3) + 1]),
    ("expon.logpdf", f_expon_logpdf, [positive(3), R(3) * 0.1 - 0.5, positive(3)]),
    ("expon.cdf", f_expon_cdf, [positive(3), 1.3]),
    ("lognorm.logpdf", f_lognorm_logpdf, [positive(3), positive(3), 1.2]),
    ("lognorm.cdf", f_lognorm_cdf, [positive(3), 0.8, -0.3]),
    ("cauchy.logpdf", f_cauchy_logpdf, [R(3), R(3), positive(3)]),
    ("cauchy.cdf", f_cauchy_cdf, [R(3), 0.2, 1.4]),
    ("laplace.logpdf", f_laplace_logpdf, [R(3) + 3, R(3) * 0.1, positive(3)]),  # x > loc: no kink in reach
    ("laplace.cdf", f_laplace_cdf, [np.array([-1.1, 0.9, 2.3]), 1.3]),
    ("logistic.logpdf", f_logistic_logpdf, [R(3), R(3), positive(3)]),
    ("logistic.cdf", f_logistic_cdf, [R(3), 0.3, positive(3)]),
    ("gumbel_r.logpdf", f_gumbel_r_logpdf, [R(3), R(3), positive(3)]),
    ("gumbel_r.cdf", f_gumbel_r_cdf, [R(3), 0.3]),
    ("weibull_min.logpdf", f_weibull_min_logpdf, [positive(3), positive(3) + 0.5, 1.3]),
    ("weibull_min.cdf", f_weibull_min_cdf, [positive(3), 1.7, -0.2]),
    ("chi2.logpdf", f_chi2_logpdf, [positive(3), positive(3) + 2, 1.2]),
    ("chi2.cdf", f_chi2_cdf, [positive(3), 1.2]),
    ("halfnorm.logpdf", f_halfnorm_logpdf, [positive(3), -0.4, positive(3)]),
    ("halfnorm.cdf", f_halfnorm_cdf, [positive(3), 0.9]),
    ("invgamma.logpdf", f_invgamma_logpdf, [positive(3), positive(3) + 1, 1.2]),
    ("invgamma.cdf", f_invgamma_cdf, [positive(3), -0.3]),
]

# ---- scipy.linalg ------------------------------------------------------------------------------


def cho(a, b):
    c = linalg.cho_factor(a)
    return linalg.cho_solve(c, b)


def cho_lower(a, b):
    c, low = linalg.cho_factor(a, lower=True)
    return linalg.cho_solve((c, low), b)


def lu(a, b):
    factors = linalg.lu_factor(a)
    return linalg.lu_solve(factors, b)


def lu_transposed(a, b):
    lu_, piv = linalg.lu_factor(a)
    return linalg.lu_solve((lu_, piv), b, trans=1)


def eigh_both(a):
    w, v = linalg.eigh(a)
    return w + np.abs(v[0])


def f_svdvals(a):
    return linalg.svdvals(a)


def f_qr_economic(a):
    q, r = linalg.qr(a, mode="economic")
    return np.abs(q) @ r


def f_qr_full(a):
    q, r = linalg.qr(a)  # a tall a: Q's last columns are any completion, so only its first ones are used
    return np.abs(q[:, :3]) @ r[:3] + np.sum(r * r)


def f_qr_r(a):
    (r,) = linalg.qr(a, mode="r")
    return r * r


def f_lu(a):
    p, lower, upper = linalg.lu(a)
    return p @ np.abs(lower) + upper * upper


def f_polar(a):
    u, p = linalg.polar(a)
    return u + p * p


def f_polar_left(a):
    u, p = linalg.polar(a, side="left")
    return u * u + np.sin(p)


LINALG = [
    ("svdvals", f_svdvals, [R27(3, 4)]),
    ("qr-economic-tall", f_qr_economic, [R27(4, 3)]),
    ("qr-economic-wide", f_qr_economic, [R27(2, 4)]),
    ("qr-full", f_qr_full, [R27(5, 3)]),
    ("qr-r", f_qr_r, [R27(4, 3)]),
    ("lu", f_lu, [general27(3)]),
    ("lu-4", f_lu, [R27(4, 4)]),
    ("polar", f_polar, [general27(3)]),
    ("polar-left", f_polar_left, [R27(3, 3)]),
    ("solve_triangular-lower", f_solve_triangular_lower, [general(3), R(3, 2)]),
    ("solve_triangular-trans-unit", f_solve_triangular_trans_unit,
     [general(3), R(3)]),
    ("solve_triangular-trans-T", f_solve_triangular_trans_T,
     [general(3), R(3, 2)]),
    ("cholesky", f_cholesky, [spd(3)]),
    ("cholesky-lower", f_cholesky_lower, [spd(3)]),
    ("cho_factor-cho_solve", cho, [spd(3), R(3, 2)]),
    ("cho_factor-cho_solve-lower", cho_lower, [spd(3), R(3)]),
    ("lu_factor-lu_solve", lu, [general(3), R(3, 2)]),
    ("lu_factor-lu_solve-trans", lu_transposed, [general(3), R(3)]),
    ("solve", f_solve, [general(3), R(3, 2)]),
    ("solve-pos", f_solve_pos, [spd(3), R(3, 2)]),
    ("solve-sym-lower", f_solve_sym_lower, [spd(3), R(3)]),
    ("solve-transposed", f_solve_transposed, [general(3), R(3)]),
    ("inv", f_inv, [general(3)]),
    ("det", f_det, [general(3)]),
    ("eigh", eigh_both, [spd(3)]),
    ("eigh-eigvals_only", f_eigh_eigvals_only, [spd(3)]),
    ("eigh-upper", f_eigh_upper, [spd(3)]),
    ("expm", f_expm, [R(3, 3) / 2]),
    ("sqrtm", f_sqrtm, [spd(3)]),
    ("solve_sylvester", f_solve_sylvester, [general(3), general(2), R(3, 2)]),
    ("solve_continuous_lyapunov", f_solve_continuous_lyapunov, [general(3), R(3, 3)]),
    ("solve_continuous_lyapunov-in-q", f_lyapunov_in_q, [R(3, 3), general(3)]),
    ("logm", f_logm, [spd(3)]),
    ("logm-not-symmetric", f_logm, [general(3) + 1.0]),
]

# ---- scipy.signal, scipy.optimize --------------------------------------------------------------


def f_convolve(a, b, mode):
    return signal.convolve(a, b, mode=mode)


def f_convolve_full(a, b):
    return f_convolve(a, b, "full")


def f_convolve_same(a, b):
    return f_convolve(a, b, "same")


def f_convolve_valid(a, b):
    return f_convolve(a, b, "valid")


def f_correlate_full(a, b):
    return signal.correlate(a, b)


def f_correlate_same(a, b):
    return signal.correlate(a, b, mode="same")


def f_correlate_valid(a, b):
    return signal.correlate(a, b, "valid")


def f_fftconvolve_full(a, b):
    return signal.fftconvolve(a, b)


def f_fftconvolve_same(a, b):
    return signal.fftconvolve(a, b, mode="same")


def f_fftconvolve_valid(a, b):
    return signal.fftconvolve(a, b, "valid")


def f_lfilter(x, b, a):
    return signal.lfilter(b, a, x)


def f_lfilter_in_b(b, a, x):
    return signal.lfilter(b, a, x, axis=0)


def f_lfilter_in_a(a, b, x):
    return signal.lfilter(b, a, x)


def f_rosen(x):
    return optimize.rosen(x)


def f_rosen_der(x):
    return optimize.rosen_der(x)


SIGNAL = [
    ("convolve-full", f_convolve_full, [R(7), R(3)]),
    ("convolve-same", f_convolve_same, [R(7), R(4)]),
    ("convolve-valid", f_convolve_valid, [R(7), R(3)]),
    ("convolve-valid-longer-kernel", f_convolve_valid, [R(3), R(6)]),
    ("convolve-2d-same", f_convolve_same, [R(5, 4), R(2, 3)]),
    ("correlate-full", f_correlate_full, [R(6), R(3)]),
    ("correlate-same-2d", f_correlate_same, [R(4, 5), R(3, 2)]),
    ("correlate-valid", f_correlate_valid, [R(6), R(4)]),
    ("fftconvolve-full-2d", f_fftconvolve_full, [R(4, 3), R(2, 2)]),
    ("fftconvolve-same", f_fftconvolve_same, [R(6), R(3)]),
    ("fftconvolve-valid", f_fftconvolve_valid, [R(6), R(3)]),
    ("lfilter", f_lfilter, [R(9), R(3), np.array([1.3, -0.4, 0.2])]),
    ("lfilter-fir", f_lfilter, [R(6), R(4), np.array([2.0])]),
    ("lfilter-longer-filter", f_lfilter, [R(2), R(4), np.array([1.0, 0.3, 0.1, -0.2, 0.05])]),  # lags past x's end
    ("lfilter-in-b", f_lfilter_in_b, [R(3), np.array([1.1, 0.5]), R(7)]),
    ("lfilter-in-a", f_lfilter_in_a, [np.array([0.9, -0.3, 0.15]), R(2), R(8)]),
    ("rosen", f_rosen, [R(5)]),
    ("rosen-2d", f_rosen, [R(4, 3)]),
    ("rosen_der", f_rosen_der, [R(5)]),
]

def f_cdist(a, b):
    return distance.cdist(a, b)


def f_cdist_squared(a, b):
    return distance.cdist(a, b, metric="sqeuclidean")


def f_pdist(x):
    return distance.pdist(x, "euclidean")


def f_pdist_squared(x):
    return distance.pdist(x, "sqeuclidean")


SPATIAL = [
    ("cdist", f_cdist, [R(4, 3), R(2, 3)]),
    ("cdist-sqeuclidean", f_cdist_squared, [R(4, 3), R(2, 3)]),
    ("pdist", f_pdist, [R(5, 2)]),
    ("pdist-sqeuclidean", f_pdist_squared, [R(5, 2)]),
]

CASES = SPECIAL + STATS + LINALG + SIGNAL + SPATIAL


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_first_order(name, fun, args):
    check_first_order(fun, args)


@pytest.mark.parametrize("name, fun, args", CASES, ids=[c[0] for c in CASES])
def test_float32(name, fun, args):
    check_float32(fun, args)


#: second order of these is the third derivative of rosen (rosen_hess has no rule) or of a matrix
#: (rosen_der's derivative, rosen_hess, takes a vector): clear errors, tested below. SciPy < 1.16
#: fills rosen_hess's diagonal in place through names srcad cannot tell apart from its argument,
#: so there the refusal comes first from the aliasing check
SECOND_ORDER_REFUSED = {"rosen-2d": "of a vector only", "rosen_der": r"no derivative rule|in-place update of|\*args or \*\*kwargs of"}
SECOND_ORDER = [c for c in CASES if c[0] not in SECOND_ORDER_REFUSED]


@pytest.mark.parametrize("name, fun, args", SECOND_ORDER, ids=[c[0] for c in SECOND_ORDER])
def test_second_order(name, fun, args):
    check_second_order(fun, args)


@pytest.mark.parametrize("name, message", SECOND_ORDER_REFUSED.items())
def test_second_order_refused(name, message):
    _, fun, args = next(c for c in CASES if c[0] == name)
    with pytest.raises(srcad.SrcadError, match=message):
        check_second_order(fun, args)


# ---- refusals ----------------------------------------------------------------------------------

def t_cdf_in_df(x, df):
    return np.sum(stats.t.cdf(x, df))


def polygamma_order(n, x):
    return np.sum(special.polygamma(n, x))


def eigh_generalized(a, b):
    return np.sum(linalg.eigh(a, b)[0])


def eigh_subset(a):
    return np.sum(linalg.eigh(a, subset_by_index=[0, 1])[0])


def solve_banded(a, b):
    return np.sum(linalg.solve(a, b, assume_a="tridiagonal"))


def cho_factor_unused_triangle(a):
    c, low = linalg.cho_factor(a)
    return np.sum(c)


def sqrtm_complex(a):
    return np.sum(np.real(linalg.sqrtm(a)))


def logm_complex(a):
    return np.sum(np.real(linalg.logm(-a)))


def logm_disp(a):
    return np.sum(linalg.logm(a, disp=False)[0])


def fftconvolve_axes(a, b):
    return np.sum(signal.fftconvolve(a, b, axes=1))


def lfilter_initial_state(x):
    return np.sum(signal.lfilter([1.0, 0.5], [1.0, -0.3], x, zi=np.zeros(1))[0])


def lfilter_rows(x):
    return np.sum(signal.lfilter([1.0, 0.5], [1.0, -0.3], np.outer(x, x)))


def mvn_diagonal_cov(x, cov):
    return np.sum(stats.multivariate_normal.logpdf(x, np.zeros(3), cov))


def cdist_cityblock(a, b):
    return np.sum(distance.cdist(a, b, "cityblock"))


def pdist_minkowski(x):
    return np.sum(distance.pdist(x, "minkowski", p=3))


def poisson_in_count(k, mu):
    return np.sum(stats.poisson.logpmf(k, mu))


def binom_in_trials(n, p):
    return np.sum(stats.binom.logpmf(COUNTS, n, p))


def chi2_cdf_in_df(x, df):
    return np.sum(stats.chi2.cdf(x, df))


def zeta_in_x(x):
    return np.sum(special.zeta(x, 2.0))


def qr_pivoting(a):
    q, r, columns = linalg.qr(a, pivoting=True)
    return np.sum(r * r)


def lu_of(a):
    p, lower, upper = linalg.lu(a)
    return np.sum(upper * upper)


def lu_permute_l(a):
    permuted, upper = linalg.lu(a, permute_l=True)
    return np.sum(upper * upper)


def polar_of(a):
    u, p = linalg.polar(a)
    return np.sum(p)


REFUSED = [
    ("zeta-in-x", zeta_in_x, [np.array([2.5, 3.0])], 0, "scipy.special.zeta in its exponent x"),
    ("qr-pivoting", qr_pivoting, [general27(3)], 0, "scipy.linalg.qr.pivoting=True. .the column order"),
    ("lu-not-square", lu_of, [R27(2, 3)], 0, "scipy.linalg.lu of square matrices only"),
    ("lu-permute_l", lu_permute_l, [general27(3)], 0, "scipy.linalg.lu with its default results .P, L, U. only"),
    ("polar-not-square", polar_of, [R27(3, 2)], 0, "scipy.linalg.polar of square matrices only"),
    ("cdist-cityblock", cdist_cityblock, [R(3, 2), R(2, 2)], 0, "'euclidean' or 'sqeuclidean' only, not 'cityblock'"),
    ("pdist-p", pdist_minkowski, [R(3, 2)], 0, "pdist does not support the keyword argument 'p'"),
    ("t.cdf-in-df", t_cdf_in_df, [R(3), 3.0], 1, "scipy.stats.t.cdf in its shape df"),
    ("poisson.logpmf-in-k", poisson_in_count, [np.array([0.0, 2.0, 5.0]), 1.5], 0,
     "scipy.stats.poisson.logpmf in its count k; pass it as a constant"),
    ("binom.logpmf-in-n", binom_in_trials, [7.0, unit(3)], 0, "scipy.stats.binom.logpmf in its number of trials n"),
    ("chi2.cdf-in-df", chi2_cdf_in_df, [positive(3), 3.0], 1, "scipy.stats.chi2.cdf in its shape df"),
    ("polygamma-order", polygamma_order, [2.0, positive(3)], 0, "polygamma in its order"),
    ("eigh-generalized", eigh_generalized, [spd(3), spd(3)], 0, "generalized eigenproblem"),
    ("eigh-subset", eigh_subset, [spd(3)], 0, "subset_by_index"),
    ("solve-tridiagonal", solve_banded, [general(3), R(3)], 0, "assume_a='tridiagonal'"),
    ("cho_factor-unused-triangle", cho_factor_unused_triangle, [spd(3)], 0, "outside its triangle"),
    ("sqrtm-complex", sqrtm_complex, [-spd(3)], 0, "complex"),
    ("logm-complex", logm_complex, [spd(3)], 0, "real logarithms only"),
    ("fftconvolve-axes", fftconvolve_axes, [R(2, 5), R(2, 3)], 0, "fftconvolve with axes"),
    ("lfilter-zi", lfilter_initial_state, [R(5)], 0, "scipy.signal.lfilter with zi"),
    ("lfilter-2d", lfilter_rows, [R(5)], 0, "scipy.signal.lfilter of a 1-D signal only"),
    ("mvn-diagonal-cov", mvn_diagonal_cov, [R(4, 3), positive(3)], 1, "full covariance matrix"),
]
if "disp" in inspect.signature(linalg.logm).parameters:  # (SciPy 1.18 has no disp)
    REFUSED.append(("logm-disp", logm_disp, [spd(3)], 0, "scipy.linalg.logm without disp"))


@pytest.mark.parametrize("name, fun, args, wrt, message", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused(name, fun, args, wrt, message):
    """Options srcad does not differentiate are errors naming them, never a silent guess."""
    with pytest.raises(srcad.SrcadError, match=message.replace("(", r"\(").replace("[", r"\[")):
        srcad.grad(fun, wrt=wrt)(*args)


def test_scipy_rules_register_only_once_scipy_is_imported(tmp_path):
    """``import srcad`` imports no SciPy; the SciPy rules register when a program uses SciPy."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import srcad
        from srcad import registry
        assert not any(name == "scipy" or name.startswith("scipy.") for name in sys.modules), "scipy imported"
        import scipy.stats

        @srcad.differentiable
        def f(x):
            return np.sum(scipy.stats.norm.logpdf(x))

        print(f.grad(np.ones(3)))
        assert registry.VJP.get(scipy.stats.norm.logpdf) is not None
    """)
    script = tmp_path / "lazy_scipy.py"
    script.write_text(code)
    root = str(pathlib.Path(importlib.util.find_spec("srcad").origin).parents[1])
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=root,
                            env={"PYTHONPATH": root, "PATH": ""})
    assert result.returncode == 0, result.stderr
    assert "[-1. -1. -1.]" in result.stdout


# ---- one call of every rule, for the hygiene sweep (tests/test_rules_hygiene.py) ---------------

def _stats_calls():
    """Every method of every distribution, moving every argument it differentiates."""
    rows = []
    for dist, shapes in [(stats.norm, []), (stats.t, [3.5]), (stats.gamma, [2.5]), (stats.beta, [2.0, 3.0])]:
        for method in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]:
            density = method in ("logpdf", "pdf")
            first = unit(3) if dist is stats.beta or method in ("ppf", "isf") else positive(3)
            args = [first, *shapes, 0.1 if method in ("ppf", "isf") or dist is not stats.beta else -0.1, 1.2]
            moving = (0, len(args) - 2, len(args) - 1) + (tuple(range(1, 1 + len(shapes))) if density else ())
            rows.append((getattr(dist, method), args, {}, moving, None))
    return rows


def _location_scale_calls():
    """logpdf and cdf of the distributions of scipy_stats_location_scale, moving every argument
    they differentiate (x, shapes, loc, scale)."""
    rows = []
    for dist, shapes, cdf_shapes in [(stats.expon, [], True), (stats.lognorm, [0.7], True), (stats.cauchy, [], True),
                                     (stats.laplace, [], True), (stats.logistic, [], False),
                                     (stats.gumbel_r, [], True), (stats.weibull_min, [1.6], True),
                                     (stats.chi2, [3.5], False), (stats.halfnorm, [], True),
                                     (stats.invgamma, [2.5], False)]:
        args = [positive(3) + 0.3, *shapes, -0.2, 1.2]
        loc_scale = (len(args) - 2, len(args) - 1)
        rows.append((dist.logpdf, args, {}, (0, *range(1, 1 + len(shapes)), *loc_scale), None))
        rows.append((dist.cdf, args, {}, (0, *(range(1, 1 + len(shapes)) if cdf_shapes else ()), *loc_scale), None))
    return rows


SPD3 = spd(3)
LU3 = linalg.lu_factor(general(3))
CHO3 = linalg.cho_factor(SPD3)

HYGIENE_CALLS = _stats_calls() + [
    (stats.multivariate_normal.logpdf, [R(4, 3), R(3), SPD3], {}, (0, 1, 2), None),
    (stats.poisson.logpmf, [COUNTS, positive(3)], {}, (1,), None),
    (stats.binom.logpmf, [COUNTS, 6, unit(3)], {}, (2,), None),
    (stats.nbinom.logpmf, [COUNTS, positive(3), unit(3)], {}, (1, 2), None),
    *_location_scale_calls(),
    (special.erfinv, [unit(3) - 0.5], {}, (0,), None),
    (special.erfcinv, [unit(3)], {}, (0,), None),
    (special.erfcx, [R(3)], {}, (0,), None),
    (special.log_ndtr, [R(3)], {}, (0,), None),
    (special.ndtr, [R(3)], {}, (0,), None),
    (special.ndtri, [unit(3)], {}, (0,), None),
    (special.log_expit, [R(3)], {}, (0,), None),
    (special.rgamma, [positive(3)], {}, (0,), None),
    (special.entr, [positive(3)], {}, (0,), None),
    (special.i0, [R(3)], {}, (0,), None),
    (special.i1, [R(3)], {}, (0,), None),
    (special.i0e, [R(3)], {}, (0,), None),
    (special.i1e, [R(3)], {}, (0,), None),
    (special.j0, [positive(3)], {}, (0,), None),
    (special.j1, [positive(3)], {}, (0,), None),
    (special.y0, [positive(3)], {}, (0,), None),
    (special.y1, [positive(3)], {}, (0,), None),
    (special.polygamma, [1, positive(3)], {}, (1,), None),
    (special.iv, [1.5, positive(3)], {}, (1,), None),
    (special.ive, [2.0, R(3)], {}, (1,), None),
    (special.jv, [2.5, positive(3)], {}, (1,), None),
    (special.yv, [0.5, positive(3)], {}, (1,), None),
    (special.multigammaln, [positive(3) + 2, 3], {}, (0,), None),
    (special.beta, [positive(3), positive(2, 3)], {}, (0, 1), None),
    (special.betaln, [positive(3), positive(3)], {}, (0, 1), None),
    (special.rel_entr, [positive(3), positive(3)], {}, (0, 1), None),
    (special.kl_div, [positive(3), positive(3)], {}, (0, 1), None),
    (special.gammainc, [2.5, positive(3)], {}, (1,), None),
    (special.gammaincc, [1.5, positive(3)], {}, (1,), None),
    (special.cbrt, [R(3)], {}, (0,), None),
    (special.dawsn, [R(3)], {}, (0,), None),
    (special.exprel, [np.array([-1.3, 2e-4, 0.8])], {}, (0,), None),
    (special.exp1, [positive(3)], {}, (0,), None),
    (special.expi, [positive(3)], {}, (0,), None),
    (special.spence, [positive(3)], {}, (0,), None),
    (special.loggamma, [positive(3)], {}, (0,), None),
    (special.k0, [positive(3)], {}, (0,), None),
    (special.k1, [positive(3)], {}, (0,), None),
    (special.boxcox1p, [positive(3), R(3)], {}, (0, 1), None),
    (special.huber, [positive(3) + 0.5, R(3) * 2], {}, (0, 1), None),
    (special.pseudo_huber, [positive(3), R(3)], {}, (0, 1), None),
    (linalg.solve_triangular, [general(3), R(3, 2)], {"trans": 1, "lower": True}, (0, 1), None),
    (linalg.cholesky, [SPD3], {"lower": True}, (0,), None),
    (linalg.cho_factor, [SPD3, True], {}, (0,), "{fn}({0}, {1})[0][:, 0]"),
    (linalg.cho_solve, [CHO3, R(3, 2)], {}, (1,), None),
    (linalg.lu_factor, [general(3)], {}, (0,), "{fn}({0})[0]"),
    (linalg.lu_solve, [LU3, R(3)], {"trans": 1}, (1,), None),
    (linalg.solve, [SPD3, R(3, 2)], {"assume_a": "pos"}, (0, 1), None),
    (linalg.inv, [general(3)], {}, (0,), None),
    (linalg.det, [general(3)], {}, (0,), None),
    (linalg.eigh, [SPD3], {}, (0,), "{fn}({0})[0]"),
    (linalg.expm, [R(3, 3) / 2], {}, (0,), None),
    (linalg.sqrtm, [SPD3], {}, (0,), None),
    (linalg.solve_sylvester, [general(3), general(2), R(3, 2)], {}, (0, 1, 2), None),
    (linalg.solve_continuous_lyapunov, [general(3), R(3, 3)], {}, (0, 1), None),
    (linalg.logm, [SPD3], {}, (0,), None),
    (linalg.svdvals, [R27(3, 4)], {}, (0,), None),
    (linalg.qr, [R27(4, 3)], {}, (0,), "{fn}({0})[1]"),
    (linalg.lu, [general27(3)], {}, (0,), "{fn}({0})[2]"),
    (linalg.polar, [general27(3)], {}, (0,), "{fn}({0})[0]"),
    (special.zeta, [3.0, positive27(3)], {}, (1,), None),
    *([(special.softplus, [R27(3)], {}, (0,), None)] if hasattr(special, "softplus") else []),
    (signal.convolve, [R(6), R(3)], {"mode": "same"}, (0, 1), None),
    (signal.correlate, [R(6), R(3)], {"mode": "valid"}, (0, 1), None),
    (signal.fftconvolve, [R(6), R(3)], {}, (0, 1), None),
    (signal.convolve2d, [R(4, 5), R(2, 3)], {"mode": "same"}, (0, 1), None),
    (signal.correlate2d, [R(4, 5), R(2, 3)], {"mode": "same"}, (0, 1), None),
    (signal.lfilter, [R(3), np.array([1.0, -0.4]), R(6)], {}, (0, 1, 2), None),
    (optimize.rosen, [R(4)], {}, (0,), None),
    (optimize.rosen_der, [R(4)], {}, (0,), None),
    (distance.cdist, [R(4, 2), R(3, 2)], {}, (0, 1), None),
    (distance.pdist, [R(4, 2), "sqeuclidean"], {}, (0,), None),
]


def test_scipy_rule_modules_import_without_scipy(tmp_path):
    code = textwrap.dedent("""
        import sys
        sys.modules["scipy"] = None  # any import of scipy now fails
        from srcad import registry
        from srcad.rules import scipy_library  # noqa: F401
        assert not any(rule.fn.__module__.startswith("srcad.rules.scipy") for rule in registry.VJP.values())
        print("ok")
    """)
    script = tmp_path / "without_scipy.py"
    script.write_text(code)
    root = str(pathlib.Path(importlib.util.find_spec("srcad").origin).parents[1])
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=root,
                            env={"PYTHONPATH": root, "PATH": ""})
    assert result.returncode == 0, result.stderr
