"""Rules for ``scipy.stats.gamma`` and ``scipy.stats.beta`` (supports bounded by ``loc`` and
``loc + scale``), reverse (vjp) and forward (jvp), by the scheme of ``scipy_stats``: every
method in ``x`` (``q``), ``loc`` and ``scale``; the shapes ``a``, ``b`` in ``pdf`` and
``logpdf`` only (refused elsewhere)."""
import numpy as np

from ..registry import no_derivative, register_partials
from .scipy_stats import SHAPES_ONLY_IN_DENSITIES

try:
    from scipy import special, stats
except ImportError:  # SciPy is not a dependency of srcad
    stats = None


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

    # ---- scipy.stats.gamma -----------------------------------------------------

    @register_partials(stats.gamma.logpdf)
    def gamma_logpdf(y, x, a, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = gamma_score(z, a) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale,
                a: gamma_score_a(z, a)}

    @register_partials(stats.gamma.pdf)
    def gamma_pdf(y, x, a, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = y * gamma_score(z, a) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + y) / scale,
                a: y * gamma_score_a(z, a)}

    @register_partials(stats.gamma.cdf)
    def gamma_cdf(y, x, a, loc=0.0, scale=1.0):
        slope = stats.gamma.pdf(x, a, loc, scale)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                a: no_derivative("scipy.stats.gamma.cdf in its shape a", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.gamma.logcdf)
    def gamma_logcdf(y, x, a, loc=0.0, scale=1.0):
        slope = np.exp(stats.gamma.logpdf(x, a, loc, scale) - y)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                a: no_derivative("scipy.stats.gamma.logcdf in its shape a", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.gamma.sf)
    def gamma_sf(y, x, a, loc=0.0, scale=1.0):
        slope = -stats.gamma.pdf(x, a, loc, scale)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                a: no_derivative("scipy.stats.gamma.sf in its shape a", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.gamma.logsf)
    def gamma_logsf(y, x, a, loc=0.0, scale=1.0):
        slope = -np.exp(stats.gamma.logpdf(x, a, loc, scale) - y)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                a: no_derivative("scipy.stats.gamma.logsf in its shape a", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.gamma.ppf)
    def gamma_ppf(y, q, a, loc=0.0, scale=1.0):
        slope = 1 / stats.gamma.pdf(y, a, loc, scale)
        return {q: slope, loc: 1, scale: (y - loc) / scale,
                a: no_derivative("scipy.stats.gamma.ppf in its shape a", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.gamma.isf)
    def gamma_isf(y, q, a, loc=0.0, scale=1.0):
        slope = -1 / stats.gamma.pdf(y, a, loc, scale)
        return {q: slope, loc: 1, scale: (y - loc) / scale,
                a: no_derivative("scipy.stats.gamma.isf in its shape a", SHAPES_ONLY_IN_DENSITIES)}

    # ---- scipy.stats.beta ------------------------------------------------------

    @register_partials(stats.beta.logpdf)
    def beta_logpdf(y, x, a, b, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = beta_score(z, a, b) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale,
                a: beta_score_a(z, a, b),
                b: beta_score_b(z, a, b)}

    @register_partials(stats.beta.pdf)
    def beta_pdf(y, x, a, b, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = y * beta_score(z, a, b) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + y) / scale,
                a: y * beta_score_a(z, a, b),
                b: y * beta_score_b(z, a, b)}

    @register_partials(stats.beta.cdf)
    def beta_cdf(y, x, a, b, loc=0.0, scale=1.0):
        slope = stats.beta.pdf(x, a, b, loc, scale)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                a: no_derivative("scipy.stats.beta.cdf in its shape a", SHAPES_ONLY_IN_DENSITIES),
                b: no_derivative("scipy.stats.beta.cdf in its shape b", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.beta.logcdf)
    def beta_logcdf(y, x, a, b, loc=0.0, scale=1.0):
        slope = np.exp(stats.beta.logpdf(x, a, b, loc, scale) - y)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                a: no_derivative("scipy.stats.beta.logcdf in its shape a", SHAPES_ONLY_IN_DENSITIES),
                b: no_derivative("scipy.stats.beta.logcdf in its shape b", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.beta.sf)
    def beta_sf(y, x, a, b, loc=0.0, scale=1.0):
        slope = -stats.beta.pdf(x, a, b, loc, scale)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                a: no_derivative("scipy.stats.beta.sf in its shape a", SHAPES_ONLY_IN_DENSITIES),
                b: no_derivative("scipy.stats.beta.sf in its shape b", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.beta.logsf)
    def beta_logsf(y, x, a, b, loc=0.0, scale=1.0):
        slope = -np.exp(stats.beta.logpdf(x, a, b, loc, scale) - y)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                a: no_derivative("scipy.stats.beta.logsf in its shape a", SHAPES_ONLY_IN_DENSITIES),
                b: no_derivative("scipy.stats.beta.logsf in its shape b", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.beta.ppf)
    def beta_ppf(y, q, a, b, loc=0.0, scale=1.0):
        slope = 1 / stats.beta.pdf(y, a, b, loc, scale)
        return {q: slope, loc: 1, scale: (y - loc) / scale,
                a: no_derivative("scipy.stats.beta.ppf in its shape a", SHAPES_ONLY_IN_DENSITIES),
                b: no_derivative("scipy.stats.beta.ppf in its shape b", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.beta.isf)
    def beta_isf(y, q, a, b, loc=0.0, scale=1.0):
        slope = -1 / stats.beta.pdf(y, a, b, loc, scale)
        return {q: slope, loc: 1, scale: (y - loc) / scale,
                a: no_derivative("scipy.stats.beta.isf in its shape a", SHAPES_ONLY_IN_DENSITIES),
                b: no_derivative("scipy.stats.beta.isf in its shape b", SHAPES_ONLY_IN_DENSITIES)}
