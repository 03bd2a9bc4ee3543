"""Covariance and correlation: ``np.cov(m, rowvar=..., bias=..., ddof=...)`` and
``np.corrcoef(x, rowvar=...)``.

With the variables as the rows of ``X`` (``m`` as given, transposed if ``rowvar`` is false, a
row if it is a vector) and ``Xc`` its rows centred, ``C = Xc Xcᵀ / k`` (``k`` the number of
observations less ``ddof``). Centring is a projection, its own adjoint, so
``d[X] = center((G + Gᵀ) Xc) / k``; the correlation ``R = C / (s sᵀ)`` with
``s = sqrt(diag C)`` adds ``d[C] = G / (s sᵀ) - diag(...)`` (the diagonal of the
row and column sums of ``G ∘ R`` over ``2 s²``). A second array ``y``, ``fweights``, ``aweights`` and
``dtype`` are refused (the rules do not take them).
"""
import numpy as np

from ..registry import register_jvp, register_vjp


def observations(m, rowvar):
    """``m`` as variables by observations: a 2-D float array."""
    X = np.asarray(m, dtype=np.result_type(m, np.float64))
    if X.ndim == 1:
        return X[None, :]
    if X.ndim != 2:
        raise ValueError("m has more than 2 dimensions")
    return X if rowvar else X.T


def laid_out(g, m, rowvar):
    """An adjoint of ``observations(m, rowvar)`` given back ``m``'s shape."""
    if np.ndim(m) == 1:
        return g[0]
    return g if rowvar else g.T


def centred(X):
    return X - X.mean(axis=1, keepdims=True)


def divisor(X, bias, ddof):
    if ddof is None:
        ddof = 0 if bias else 1
    return X.shape[1] - ddof


def cov_grad(g, m, rowvar, bias, ddof):
    X = observations(m, rowvar)
    G = np.reshape(g, (X.shape[0], X.shape[0]))
    return laid_out(centred((G + G.T) @ centred(X)) / divisor(X, bias, ddof), m, rowvar)


def cov_tangent(t, m, rowvar, bias, ddof, y):
    X = observations(m, rowvar)
    T = observations(t, rowvar)
    Xc, Tc = centred(X), centred(T)
    product = Tc @ Xc.T
    return np.reshape((product + product.T) / divisor(X, bias, ddof), np.shape(y))


@register_vjp(np.cov)
def cov(y, m, rowvar=True, bias=False, ddof=None):
    d[m] += cov_grad(d[y], m, rowvar, bias, ddof)


@register_jvp(np.cov)
def cov_jvp(y, m, rowvar=True, bias=False, ddof=None):
    t[y] += cov_tangent(t[m], m, rowvar, bias, ddof, y)


def correlation_to_covariance(g, m, rowvar, r):
    """The adjoint of ``C`` from that of ``R = C / (s sᵀ)``, ``s = sqrt(diag C)``."""
    C = np.atleast_2d(np.cov(m, rowvar=rowvar))
    G, R = np.atleast_2d(g), np.atleast_2d(r)
    s = np.sqrt(np.diag(C))
    weighted = G * R
    dC = G / np.outer(s, s) - np.diag((weighted.sum(axis=0) + weighted.sum(axis=1)) / (2 * s ** 2))
    return np.reshape(dC, np.shape(g))


def correlation_tangent(t_c, m, rowvar, r):
    C = np.atleast_2d(np.cov(m, rowvar=rowvar))
    T, R = np.atleast_2d(t_c), np.atleast_2d(r)
    relative = np.diag(T) / np.diag(C)  # d(s_i)/s_i is half of it
    return np.reshape(T / np.sqrt(np.outer(np.diag(C), np.diag(C))) - 0.5 * R * (relative[:, None] + relative[None, :]),
                      np.shape(r))


@register_vjp(np.corrcoef)
def corrcoef(y, x, rowvar=True):
    d[x] += cov_grad(correlation_to_covariance(d[y], x, rowvar, y), x, rowvar, False, None)


@register_jvp(np.corrcoef)
def corrcoef_jvp(y, x, rowvar=True):
    t[y] += correlation_tangent(cov_tangent(t[x], x, rowvar, False, None, np.cov(x, rowvar=rowvar)), x, rowvar, y)
