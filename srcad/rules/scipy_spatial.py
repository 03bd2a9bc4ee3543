"""Rules for ``scipy.spatial.distance``'s ``cdist`` and ``pdist``, reverse (vjp) and forward
(jvp), for the metrics 'euclidean' (the default) and 'sqeuclidean'; and for ``squareform``,
which moves entries between the condensed vector of pairs i < j and the symmetric matrix
(linear: its adjoint moves them back, ``squareform_transpose``).

Both are written through the squared distances S = ‖aᵢ − bⱼ‖², whose adjoint in ``a`` is
Σⱼ 2wᵢⱼ (aᵢ − bⱼ) (two matrix products) for S's cotangent w; the distance D = √S has
w = ∂L/∂D / 2D. At distance 0 'euclidean' has no derivative, and the rules keep
``np.linalg.norm``'s convention there (docs/limitations.md, "Infinite local derivatives"):
reverse mode gives NaN (0/0) for the two points of the pair, as ``np.linalg.norm(a - b)``
does; in forward mode an operand whose row rests (tangent exactly 0) moves nothing, one that
moves gives NaN. Keep coincident points out of 'euclidean' (or use 'sqeuclidean', smooth
everywhere). Any other metric is an ``UnsupportedCaseError`` naming it; other options (``w=``,
``p=``, ``out=``) are refused at the call's line.
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_vjp

try:
    from scipy.spatial import distance
except ImportError:  # SciPy is not a dependency of srcad
    distance = None

METRICS = ("euclidean", "sqeuclidean")


def checked_metric(metric):
    if not (isinstance(metric, str) and metric in METRICS):
        raise UnsupportedCaseError(f"srcad differentiates scipy.spatial.distance's cdist and pdist with metric "
                                   f"'euclidean' or 'sqeuclidean' only, not {metric!r}: write the distances with "
                                   "NumPy (broadcasting a[:, None, :] - b[None, :, :])")
    return metric


def squared_distance_cotangent(g, y, metric):
    """The cotangent of the squared distances, given the cotangent ``g`` of ``y``, the distances
    in ``metric`` (NaN at a 'euclidean' distance 0, as ``np.linalg.norm``'s x / ‖x‖)."""
    return g if checked_metric(metric) == "sqeuclidean" else g / (2 * y)


def squared_distance_grad(w, a, b):
    """The adjoint of ``a`` in Sᵢⱼ = ‖aᵢ − bⱼ‖² for S's cotangent ``w``: Σⱼ 2wᵢⱼ (aᵢ − bⱼ)."""
    return 2 * (np.sum(w, axis=1)[:, None] * a - w @ b)


def distance_tangent(ta, a, b, y, metric):
    """The tangent of ``y = cdist(a, b, metric)`` when ``a`` moves by ``ta`` (``b`` fixed):
    2 (aᵢ − bⱼ)·ṫaᵢ for 'sqeuclidean', divided by 2y for 'euclidean', where a row of ``a`` that
    rests moves nothing, also at distance 0 (``np.linalg.norm``'s convention)."""
    squared = 2 * (np.sum(a * ta, axis=1)[:, None] - ta @ np.transpose(b))
    if checked_metric(metric) == "sqeuclidean":
        return squared
    return np.where(np.any(ta != 0, axis=1)[:, None], squared / (2 * y), 0.0)


def pair_matrix(g, n):
    """The symmetric n × n matrix holding the condensed ``g`` (``pdist``'s pairs i < j) at (i, j)
    and (j, i), zeros on its diagonal: ``squared_distance_grad`` of it gives ``pdist``'s adjoint."""
    first, second = np.triu_indices(n, 1)
    w = np.zeros((n, n), np.result_type(g, np.float32))
    w[first, second] = g
    w[second, first] = g
    return w


def squareform_transpose(g, ndim):
    """The adjoint of ``squareform`` of an ``ndim``-D operand for the cotangent ``g`` of its
    result: of a condensed vector (``ndim`` 1), ``g``'s pair (i, j) plus (j, i) for each i < j;
    of a matrix, whose pairs i < j it reads, ``g`` there and zeros elsewhere."""
    if ndim == 1:
        return distance.squareform(g + np.transpose(g), checks=False)
    return np.triu(distance.squareform(g, checks=False))


def pair_distance_tangent(tx, x, y, metric):
    """The tangent of ``y = pdist(x, metric)`` when ``x`` moves by ``tx``: the pair's tangent
    (ṫxᵢ − ṫxⱼ) is known, so a pair that rests moves nothing, as ``np.linalg.norm`` of it would."""
    first, second = np.triu_indices(np.shape(x)[0], 1)
    moves = tx[first] - tx[second]
    squared = 2 * np.sum((np.asarray(x)[first] - np.asarray(x)[second]) * moves, axis=1)
    if checked_metric(metric) == "sqeuclidean":
        return squared
    return np.where(np.any(moves != 0, axis=1), squared / (2 * y), 0.0)


if distance is not None:

    # generated adjoints call pair_matrix: linear in g, it scatters what the transpose gathers
    @register_vjp(pair_matrix)
    def pair_matrix_vjp(r, g, n):
        d[g] += (d[r] + np.transpose(d[r]))[np.triu_indices(n, 1)]

    @register_jvp(pair_matrix)
    def pair_matrix_jvp(r, g, n):
        t[r] += pair_matrix(t[g], n)

    @register_vjp(distance.squareform)
    def squareform(y, X, force="no", checks=True):
        d[X] += squareform_transpose(d[y], np.ndim(X))

    @register_jvp(distance.squareform)
    def squareform_jvp(y, X, force="no", checks=True):
        t[y] += distance.squareform(t[X], checks=False)

    # generated adjoints call squareform_transpose: linear in g, its own adjoint reads the pairs
    # i < j of a matrix, or makes the symmetric matrix of a vector, as squareform does
    @register_vjp(squareform_transpose)
    def squareform_transpose_vjp(r, g, ndim):
        d[g] += distance.squareform(d[r], checks=False)

    @register_jvp(squareform_transpose)
    def squareform_transpose_jvp(r, g, ndim):
        t[r] += squareform_transpose(t[g], ndim)

    @register_vjp(distance.cdist)
    def cdist(y, XA, XB, metric="euclidean"):
        w = squared_distance_cotangent(d[y], y, metric)
        d[XA] += squared_distance_grad(w, XA, XB)
        d[XB] += squared_distance_grad(np.transpose(w), XB, XA)

    @register_jvp(distance.cdist)
    def cdist_jvp(y, XA, XB, metric="euclidean"):
        t[y] += distance_tangent(t[XA], XA, XB, y, metric)
        t[y] += np.transpose(distance_tangent(t[XB], XB, XA, np.transpose(y), metric))

    @register_vjp(distance.pdist)
    def pdist(y, X, metric="euclidean"):
        d[X] += squared_distance_grad(pair_matrix(squared_distance_cotangent(d[y], y, metric), np.shape(X)[0]), X, X)

    @register_jvp(distance.pdist)
    def pdist_jvp(y, X, metric="euclidean"):
        t[y] += pair_distance_tangent(t[X], X, y, metric)
