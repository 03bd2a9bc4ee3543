"""Rules for ``scipy.stats``: the densities, distribution functions and quantiles of the
frozen-distribution singletons ``norm`` and ``t``, reverse (vjp) and forward (jvp); ``gamma``
and ``beta`` (bounded supports) are in ``scipy_stats_bounded``, ``multivariate_normal.logpdf``
in ``scipy_stats_multivariate``; all follow the scheme below.

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
