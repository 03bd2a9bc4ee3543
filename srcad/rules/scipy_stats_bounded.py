"""Rules for ``scipy.stats.gamma`` and ``scipy.stats.beta`` (supports bounded by ``loc`` and
``loc + scale``), reverse (vjp) and forward (jvp), by the scheme of ``scipy_stats``: every
method in ``x`` (``q``), ``loc`` and ``scale``; the shapes ``a``, ``b`` in ``pdf`` and
``logpdf`` only (refused elsewhere)."""
import numpy as np

from ..registry import no_derivative, register_jvp, register_vjp
from ..runtime import unbroadcast
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
