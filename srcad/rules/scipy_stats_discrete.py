"""Rules for the log-probabilities of ``scipy.stats``'s counting distributions ``poisson``,
``binom`` and ``nbinom``, reverse (vjp) and forward (jvp): differentiated in the rate ``mu``
and the probability ``p`` (and ``nbinom``'s real ``n``); the count ``k``, ``binom``'s number of
trials ``n`` and the integer shift ``loc`` are refused (the log-probability is not a smooth
function of them).
"""
import numpy as np

from ..registry import no_derivative, register_partials

try:
    from scipy import special, stats
except ImportError:  # SciPy is not a dependency of srcad
    stats = None

COUNTS_ARE_CONSTANT = "pass it as a constant (counts are integers)"


if stats is not None:

    @register_partials(stats.poisson.logpmf)
    def poisson_logpmf(y, k, mu, loc=0):
        # log P = k log μ - μ - log k!
        return {mu: (k - loc) / mu - 1,
                k: no_derivative("scipy.stats.poisson.logpmf in its count k", COUNTS_ARE_CONSTANT),
                loc: no_derivative("scipy.stats.poisson.logpmf in its shift loc", COUNTS_ARE_CONSTANT)}

    @register_partials(stats.binom.logpmf)
    def binom_logpmf(y, k, n, p, loc=0):
        # log P = log C(n, k) + k log p + (n - k) log(1 - p)
        return {p: (k - loc) / p - (n - (k - loc)) / (1 - p),
                k: no_derivative("scipy.stats.binom.logpmf in its count k", COUNTS_ARE_CONSTANT),
                n: no_derivative("scipy.stats.binom.logpmf in its number of trials n", COUNTS_ARE_CONSTANT),
                loc: no_derivative("scipy.stats.binom.logpmf in its shift loc", COUNTS_ARE_CONSTANT)}

    @register_partials(stats.nbinom.logpmf)
    def nbinom_logpmf(y, k, n, p, loc=0):
        # log P = log Γ(k + n) - log Γ(n) - log k! + n log p + k log(1 - p), n > 0 real
        return {p: n / p - (k - loc) / (1 - p),
                n: special.digamma(k - loc + n) - special.digamma(n) + np.log(p),
                k: no_derivative("scipy.stats.nbinom.logpmf in its count k", COUNTS_ARE_CONSTANT),
                loc: no_derivative("scipy.stats.nbinom.logpmf in its shift loc", COUNTS_ARE_CONSTANT)}
