"""Rules for ``scipy.stats``: the densities, distribution functions and quantiles of the
frozen-distribution singletons ``norm`` and ``t``, reverse (vjp) and forward (jvp); ``gamma``
and ``beta`` (bounded supports) are in ``scipy_stats_bounded``, ten more continuous families
(``expon``, ``lognorm``, ``cauchy``...) in ``scipy_stats_location_scale``, the counting
distributions' ``logpmf`` in ``scipy_stats_discrete``, ``multivariate_normal.logpdf`` in
``scipy_stats_multivariate``; all follow the scheme below.

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

from ..registry import no_derivative, register_partials

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

    @register_partials(stats.norm.logpdf)
    def norm_logpdf(y, x, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = norm_score(z) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale}

    @register_partials(stats.norm.pdf)
    def norm_pdf(y, x, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = y * norm_score(z) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + y) / scale}

    @register_partials(stats.norm.cdf)
    def norm_cdf(y, x, loc=0.0, scale=1.0):
        slope = stats.norm.pdf(x, loc, scale)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale}

    @register_partials(stats.norm.logcdf)
    def norm_logcdf(y, x, loc=0.0, scale=1.0):
        slope = np.exp(stats.norm.logpdf(x, loc, scale) - y)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale}

    @register_partials(stats.norm.sf)
    def norm_sf(y, x, loc=0.0, scale=1.0):
        slope = -stats.norm.pdf(x, loc, scale)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale}

    @register_partials(stats.norm.logsf)
    def norm_logsf(y, x, loc=0.0, scale=1.0):
        slope = -np.exp(stats.norm.logpdf(x, loc, scale) - y)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale}

    @register_partials(stats.norm.ppf)
    def norm_ppf(y, q, loc=0.0, scale=1.0):
        slope = 1 / stats.norm.pdf(y, loc, scale)
        return {q: slope, loc: 1, scale: (y - loc) / scale}

    @register_partials(stats.norm.isf)
    def norm_isf(y, q, loc=0.0, scale=1.0):
        slope = -1 / stats.norm.pdf(y, loc, scale)
        return {q: slope, loc: 1, scale: (y - loc) / scale}

    # ---- scipy.stats.t ---------------------------------------------------------

    @register_partials(stats.t.logpdf)
    def t_logpdf(y, x, df, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = t_score(z, df) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale,
                df: t_score_df(z, df)}

    @register_partials(stats.t.pdf)
    def t_pdf(y, x, df, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = y * t_score(z, df) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + y) / scale,
                df: y * t_score_df(z, df)}

    @register_partials(stats.t.cdf)
    def t_cdf(y, x, df, loc=0.0, scale=1.0):
        slope = stats.t.pdf(x, df, loc, scale)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                df: no_derivative("scipy.stats.t.cdf in its shape df", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.t.logcdf)
    def t_logcdf(y, x, df, loc=0.0, scale=1.0):
        slope = np.exp(stats.t.logpdf(x, df, loc, scale) - y)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                df: no_derivative("scipy.stats.t.logcdf in its shape df", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.t.sf)
    def t_sf(y, x, df, loc=0.0, scale=1.0):
        slope = -stats.t.pdf(x, df, loc, scale)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                df: no_derivative("scipy.stats.t.sf in its shape df", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.t.logsf)
    def t_logsf(y, x, df, loc=0.0, scale=1.0):
        slope = -np.exp(stats.t.logpdf(x, df, loc, scale) - y)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                df: no_derivative("scipy.stats.t.logsf in its shape df", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.t.ppf)
    def t_ppf(y, q, df, loc=0.0, scale=1.0):
        slope = 1 / stats.t.pdf(y, df, loc, scale)
        return {q: slope, loc: 1, scale: (y - loc) / scale,
                df: no_derivative("scipy.stats.t.ppf in its shape df", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.t.isf)
    def t_isf(y, q, df, loc=0.0, scale=1.0):
        slope = -1 / stats.t.pdf(y, df, loc, scale)
        return {q: slope, loc: 1, scale: (y - loc) / scale,
                df: no_derivative("scipy.stats.t.isf in its shape df", SHAPES_ONLY_IN_DENSITIES)}
