"""Rules for ``scipy.stats.multivariate_normal.logpdf``, reverse (vjp) and forward (jvp), in
the points ``x``, the ``mean`` and a full covariance matrix ``cov``.

SciPy reads the lower triangle of ``cov`` (``eigh(lower=True)``): entries of the upper
triangle get a zero adjoint, as for ``np.linalg.cholesky``. A scalar or 1-D ``cov`` and
``allow_singular`` with a singular matrix are not differentiated (refused).
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_vjp
from ..runtime import unbroadcast
from .numpy_linalg import from_triangle, symmetric_from_triangle


try:
    from scipy import stats
except ImportError:  # SciPy is not a dependency of srcad
    stats = None


def mvn_precision_residual(x, mean, cov):
    """``Σ⁻¹ (x - μ)`` for each point (the last axis of ``x``) and ``Σ⁻¹``; ``cov`` a full matrix."""
    if np.ndim(cov) != 2:
        raise UnsupportedCaseError("srcad differentiates scipy.stats.multivariate_normal.logpdf with a full "
                                   "covariance matrix only; pass cov as a 2-D array")
    k = np.shape(cov)[-1]
    if np.shape(x)[-1:] != (k,):
        raise UnsupportedCaseError("srcad differentiates scipy.stats.multivariate_normal.logpdf for points "
                                   "along the last axis of x only (x.shape[-1] == cov.shape[0])")
    precision = np.linalg.inv(symmetric_from_triangle(cov, lower=True))
    residual = np.asarray(x) - (0.0 if mean is None else np.asarray(mean))
    return residual @ precision, precision


def mvn_cov_grad(g, x, mean, cov):
    """The adjoint of ``cov``: ``½ Σ_points g (Σ⁻¹ r rᵀ Σ⁻¹ - Σ⁻¹)``, on the lower triangle SciPy
    reads."""
    solved, precision = mvn_precision_residual(x, mean, cov)
    g = np.asarray(g)
    points = solved.reshape(-1, solved.shape[-1])
    weights = np.broadcast_to(g, solved.shape[:-1]).reshape(-1)
    s = 0.5 * ((points * weights[:, None]).T @ points - np.sum(weights) * precision)
    return from_triangle(s, lower=True)


def mvn_cov_tangent(tcov, x, mean, cov):
    solved, precision = mvn_precision_residual(x, mean, cov)
    tsym = symmetric_from_triangle(tcov, lower=True)
    return 0.5 * (np.einsum("...i,ij,...j->...", solved, tsym, solved) - np.sum(precision * tsym))


def mvn_mean_grad(g, x, mean, cov):
    solved, _ = mvn_precision_residual(x, mean, cov)
    return unbroadcast(np.asarray(g)[..., None] * solved, mean)


if stats is not None:

    @register_vjp(stats.multivariate_normal.logpdf)
    def multivariate_normal_logpdf(y, x, mean=None, cov=1, allow_singular=False):
        d[x] += -np.asarray(d[y])[..., None] * mvn_precision_residual(x, mean, cov)[0]
        d[mean] += mvn_mean_grad(d[y], x, mean, cov)
        d[cov] += mvn_cov_grad(d[y], x, mean, cov)

    @register_jvp(stats.multivariate_normal.logpdf)
    def multivariate_normal_logpdf_jvp(y, x, mean=None, cov=1, allow_singular=False):
        t[y] += -np.sum(t[x] * mvn_precision_residual(x, mean, cov)[0], axis=-1)
        t[y] += np.sum(t[mean] * mvn_precision_residual(x, mean, cov)[0], axis=-1)
        t[y] += mvn_cov_tangent(t[cov], x, mean, cov)
