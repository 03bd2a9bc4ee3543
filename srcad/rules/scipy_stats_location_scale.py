"""Rules for more of ``scipy.stats``'s continuous distributions — ``expon``, ``lognorm``,
``cauchy``, ``laplace``, ``logistic``, ``gumbel_r``, ``weibull_min``, ``chi2``, ``halfnorm``,
``invgamma`` — reverse (vjp) and forward (jvp), by the scheme of ``scipy_stats``: ``logpdf`` in
``x``, ``loc``, ``scale`` and the shapes, through ``z = (x - loc) / scale`` and the score
``∂ log f(z) / ∂z`` of the standard density; ``cdf`` in ``x``, ``loc``, ``scale`` (its slope is
the density), and in the shapes where the derivative is elementary (``lognorm``'s ``s``,
``weibull_min``'s ``c``; ``chi2``'s ``df`` and ``invgamma``'s ``a`` are refused: derivatives of
incomplete gamma functions in their parameter).
"""
import numpy as np

from ..registry import no_derivative, register_partials
from .scipy_stats import SHAPES_ONLY_IN_DENSITIES

try:
    from scipy import special, stats
except ImportError:  # SciPy is not a dependency of srcad
    stats = None


# ---- ∂ log f(z) / ∂z and ∂ log f(z) / ∂shape of the standard densities -----------------------

def lognorm_score(z, s):
    return -(1 + np.log(z) / (s * s)) / z


def lognorm_score_s(z, s):
    return (np.log(z) ** 2 / (s * s) - 1) / s


def cauchy_score(z):
    return -2 * z / (1 + z * z)


def logistic_score(z):
    return -np.tanh(z / 2)


def gumbel_r_score(z):
    return np.expm1(-z)


def weibull_min_score(z, c):
    return (c - 1) / z - c * z ** (c - 1)


def weibull_min_score_c(z, c):
    return 1 / c + np.log(z) * (1 - z ** c)


def chi2_score(z, df):
    return (df / 2 - 1) / z - 0.5


def chi2_score_df(z, df):
    return (np.log(z / 2) - special.digamma(df / 2)) / 2


def invgamma_score(z, a):
    return (1 / z - (a + 1)) / z


def invgamma_score_a(z, a):
    return -np.log(z) - special.digamma(a)


if stats is not None:

    # ---- log-densities: {x: slope, loc: -slope, scale: ...} with slope = score / scale ---

    @register_partials(stats.expon.logpdf)
    def expon_logpdf(y, x, loc=0.0, scale=1.0):
        slope = -1 / scale  # the score of e^(-z) is -1
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale}

    @register_partials(stats.lognorm.logpdf)
    def lognorm_logpdf(y, x, s, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = lognorm_score(z, s) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale, s: lognorm_score_s(z, s)}

    @register_partials(stats.cauchy.logpdf)
    def cauchy_logpdf(y, x, loc=0.0, scale=1.0):
        slope = cauchy_score((x - loc) / scale) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale}

    @register_partials(stats.laplace.logpdf)
    def laplace_logpdf(y, x, loc=0.0, scale=1.0):
        slope = -np.sign(x - loc) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale}

    @register_partials(stats.logistic.logpdf)
    def logistic_logpdf(y, x, loc=0.0, scale=1.0):
        slope = logistic_score((x - loc) / scale) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale}

    @register_partials(stats.gumbel_r.logpdf)
    def gumbel_r_logpdf(y, x, loc=0.0, scale=1.0):
        slope = gumbel_r_score((x - loc) / scale) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale}

    @register_partials(stats.weibull_min.logpdf)
    def weibull_min_logpdf(y, x, c, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = weibull_min_score(z, c) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale, c: weibull_min_score_c(z, c)}

    @register_partials(stats.chi2.logpdf)
    def chi2_logpdf(y, x, df, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = chi2_score(z, df) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale, df: chi2_score_df(z, df)}

    @register_partials(stats.halfnorm.logpdf)
    def halfnorm_logpdf(y, x, loc=0.0, scale=1.0):
        slope = -(x - loc) / (scale * scale)  # the score of e^(-z²/2) is -z
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale}

    @register_partials(stats.invgamma.logpdf)
    def invgamma_logpdf(y, x, a, loc=0.0, scale=1.0):
        z = (x - loc) / scale
        slope = invgamma_score(z, a) / scale
        return {x: slope, loc: -slope, scale: -(slope * (x - loc) + 1) / scale, a: invgamma_score_a(z, a)}

    # ---- distribution functions: the slope in x is the density -----------------------------

    @register_partials(stats.expon.cdf)
    def expon_cdf(y, x, loc=0.0, scale=1.0):
        slope = np.exp(stats.expon.logpdf(x, loc, scale))
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale}

    @register_partials(stats.lognorm.cdf)
    def lognorm_cdf(y, x, s, loc=0.0, scale=1.0):
        slope = np.exp(stats.lognorm.logpdf(x, s, loc, scale))
        # F = Φ(log(z) / s): ∂F/∂s = -φ(log(z) / s) log(z) / s² = -slope · (x - loc) · log(z) / s
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                s: -slope * (x - loc) * np.log((x - loc) / scale) / s}

    @register_partials(stats.cauchy.cdf)
    def cauchy_cdf(y, x, loc=0.0, scale=1.0):
        slope = np.exp(stats.cauchy.logpdf(x, loc, scale))
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale}

    @register_partials(stats.laplace.cdf)
    def laplace_cdf(y, x, loc=0.0, scale=1.0):
        slope = np.exp(stats.laplace.logpdf(x, loc, scale))
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale}

    @register_partials(stats.logistic.cdf)
    def logistic_cdf(y, x, loc=0.0, scale=1.0):
        slope = y * (1 - y) / scale  # the logistic density is F (1 - F)
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale}

    @register_partials(stats.gumbel_r.cdf)
    def gumbel_r_cdf(y, x, loc=0.0, scale=1.0):
        slope = np.exp(stats.gumbel_r.logpdf(x, loc, scale))
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale}

    @register_partials(stats.weibull_min.cdf)
    def weibull_min_cdf(y, x, c, loc=0.0, scale=1.0):
        slope = np.exp(stats.weibull_min.logpdf(x, c, loc, scale))
        # F = 1 - exp(-z^c): ∂F/∂c = exp(-z^c) z^c log(z) = slope · (x - loc) · log(z) / c
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                c: slope * (x - loc) * np.log((x - loc) / scale) / c}

    @register_partials(stats.chi2.cdf)
    def chi2_cdf(y, x, df, loc=0.0, scale=1.0):
        slope = np.exp(stats.chi2.logpdf(x, df, loc, scale))
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                df: no_derivative("scipy.stats.chi2.cdf in its shape df", SHAPES_ONLY_IN_DENSITIES)}

    @register_partials(stats.halfnorm.cdf)
    def halfnorm_cdf(y, x, loc=0.0, scale=1.0):
        slope = np.exp(stats.halfnorm.logpdf(x, loc, scale))
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale}

    @register_partials(stats.invgamma.cdf)
    def invgamma_cdf(y, x, a, loc=0.0, scale=1.0):
        slope = np.exp(stats.invgamma.logpdf(x, a, loc, scale))
        return {x: slope, loc: -slope, scale: -slope * (x - loc) / scale,
                a: no_derivative("scipy.stats.invgamma.cdf in its shape a", SHAPES_ONLY_IN_DENSITIES)}
