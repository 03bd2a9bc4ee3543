"""Rules for ``scipy.stats``: the densities, distribution functions and quantiles of the
frozen-distribution singletons ``norm``, ``t``, ``gamma`` and ``beta``, reverse (vjp) and
forward (jvp); ``multivariate_normal.logpdf`` is in ``scipy_stats_multivariate``.

``scipy.stats.norm.logpdf`` is a method bound to the ``norm`` instance; bound methods of one
instance and function are equal and hash alike, so a rule keyed by ``stats.norm.logpdf``
matches every ``stats.norm.logpdf`` a user's code reaches.

Every method is differentiated in ``x`` (``q`` for quantiles), ``loc`` and ``scale``
through ``z = (x - loc) / scale``. The shape parameters (``df``, ``a``, ``b``) are
differentiated in ``pdf`` and ``logpdf``; in the distribution functions and quantiles
(derivatives of incomplete beta and gamma functions in their parameters) they are refused.
SciPy is optional: without it this module registers nothing.
"""
import numpy as np

from ..registry import no_derivative, register_jvp, register_vjp
from ..runtime import unbroadcast

try:
    from scipy import special, stats
except ImportError:  # SciPy is not a dependency of srcad
    stats = None

SHAPES_ONLY_IN_DENSITIES = "srcad differentiates shape parameters in pdf and logpdf only; pass it as a constant"


# ---- ∂ log f(z) / ∂z and ∂ log f(z) / ∂shape of the standard densities -----------------------

def norm_score(z):
    return -z


def t_score(z, df):
    return -(df + 1) * z / (df + z * z)


def t_score_df(z, df):
    return (special.digamma((df + 1) / 2) - special.digamma(df / 2) - 1 / df - np.log1p(z * z / df)
            + (df + 1) * z * z / (df * (df + z * z))) / 2


def gamma_score(z, a):
    return (a - 1) / z - 1


def gamma_score_a(z, a):
    return np.log(z) - special.digamma(a)


def beta_score(z, a, b):
    return (a - 1) / z - (b - 1) / (1 - z)


def beta_score_a(z, a, b):
    return np.log(z) - special.digamma(a) + special.digamma(a + b)


def beta_score_b(z, a, b):
    return np.log1p(-z) - special.digamma(b) + special.digamma(a + b)


if stats is not None:

    # ---- scipy.stats.norm ------------------------------------------------------

    @register_vjp(stats.norm.logpdf)
    def norm_logpdf(y, x, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = norm_score(z) / scale
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * (slope * (x - loc) + 1) / scale, scale)

    @register_jvp(stats.norm.logpdf)
    def norm_logpdf_jvp(y, x, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = norm_score(z) / scale
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * (slope * (x - loc) + 1) / scale

    @register_vjp(stats.norm.pdf)
    def norm_pdf(y, x, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = y * norm_score(z) / scale
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * (slope * (x - loc) + y) / scale, scale)

    @register_jvp(stats.norm.pdf)
    def norm_pdf_jvp(y, x, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = y * norm_score(z) / scale
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * (slope * (x - loc) + y) / scale

    @register_vjp(stats.norm.cdf)
    def norm_cdf(y, x, loc=0.0, scale=1.0):
        slope = stats.norm.pdf(x, loc, scale)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)

    @register_jvp(stats.norm.cdf)
    def norm_cdf_jvp(y, x, loc=0.0, scale=1.0):
        slope = stats.norm.pdf(x, loc, scale)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale

    @register_vjp(stats.norm.logcdf)
    def norm_logcdf(y, x, loc=0.0, scale=1.0):
        slope = np.exp(stats.norm.logpdf(x, loc, scale) - y)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)

    @register_jvp(stats.norm.logcdf)
    def norm_logcdf_jvp(y, x, loc=0.0, scale=1.0):
        slope = np.exp(stats.norm.logpdf(x, loc, scale) - y)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale

    @register_vjp(stats.norm.sf)
    def norm_sf(y, x, loc=0.0, scale=1.0):
        slope = -stats.norm.pdf(x, loc, scale)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)

    @register_jvp(stats.norm.sf)
    def norm_sf_jvp(y, x, loc=0.0, scale=1.0):
        slope = -stats.norm.pdf(x, loc, scale)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale

    @register_vjp(stats.norm.logsf)
    def norm_logsf(y, x, loc=0.0, scale=1.0):
        slope = -np.exp(stats.norm.logpdf(x, loc, scale) - y)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)

    @register_jvp(stats.norm.logsf)
    def norm_logsf_jvp(y, x, loc=0.0, scale=1.0):
        slope = -np.exp(stats.norm.logpdf(x, loc, scale) - y)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale

    @register_vjp(stats.norm.ppf)
    def norm_ppf(y, q, loc=0.0, scale=1.0):
        slope = 1 / stats.norm.pdf(y, loc, scale)
        d[q] += unbroadcast(d[y] * slope, q)
        d[loc] += unbroadcast(d[y], loc)
        d[scale] += unbroadcast(d[y] * (y - loc) / scale, scale)

    @register_jvp(stats.norm.ppf)
    def norm_ppf_jvp(y, q, loc=0.0, scale=1.0):
        slope = 1 / stats.norm.pdf(y, loc, scale)
        t[y] += t[q] * slope
        t[y] += t[loc]
        t[y] += t[scale] * (y - loc) / scale

    @register_vjp(stats.norm.isf)
    def norm_isf(y, q, loc=0.0, scale=1.0):
        slope = -1 / stats.norm.pdf(y, loc, scale)
        d[q] += unbroadcast(d[y] * slope, q)
        d[loc] += unbroadcast(d[y], loc)
        d[scale] += unbroadcast(d[y] * (y - loc) / scale, scale)

    @register_jvp(stats.norm.isf)
    def norm_isf_jvp(y, q, loc=0.0, scale=1.0):
        slope = -1 / stats.norm.pdf(y, loc, scale)
        t[y] += t[q] * slope
        t[y] += t[loc]
        t[y] += t[scale] * (y - loc) / scale

    # ---- scipy.stats.t ---------------------------------------------------------

    @register_vjp(stats.t.logpdf)
    def t_logpdf(y, x, df, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = t_score(z, df) / scale
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * (slope * (x - loc) + 1) / scale, scale)
        d[df] += unbroadcast(d[y] * t_score_df(z, df), df)

    @register_jvp(stats.t.logpdf)
    def t_logpdf_jvp(y, x, df, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = t_score(z, df) / scale
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * (slope * (x - loc) + 1) / scale
        t[y] += t[df] * t_score_df(z, df)

    @register_vjp(stats.t.pdf)
    def t_pdf(y, x, df, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = y * t_score(z, df) / scale
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * (slope * (x - loc) + y) / scale, scale)
        d[df] += unbroadcast(d[y] * y * t_score_df(z, df), df)

    @register_jvp(stats.t.pdf)
    def t_pdf_jvp(y, x, df, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = y * t_score(z, df) / scale
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * (slope * (x - loc) + y) / scale
        t[y] += t[df] * y * t_score_df(z, df)

    @register_vjp(stats.t.cdf)
    def t_cdf(y, x, df, loc=0.0, scale=1.0):
        slope = stats.t.pdf(x, df, loc, scale)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)
        d[df] += no_derivative("scipy.stats.t.cdf in its shape df", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.t.cdf)
    def t_cdf_jvp(y, x, df, loc=0.0, scale=1.0):
        slope = stats.t.pdf(x, df, loc, scale)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale
        t[y] += t[df] * no_derivative("scipy.stats.t.cdf in its shape df", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.t.logcdf)
    def t_logcdf(y, x, df, loc=0.0, scale=1.0):
        slope = np.exp(stats.t.logpdf(x, df, loc, scale) - y)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)
        d[df] += no_derivative("scipy.stats.t.logcdf in its shape df", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.t.logcdf)
    def t_logcdf_jvp(y, x, df, loc=0.0, scale=1.0):
        slope = np.exp(stats.t.logpdf(x, df, loc, scale) - y)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale
        t[y] += t[df] * no_derivative("scipy.stats.t.logcdf in its shape df", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.t.sf)
    def t_sf(y, x, df, loc=0.0, scale=1.0):
        slope = -stats.t.pdf(x, df, loc, scale)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)
        d[df] += no_derivative("scipy.stats.t.sf in its shape df", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.t.sf)
    def t_sf_jvp(y, x, df, loc=0.0, scale=1.0):
        slope = -stats.t.pdf(x, df, loc, scale)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale
        t[y] += t[df] * no_derivative("scipy.stats.t.sf in its shape df", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.t.logsf)
    def t_logsf(y, x, df, loc=0.0, scale=1.0):
        slope = -np.exp(stats.t.logpdf(x, df, loc, scale) - y)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)
        d[df] += no_derivative("scipy.stats.t.logsf in its shape df", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.t.logsf)
    def t_logsf_jvp(y, x, df, loc=0.0, scale=1.0):
        slope = -np.exp(stats.t.logpdf(x, df, loc, scale) - y)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale
        t[y] += t[df] * no_derivative("scipy.stats.t.logsf in its shape df", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.t.ppf)
    def t_ppf(y, q, df, loc=0.0, scale=1.0):
        slope = 1 / stats.t.pdf(y, df, loc, scale)
        d[q] += unbroadcast(d[y] * slope, q)
        d[loc] += unbroadcast(d[y], loc)
        d[scale] += unbroadcast(d[y] * (y - loc) / scale, scale)
        d[df] += no_derivative("scipy.stats.t.ppf in its shape df", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.t.ppf)
    def t_ppf_jvp(y, q, df, loc=0.0, scale=1.0):
        slope = 1 / stats.t.pdf(y, df, loc, scale)
        t[y] += t[q] * slope
        t[y] += t[loc]
        t[y] += t[scale] * (y - loc) / scale
        t[y] += t[df] * no_derivative("scipy.stats.t.ppf in its shape df", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.t.isf)
    def t_isf(y, q, df, loc=0.0, scale=1.0):
        slope = -1 / stats.t.pdf(y, df, loc, scale)
        d[q] += unbroadcast(d[y] * slope, q)
        d[loc] += unbroadcast(d[y], loc)
        d[scale] += unbroadcast(d[y] * (y - loc) / scale, scale)
        d[df] += no_derivative("scipy.stats.t.isf in its shape df", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.t.isf)
    def t_isf_jvp(y, q, df, loc=0.0, scale=1.0):
        slope = -1 / stats.t.pdf(y, df, loc, scale)
        t[y] += t[q] * slope
        t[y] += t[loc]
        t[y] += t[scale] * (y - loc) / scale
        t[y] += t[df] * no_derivative("scipy.stats.t.isf in its shape df", SHAPES_ONLY_IN_DENSITIES)

    # ---- scipy.stats.gamma -----------------------------------------------------

    @register_vjp(stats.gamma.logpdf)
    def gamma_logpdf(y, x, a, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = gamma_score(z, a) / scale
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * (slope * (x - loc) + 1) / scale, scale)
        d[a] += unbroadcast(d[y] * gamma_score_a(z, a), a)

    @register_jvp(stats.gamma.logpdf)
    def gamma_logpdf_jvp(y, x, a, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = gamma_score(z, a) / scale
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * (slope * (x - loc) + 1) / scale
        t[y] += t[a] * gamma_score_a(z, a)

    @register_vjp(stats.gamma.pdf)
    def gamma_pdf(y, x, a, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = y * gamma_score(z, a) / scale
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * (slope * (x - loc) + y) / scale, scale)
        d[a] += unbroadcast(d[y] * y * gamma_score_a(z, a), a)

    @register_jvp(stats.gamma.pdf)
    def gamma_pdf_jvp(y, x, a, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = y * gamma_score(z, a) / scale
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * (slope * (x - loc) + y) / scale
        t[y] += t[a] * y * gamma_score_a(z, a)

    @register_vjp(stats.gamma.cdf)
    def gamma_cdf(y, x, a, loc=0.0, scale=1.0):
        slope = stats.gamma.pdf(x, a, loc, scale)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)
        d[a] += no_derivative("scipy.stats.gamma.cdf in its shape a", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.gamma.cdf)
    def gamma_cdf_jvp(y, x, a, loc=0.0, scale=1.0):
        slope = stats.gamma.pdf(x, a, loc, scale)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale
        t[y] += t[a] * no_derivative("scipy.stats.gamma.cdf in its shape a", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.gamma.logcdf)
    def gamma_logcdf(y, x, a, loc=0.0, scale=1.0):
        slope = np.exp(stats.gamma.logpdf(x, a, loc, scale) - y)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)
        d[a] += no_derivative("scipy.stats.gamma.logcdf in its shape a", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.gamma.logcdf)
    def gamma_logcdf_jvp(y, x, a, loc=0.0, scale=1.0):
        slope = np.exp(stats.gamma.logpdf(x, a, loc, scale) - y)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale
        t[y] += t[a] * no_derivative("scipy.stats.gamma.logcdf in its shape a", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.gamma.sf)
    def gamma_sf(y, x, a, loc=0.0, scale=1.0):
        slope = -stats.gamma.pdf(x, a, loc, scale)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)
        d[a] += no_derivative("scipy.stats.gamma.sf in its shape a", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.gamma.sf)
    def gamma_sf_jvp(y, x, a, loc=0.0, scale=1.0):
        slope = -stats.gamma.pdf(x, a, loc, scale)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale
        t[y] += t[a] * no_derivative("scipy.stats.gamma.sf in its shape a", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.gamma.logsf)
    def gamma_logsf(y, x, a, loc=0.0, scale=1.0):
        slope = -np.exp(stats.gamma.logpdf(x, a, loc, scale) - y)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)
        d[a] += no_derivative("scipy.stats.gamma.logsf in its shape a", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.gamma.logsf)
    def gamma_logsf_jvp(y, x, a, loc=0.0, scale=1.0):
        slope = -np.exp(stats.gamma.logpdf(x, a, loc, scale) - y)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale
        t[y] += t[a] * no_derivative("scipy.stats.gamma.logsf in its shape a", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.gamma.ppf)
    def gamma_ppf(y, q, a, loc=0.0, scale=1.0):
        slope = 1 / stats.gamma.pdf(y, a, loc, scale)
        d[q] += unbroadcast(d[y] * slope, q)
        d[loc] += unbroadcast(d[y], loc)
        d[scale] += unbroadcast(d[y] * (y - loc) / scale, scale)
        d[a] += no_derivative("scipy.stats.gamma.ppf in its shape a", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.gamma.ppf)
    def gamma_ppf_jvp(y, q, a, loc=0.0, scale=1.0):
        slope = 1 / stats.gamma.pdf(y, a, loc, scale)
        t[y] += t[q] * slope
        t[y] += t[loc]
        t[y] += t[scale] * (y - loc) / scale
        t[y] += t[a] * no_derivative("scipy.stats.gamma.ppf in its shape a", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.gamma.isf)
    def gamma_isf(y, q, a, loc=0.0, scale=1.0):
        slope = -1 / stats.gamma.pdf(y, a, loc, scale)
        d[q] += unbroadcast(d[y] * slope, q)
        d[loc] += unbroadcast(d[y], loc)
        d[scale] += unbroadcast(d[y] * (y - loc) / scale, scale)
        d[a] += no_derivative("scipy.stats.gamma.isf in its shape a", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.gamma.isf)
    def gamma_isf_jvp(y, q, a, loc=0.0, scale=1.0):
        slope = -1 / stats.gamma.pdf(y, a, loc, scale)
        t[y] += t[q] * slope
        t[y] += t[loc]
        t[y] += t[scale] * (y - loc) / scale
        t[y] += t[a] * no_derivative("scipy.stats.gamma.isf in its shape a", SHAPES_ONLY_IN_DENSITIES)

    # ---- scipy.stats.beta ------------------------------------------------------

    @register_vjp(stats.beta.logpdf)
    def beta_logpdf(y, x, a, b, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = beta_score(z, a, b) / scale
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * (slope * (x - loc) + 1) / scale, scale)
        d[a] += unbroadcast(d[y] * beta_score_a(z, a, b), a)
        d[b] += unbroadcast(d[y] * beta_score_b(z, a, b), b)

    @register_jvp(stats.beta.logpdf)
    def beta_logpdf_jvp(y, x, a, b, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = beta_score(z, a, b) / scale
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * (slope * (x - loc) + 1) / scale
        t[y] += t[a] * beta_score_a(z, a, b)
        t[y] += t[b] * beta_score_b(z, a, b)

    @register_vjp(stats.beta.pdf)
    def beta_pdf(y, x, a, b, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = y * beta_score(z, a, b) / scale
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * (slope * (x - loc) + y) / scale, scale)
        d[a] += unbroadcast(d[y] * y * beta_score_a(z, a, b), a)
        d[b] += unbroadcast(d[y] * y * beta_score_b(z, a, b), b)

    @register_jvp(stats.beta.pdf)
    def beta_pdf_jvp(y, x, a, b, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = y * beta_score(z, a, b) / scale
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * (slope * (x - loc) + y) / scale
        t[y] += t[a] * y * beta_score_a(z, a, b)
        t[y] += t[b] * y * beta_score_b(z, a, b)

    @register_vjp(stats.beta.cdf)
    def beta_cdf(y, x, a, b, loc=0.0, scale=1.0):
        slope = stats.beta.pdf(x, a, b, loc, scale)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)
        d[a] += no_derivative("scipy.stats.beta.cdf in its shape a", SHAPES_ONLY_IN_DENSITIES)
        d[b] += no_derivative("scipy.stats.beta.cdf in its shape b", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.beta.cdf)
    def beta_cdf_jvp(y, x, a, b, loc=0.0, scale=1.0):
        slope = stats.beta.pdf(x, a, b, loc, scale)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale
        t[y] += t[a] * no_derivative("scipy.stats.beta.cdf in its shape a", SHAPES_ONLY_IN_DENSITIES)
        t[y] += t[b] * no_derivative("scipy.stats.beta.cdf in its shape b", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.beta.logcdf)
    def beta_logcdf(y, x, a, b, loc=0.0, scale=1.0):
        slope = np.exp(stats.beta.logpdf(x, a, b, loc, scale) - y)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)
        d[a] += no_derivative("scipy.stats.beta.logcdf in its shape a", SHAPES_ONLY_IN_DENSITIES)
        d[b] += no_derivative("scipy.stats.beta.logcdf in its shape b", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.beta.logcdf)
    def beta_logcdf_jvp(y, x, a, b, loc=0.0, scale=1.0):
        slope = np.exp(stats.beta.logpdf(x, a, b, loc, scale) - y)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale
        t[y] += t[a] * no_derivative("scipy.stats.beta.logcdf in its shape a", SHAPES_ONLY_IN_DENSITIES)
        t[y] += t[b] * no_derivative("scipy.stats.beta.logcdf in its shape b", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.beta.sf)
    def beta_sf(y, x, a, b, loc=0.0, scale=1.0):
        slope = -stats.beta.pdf(x, a, b, loc, scale)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)
        d[a] += no_derivative("scipy.stats.beta.sf in its shape a", SHAPES_ONLY_IN_DENSITIES)
        d[b] += no_derivative("scipy.stats.beta.sf in its shape b", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.beta.sf)
    def beta_sf_jvp(y, x, a, b, loc=0.0, scale=1.0):
        slope = -stats.beta.pdf(x, a, b, loc, scale)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale
        t[y] += t[a] * no_derivative("scipy.stats.beta.sf in its shape a", SHAPES_ONLY_IN_DENSITIES)
        t[y] += t[b] * no_derivative("scipy.stats.beta.sf in its shape b", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.beta.logsf)
    def beta_logsf(y, x, a, b, loc=0.0, scale=1.0):
        slope = -np.exp(stats.beta.logpdf(x, a, b, loc, scale) - y)
        d[x] += unbroadcast(d[y] * slope, x)
        d[loc] += unbroadcast(-d[y] * slope, loc)
        d[scale] += unbroadcast(-d[y] * slope * (x - loc) / scale, scale)
        d[a] += no_derivative("scipy.stats.beta.logsf in its shape a", SHAPES_ONLY_IN_DENSITIES)
        d[b] += no_derivative("scipy.stats.beta.logsf in its shape b", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.beta.logsf)
    def beta_logsf_jvp(y, x, a, b, loc=0.0, scale=1.0):
        slope = -np.exp(stats.beta.logpdf(x, a, b, loc, scale) - y)
        t[y] += t[x] * slope
        t[y] += -t[loc] * slope
        t[y] += -t[scale] * slope * (x - loc) / scale
        t[y] += t[a] * no_derivative("scipy.stats.beta.logsf in its shape a", SHAPES_ONLY_IN_DENSITIES)
        t[y] += t[b] * no_derivative("scipy.stats.beta.logsf in its shape b", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.beta.ppf)
    def beta_ppf(y, q, a, b, loc=0.0, scale=1.0):
        slope = 1 / stats.beta.pdf(y, a, b, loc, scale)
        d[q] += unbroadcast(d[y] * slope, q)
        d[loc] += unbroadcast(d[y], loc)
        d[scale] += unbroadcast(d[y] * (y - loc) / scale, scale)
        d[a] += no_derivative("scipy.stats.beta.ppf in its shape a", SHAPES_ONLY_IN_DENSITIES)
        d[b] += no_derivative("scipy.stats.beta.ppf in its shape b", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.beta.ppf)
    def beta_ppf_jvp(y, q, a, b, loc=0.0, scale=1.0):
        slope = 1 / stats.beta.pdf(y, a, b, loc, scale)
        t[y] += t[q] * slope
        t[y] += t[loc]
        t[y] += t[scale] * (y - loc) / scale
        t[y] += t[a] * no_derivative("scipy.stats.beta.ppf in its shape a", SHAPES_ONLY_IN_DENSITIES)
        t[y] += t[b] * no_derivative("scipy.stats.beta.ppf in its shape b", SHAPES_ONLY_IN_DENSITIES)

    @register_vjp(stats.beta.isf)
    def beta_isf(y, q, a, b, loc=0.0, scale=1.0):
        slope = -1 / stats.beta.pdf(y, a, b, loc, scale)
        d[q] += unbroadcast(d[y] * slope, q)
        d[loc] += unbroadcast(d[y], loc)
        d[scale] += unbroadcast(d[y] * (y - loc) / scale, scale)
        d[a] += no_derivative("scipy.stats.beta.isf in its shape a", SHAPES_ONLY_IN_DENSITIES)
        d[b] += no_derivative("scipy.stats.beta.isf in its shape b", SHAPES_ONLY_IN_DENSITIES)

    @register_jvp(stats.beta.isf)
    def beta_isf_jvp(y, q, a, b, loc=0.0, scale=1.0):
        slope = -1 / stats.beta.pdf(y, a, b, loc, scale)
        t[y] += t[q] * slope
        t[y] += t[loc]
        t[y] += t[scale] * (y - loc) / scale
        t[y] += t[a] * no_derivative("scipy.stats.beta.isf in its shape a", SHAPES_ONLY_IN_DENSITIES)
        t[y] += t[b] * no_derivative("scipy.stats.beta.isf in its shape b", SHAPES_ONLY_IN_DENSITIES)
