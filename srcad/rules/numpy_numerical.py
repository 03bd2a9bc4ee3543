"""Rules for NumPy's numerical helpers, reverse (vjp) and forward (jvp): ``np.append``,
``np.insert``, ``np.delete``, ``np.gradient``, ``np.interp``, ``np.polyval``, ``np.polyfit``, ``np.vander`` and
``np.trapezoid``
(``np.trapz`` where NumPy still has it).

Several are linear maps of their data; their adjoints apply the transposed map, built from
the map itself (``np.gradient`` of an identity matrix is the differencing matrix), so that
every spacing and ``edge_order`` NumPy supports is covered by construction and the helpers
stay pure (no in-place updates), which lets a derivative of a derivative read them.
Refused: spacings of ``np.gradient``, ``period`` of ``np.interp``, ``w``, ``full`` and ``cov`` of
``np.polyfit`` (whose Vandermonde matrix must have full column rank).
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import no_derivative, register_jvp, register_nondifferentiable, register_vjp
from ..runtime import unbroadcast, zeros_like
from .numpy_linalg import mT
from .numpy_reductions import float_dtype

# ---- np.append --------------------------------------------------------------------------------


def append_grad(g, arr, values, axis, which):
    """The adjoint of ``arr`` (which=0) or ``values`` (which=1) in ``np.append(arr, values, axis)``."""
    g = np.asarray(g)
    if axis is None:
        cut = np.size(arr)
        part = g[:cut] if which == 0 else g[cut:]
        return np.reshape(part, np.shape(arr if which == 0 else values))
    cut = np.shape(arr)[axis]
    part = np.take(g, np.arange(0, cut) if which == 0 else np.arange(cut, g.shape[axis]), axis=axis)
    return unbroadcast(part, arr if which == 0 else values)


def append_tangent(tv, arr, values, axis, which):
    zeros = np.zeros(np.shape(values if which == 0 else arr), np.result_type(np.asarray(tv).dtype, np.float16))
    return np.append(tv, zeros, axis) if which == 0 else np.append(zeros, tv, axis)


@register_vjp(np.append)
def append(y, arr, values, axis=None):
    d[arr] += append_grad(d[y], arr, values, axis, 0)
    d[values] += append_grad(d[y], arr, values, axis, 1)


@register_jvp(np.append)
def append_jvp(y, arr, values, axis=None):
    t[y] += append_tangent(t[arr], arr, values, axis, 0)
    t[y] += append_tangent(t[values], arr, values, axis, 1)


# ---- np.insert and np.delete ------------------------------------------------------------------
# Which entry of the result copies which entry of an argument is found by running NumPy's own
# function on arrays of positions: every ``obj``, ``axis`` and broadcast of ``values`` it accepts
# is covered by construction.

def insert_sources(arr, obj, values, axis, which):
    """For each entry of ``np.insert(arr, obj, values, axis)``, the flat position it copies in
    ``arr`` (which=0) or ``values`` (which=1); -1 where it copies the other."""
    if which == 0:  # values of their own shape: a scalar obj inserts as many entries as values has
        positions = np.insert(np.reshape(np.arange(np.size(arr)), np.shape(arr)), obj, np.full(np.shape(values), -1),
                              axis)
    else:
        positions = np.insert(np.full(np.shape(arr), -1), obj, np.reshape(np.arange(np.size(values)), np.shape(values)),
                              axis)
    return np.ravel(positions)


def delete_sources(arr, obj, axis):
    """For each entry of ``np.delete(arr, obj, axis)``, the flat position in ``arr`` it copies."""
    return np.ravel(np.delete(np.reshape(np.arange(np.size(arr)), np.shape(arr)), obj, axis))


register_nondifferentiable(insert_sources, delete_sources, reason="it computes positions")


def scatter_back(g, sources, shape):
    """The adjoint of copying entries: the cotangent of result entry ``i`` goes to the flat
    position ``sources[i]`` of an argument of ``shape`` (none for -1); copies of one entry add."""
    kept = sources >= 0
    sums = np.bincount(sources[kept], weights=np.ravel(g)[kept], minlength=int(np.prod(shape)))
    return np.reshape(sums, shape)


@register_vjp(np.insert)
def insert(y, arr, obj, values, axis=None):
    d[arr] += scatter_back(d[y], insert_sources(arr, obj, values, axis, 0), np.shape(arr))
    d[values] += scatter_back(d[y], insert_sources(arr, obj, values, axis, 1), np.shape(values))


@register_jvp(np.insert)
def insert_jvp(y, arr, obj, values, axis=None):
    t[y] += np.insert(t[arr], obj, zeros_like(values), axis)
    t[y] += np.insert(zeros_like(arr), obj, t[values], axis)


@register_vjp(np.delete)
def delete(y, arr, obj, axis=None):
    d[arr] += scatter_back(d[y], delete_sources(arr, obj, axis), np.shape(arr))


@register_jvp(np.delete)
def delete_jvp(y, arr, obj, axis=None):
    t[y] += np.delete(t[arr], obj, axis)


# ---- np.gradient ------------------------------------------------------------------------------

def gradient_axes(f, axis):
    if axis is None:
        return tuple(range(np.ndim(f)))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % np.ndim(f) for a in axes)


register_nondifferentiable(gradient_axes, reason="it computes axis numbers")


def gradient_spacings(varargs, count):
    """The spacing arguments of each of ``count`` axes: none (1), one for every axis, or one each."""
    if len(varargs) < 2:
        return [tuple(varargs)] * count
    return [(h,) for h in varargs]


def gradient_grad(g, f, varargs, axis, edge_order):
    """The adjoint of ``f`` in ``np.gradient(f, *varargs, axis, edge_order)``: ``Dᵀ ḡ`` along
    each axis, summed over the axes' results; ``D``, the differencing matrix along an axis, is
    ``np.gradient`` of an identity matrix."""
    axes = gradient_axes(f, axis)
    parts = list(g) if len(axes) > 1 else [g]
    grad = np.zeros(np.shape(f), np.result_type(np.asarray(f).dtype, np.float16))
    for ax, part, spacing in zip(axes, parts, gradient_spacings(varargs, len(axes))):
        matrix = np.gradient(np.eye(np.shape(f)[ax]), *spacing, axis=0, edge_order=edge_order)
        grad = grad + np.moveaxis(np.moveaxis(np.asarray(part), ax, -1) @ matrix, -1, ax)
    return grad


@register_vjp(np.gradient)
def gradient(y, f, *varargs, axis=None, edge_order=1):
    d[f] += gradient_grad(d[y], f, varargs, axis, edge_order)
    for h in varargs:
        d[h] += no_derivative("np.gradient in its spacing", "pass the spacing or coordinates as constants")


@register_jvp(np.gradient)
def gradient_jvp(y, f, *varargs, axis=None, edge_order=1):
    t[y] += np.gradient(t[f], *varargs, axis=axis, edge_order=edge_order)
    for h in varargs:
        t[y] += t[h] * no_derivative("np.gradient in its spacing", "pass the spacing or coordinates as constants")


# ---- np.interp --------------------------------------------------------------------------------

PERIODIC = ("srcad does not differentiate np.interp with period; wrap x yourself (x % period) and pass the "
            "periodic sample points")


def interp_weights(x, xp, period):
    """``W`` with ``np.interp(x, xp, fp) = W @ fp`` (x flattened) inside ``[xp[0], xp[-1]]`` and
    at the clamped ends, and the masks of points left and right of the range."""
    if period is not None:
        raise UnsupportedCaseError(PERIODIC)
    x = np.ravel(x)
    xp = np.asarray(xp)
    n = xp.shape[0]
    k = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, n - 2)
    w = np.clip((x - xp[k]) / (xp[k + 1] - xp[k]), 0.0, 1.0)
    basis = np.eye(n)
    return basis[k] * (1 - w)[:, None] + basis[k + 1] * w[:, None], x < xp[0], x > xp[-1]


def interp_slope(x, xp, fp, period):
    """``∂y/∂x``: the slope of the segment ``x`` is in, 0 outside ``[xp[0], xp[-1]]``."""
    if period is not None:
        raise UnsupportedCaseError(PERIODIC)
    xp, fp = np.asarray(xp), np.asarray(fp)
    k = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, xp.shape[0] - 2)
    inside = (x >= xp[0]) & (x <= xp[-1])
    return np.where(inside, (fp[k + 1] - fp[k]) / (xp[k + 1] - xp[k]), 0.0)


def interp_fp_grad(g, x, xp, left, right, period):
    weights, below, above = interp_weights(x, xp, period)
    keep = ~((below & (left is not None)) | (above & (right is not None)))
    return (np.ravel(g) * keep) @ weights


def interp_fp_tangent(tfp, x, xp, left, right, period):
    weights, below, above = interp_weights(x, xp, period)
    keep = ~((below & (left is not None)) | (above & (right is not None)))
    return np.reshape((weights @ tfp) * keep, np.shape(x))


def interp_xp_grad(g, x, xp, fp, period):
    """``∂y/∂xp = -slope · W``: on [xp[k], xp[k+1]], y = fp[k] + (x - xp[k]) (fp[k+1] - fp[k]) /
    (xp[k+1] - xp[k]) moves by -slope (1 - w) in xp[k] and by -slope w in xp[k+1], the weights
    ``W`` of fp; outside [xp[0], xp[-1]] y is clamped (or ``left``/``right``) and the slope 0."""
    weights, _, _ = interp_weights(x, xp, period)
    return np.ravel(-g * interp_slope(x, xp, fp, period)) @ weights


def interp_xp_tangent(txp, x, xp, fp, period):
    weights, _, _ = interp_weights(x, xp, period)
    return -interp_slope(x, xp, fp, period) * np.reshape(weights @ txp, np.shape(x))


@register_vjp(np.interp)
def interp(y, x, xp, fp, left=None, right=None, period=None):
    d[x] += d[y] * interp_slope(x, xp, fp, period)
    d[xp] += interp_xp_grad(d[y], x, xp, fp, period)
    d[fp] += interp_fp_grad(d[y], x, xp, left, right, period)
    d[left] += np.sum(d[y] * (x < xp[0]))
    d[right] += np.sum(d[y] * (x > xp[-1]))


@register_jvp(np.interp)
def interp_jvp(y, x, xp, fp, left=None, right=None, period=None):
    t[y] += t[x] * interp_slope(x, xp, fp, period)
    t[y] += interp_xp_tangent(t[xp], x, xp, fp, period)
    t[y] += interp_fp_tangent(t[fp], x, xp, left, right, period)
    t[y] += t[left] * (x < xp[0])
    t[y] += t[right] * (x > xp[-1])


# ---- np.polyval -------------------------------------------------------------------------------

def polyval_powers(p, x):
    """``x ** (N-1), ..., x ** 0`` along a new last axis: ``polyval(p, x) = powers @ p``."""
    return np.asarray(x)[..., None] ** np.arange(np.shape(p)[0] - 1, -1, -1)


def polyval_coefficients_grad(g, p, x):
    """``Σ_points ḡ · powers``: the adjoint of the coefficients."""
    powers = polyval_powers(p, x)
    g = np.broadcast_to(g, powers.shape[:-1])
    return np.tensordot(g, powers, axes=np.ndim(g))


def polynomial_derivative(p):
    """The coefficients of ``p'`` (highest power first)."""
    p = np.asarray(p)
    return p[:-1] * np.arange(p.shape[0] - 1, 0, -1)


@register_vjp(np.polyval)
def polyval(y, p, x):
    d[p] += polyval_coefficients_grad(d[y], p, x)
    d[x] += unbroadcast(d[y] * np.polyval(polynomial_derivative(p), x), x)


@register_jvp(np.polyval)
def polyval_jvp(y, p, x):
    t[y] += polyval_powers(p, x) @ t[p]
    t[y] += t[x] * np.polyval(polynomial_derivative(p), x)


# ---- np.polyfit: a least-squares fit by a Vandermonde matrix ----------------------------------

def polyfit_options(w, full, cov):
    """``np.polyfit``'s options srcad does not differentiate, refused."""
    for name, given in (("w", w is not None), ("full", full is not False), ("cov", cov is not False)):
        if given:
            raise UnsupportedCaseError(f"srcad differentiates np.polyfit(x, y, deg) and its rcond only, not {name}=; "
                                       "for weights write the fit polyfit solves, np.linalg.lstsq(w[:, None] * "
                                       "np.vander(x, deg + 1), w * y)[0]")


def polyfit_design(x, deg):
    """The Vandermonde matrix ``V[i, j] = x_i ** (deg - j)``: ``polyfit`` minimises ‖V p - y‖."""
    return np.asarray(x)[:, None] ** np.arange(deg, -1, -1)


def polyfit_design_slope(x, deg):
    """``∂V[i, j] / ∂x_i``."""
    powers = np.arange(deg, -1, -1)
    return powers * np.asarray(x)[:, None] ** np.maximum(powers - 1, 0)


def polyfit_grad(g, x, y, deg, p, which):
    """The adjoint of ``y`` (which=1) or ``x`` (which=0) in ``p = polyfit(x, y, deg)`` (V of
    full column rank): ``p = V⁺ y``; in x, from the normal equations,
    ``VᵀV dp = dVᵀ r - Vᵀ dV p`` with the residual ``r = y - V p``."""
    v = polyfit_design(x, deg)
    pv = np.linalg.pinv(v)
    gm = np.reshape(g, (deg + 1, -1))
    if which == 1:
        return np.reshape(mT(pv) @ gm, np.shape(y))
    pm = np.reshape(p, (deg + 1, -1))
    z = pv @ (mT(pv) @ gm)  # (VᵀV)⁻¹ g
    residual = np.reshape(y, (np.shape(x)[0], -1)) - v @ pm
    gv = residual @ mT(z) - (v @ z) @ mT(pm)
    return np.sum(gv * polyfit_design_slope(x, deg), axis=1)


def polyfit_tangent(tv, x, y, deg, p, which):
    v = polyfit_design(x, deg)
    pv = np.linalg.pinv(v)
    if which == 1:
        return pv @ tv
    pm = np.reshape(p, (deg + 1, -1))
    dv = polyfit_design_slope(x, deg) * np.asarray(tv)[:, None]
    residual = np.reshape(y, (np.shape(x)[0], -1)) - v @ pm
    return np.reshape(pv @ (mT(pv) @ (mT(dv) @ residual - mT(v) @ (dv @ pm))), np.shape(p))


@register_vjp(np.polyfit)
def polyfit(p, x, y, deg, rcond=None, full=False, w=None, cov=False):
    polyfit_options(w, full, cov)
    d[y] += polyfit_grad(d[p], x, y, deg, p, 1)
    d[x] += polyfit_grad(d[p], x, y, deg, p, 0)


@register_jvp(np.polyfit)
def polyfit_jvp(p, x, y, deg, rcond=None, full=False, w=None, cov=False):
    polyfit_options(w, full, cov)
    t[p] += polyfit_tangent(t[y], x, y, deg, p, 1)
    t[p] += polyfit_tangent(t[x], x, y, deg, p, 0)


register_nondifferentiable(polyfit_options, reason="it checks options")


# ---- np.vander --------------------------------------------------------------------------------

@register_vjp(np.vander)
def vander(y, x, N=None, increasing=False):
    d[x] += np.sum(d[y] * vander_slope(x, N, increasing), axis=1)


@register_jvp(np.vander)
def vander_jvp(y, x, N=None, increasing=False):
    t[y] += np.expand_dims(t[x], 1) * vander_slope(x, N, increasing)


def vander_slope(x, N, increasing):
    """∂y/∂x of ``np.vander(x, N, increasing)``, column by column: p·x^(p-1) in the column of
    the power p (0 for p = 0, also at x = 0)."""
    x = np.asarray(x)
    powers = np.arange(len(x) if N is None else N).astype(float_dtype(x))
    if not increasing:
        powers = powers[::-1]
    return powers * np.expand_dims(x, 1) ** np.maximum(powers - 1, 0)


# ---- np.trapezoid -----------------------------------------------------------------------------

def along_axis(v, axis, ndim):
    """A 1-D ``v`` shaped to broadcast along ``axis`` of an ``ndim``-dimensional array."""
    return np.reshape(v, [-1 if i == axis % ndim else 1 for i in range(ndim)])


def pad_ends(v, axis, before):
    """``v`` with a zero slice before (or after) it along ``axis``."""
    zero = np.zeros_like(np.take(v, [0], axis=axis))
    return np.concatenate([zero, v] if before else [v, zero], axis=axis)


def trapezoid_spacings(y, x, dx, axis):
    """The spacings ``h`` of the samples ``y`` along ``axis`` (``dx``, or the differences of
    ``x``), shaped to broadcast against ``y``."""
    if x is None:
        h = dx * np.ones(np.shape(y)[axis] - 1)
    else:
        h = np.diff(x, axis=axis if np.ndim(x) > 1 else -1)
    return along_axis(h, axis, np.ndim(y)) if np.ndim(h) == 1 else h


def segment_means(y, axis):
    """The means of neighbouring samples along ``axis``: a segment's area over its width."""
    y = np.asarray(y)
    n = y.shape[axis]
    return (np.take(y, np.arange(0, n - 1), axis=axis) + np.take(y, np.arange(1, n), axis=axis)) / 2


def trapezoid_weights(y, x, dx, axis):
    """``∂/∂y_i = (h_{i-1} + h_i) / 2`` with the spacings ``h`` (0 beyond the ends)."""
    h = trapezoid_spacings(y, x, dx, axis)
    return (pad_ends(h, axis, True) + pad_ends(h, axis, False)) / 2


def trapezoid_x_partials(y, axis):
    """``∂/∂x_i = (m_{i-1} - m_i)`` with the segment means ``m`` (0 beyond the ends)."""
    means = segment_means(y, axis)
    return pad_ends(means, axis, True) - pad_ends(means, axis, False)


def trapezoid_x_grad(g, y, x, axis):
    axis = axis % np.ndim(y)
    full = np.expand_dims(np.asarray(g), axis) * trapezoid_x_partials(y, axis)
    if np.ndim(x) == 1:
        return np.sum(full, axis=tuple(a for a in range(np.ndim(y)) if a != axis))
    return unbroadcast(full, x)


def trapezoid_x_tangent(tx, y, x, axis):
    axis = axis % np.ndim(y)
    partials = trapezoid_x_partials(y, axis)
    tx = along_axis(tx, axis, np.ndim(y)) if np.ndim(x) == 1 else tx
    return np.sum(partials * tx, axis=axis)


def trapezoid_y_grad(g, y, x, dx, axis):
    axis = axis % np.ndim(y)
    return unbroadcast(np.expand_dims(np.asarray(g), axis) * trapezoid_weights(y, x, dx, axis), y)


@register_vjp(np.trapezoid, *([np.trapz] if hasattr(np, "trapz") else []))
def trapezoid(r, y, x=None, dx=1.0, axis=-1):
    d[y] += trapezoid_y_grad(d[r], y, x, dx, axis)
    d[x] += trapezoid_x_grad(d[r], y, x, axis)
    d[dx] += np.sum(d[r] * np.trapezoid(y, axis=axis)) * (x is None)


@register_jvp(np.trapezoid, *([np.trapz] if hasattr(np, "trapz") else []))
def trapezoid_jvp(r, y, x=None, dx=1.0, axis=-1):
    t[r] += np.trapezoid(t[y], x=x, dx=dx, axis=axis)
    t[r] += trapezoid_x_tangent(t[x], y, x, axis)
    t[r] += t[dx] * np.trapezoid(y, axis=axis) * (x is None)
