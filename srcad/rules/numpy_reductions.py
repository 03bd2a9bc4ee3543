"""Reductions and scans: reverse and forward rules.

The vjp rules of sum, mean, max/min, prod (``numpy_core.py``) and trace (``methods.py``)
exist already; their jvp rules are here.

Most reductions here are written with a *slope*: an array shaped like the input holding
∂y/∂a for the output element each input entry reduces into. Then the reverse rule is
``sum_to_reduced(d[y], a, axis, keepdims) * slope`` and the forward rule is
``np.sum(t[a] * slope, axis=axis, keepdims=keepdims)``.
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_nondifferentiable, register_vjp
from .linalg_conditioning import kinked
from ..runtime import as_array, expand_reduced, extremum_grad, prod_grad, resting_zero, sum_to_reduced
from .mixed_derivatives import cumprod_grad_mixed, cumprod_mixed


def float_dtype(a):
    """The dtype derivatives with respect to ``a`` have: its own if inexact, else float64."""
    dtype = as_array(a).dtype
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def reduced_axes(a, axis):
    """``axis`` of a reduction over ``a`` as a tuple of non-negative axes (None: all)."""
    ndim = np.ndim(a)
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(ax) % ndim for ax in axes)


def reduced_count(a, axis):
    """How many entries of ``a`` each output of a reduction over ``axis`` combines."""
    shape = np.shape(a)
    return int(np.prod([shape[ax] for ax in reduced_axes(a, axis)]))


def tie_shares(mask, axis):
    """``mask`` divided by its count over ``axis``: tied entries share equally."""
    return mask / np.sum(mask, axis=axis, keepdims=True)


# ---- jvp rules of existing vjp rules ---------------------------------------------------
# ``initial=`` and ``where=`` (a mask of the entries reduced) take the general forms, which read
# the mask; without them the rules keep their plain forms.
@register_jvp(np.sum, zero="where")
def sum_(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    if where is True:
        t[y] += np.sum(t[a], axis=axis, keepdims=keepdims)
    else:
        t[y] += np.sum(t[a], axis=axis, keepdims=keepdims, where=where)
    t[y] += t[initial]


@register_jvp(np.mean, zero="where")
def mean(y, a, axis=None, dtype=None, out=None, keepdims=False, where=True):
    if where is True:
        t[y] += np.mean(t[a], axis=axis, keepdims=keepdims)
    else:
        t[y] += np.mean(t[a], axis=axis, keepdims=keepdims, where=where)


@register_jvp(np.max, np.amax, np.min, np.amin, np.nanmax, np.nanmin, zero="where")
def extremum(y, a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """Ties share the tangent equally (the mean of the tied entries' tangents)."""
    if initial is not None or where is not True:
        t[y] += np.sum(t[a] * extremum_shares(a, y, axis, keepdims, initial, where), axis=axis, keepdims=keepdims)
        t[y] += t[initial] * initial_share(a, y, axis, keepdims, initial, where)
    else:
        t[y] += np.sum(t[a] * extremum_grad(np.ones_like(y), a, y, axis, keepdims), axis=axis, keepdims=keepdims)


@register_jvp(np.prod, zero="where")
def prod(y, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    if initial is not None or where is not True:
        t[y] += np.sum(t[a] * masked_prod_grad(np.ones_like(y), a, axis, keepdims, initial, where), axis=axis,
                       keepdims=keepdims)
        t[y] += t[initial] * np.prod(a, axis=axis, keepdims=keepdims, where=where)
    else:
        t[y] += np.sum(t[a] * prod_grad(np.ones_like(y), a, axis, keepdims), axis=axis, keepdims=keepdims)


def mask_shares(a, where, axis):
    """∂mean/∂a under ``where=``: 1/count for the entries in the mask, 0 for the others."""
    return tie_shares(np.broadcast_to(where, np.shape(a)), axis).astype(float_dtype(a))


def extremum_ties(a, y, axis, keepdims, initial, where):
    """``(entries, initial)``: which entries in the mask, and whether ``initial``, equal the
    extremum ``y``, each over their count: the shares of a tie (the second shaped like ``y``)."""
    entries = (as_array(a) == expand_reduced(y, a, axis, keepdims)) & where
    won = False if initial is None else np.asarray(y) == initial
    count = np.sum(entries, axis=axis, keepdims=keepdims) + won
    return entries / expand_reduced(count, a, axis, keepdims), won / count


def extremum_shares(a, y, axis, keepdims, initial, where):
    """∂max/∂a under ``initial=``/``where=``: tied entries in the mask share equally with a tied
    ``initial``; entries outside the mask, or below an ``initial`` that wins, get 0."""
    return extremum_ties(a, y, axis, keepdims, initial, where)[0].astype(float_dtype(a))


def initial_share(a, y, axis, keepdims, initial, where):
    """∂max/∂initial: 1 where it wins, its share of a tie, 0 where an entry wins."""
    return extremum_ties(a, y, axis, keepdims, initial, where)[1].astype(float_dtype(a))


register_nondifferentiable(mask_shares, extremum_shares, initial_share,
                           reason="it is piecewise constant: which entries are in the mask, or tied with the extremum")


def masked_prod_grad(g, a, axis, keepdims, initial, where):
    """The adjoint of ``np.prod(a, axis, initial=initial, where=where)`` in ``a``: ``initial``
    times the product of the other entries in the mask (no division), 0 outside the mask."""
    scale = 1 if initial is None else initial
    return np.where(where, prod_grad(g * scale, np.where(where, a, 1), axis, keepdims), 0)


@register_jvp(np.trace)
def trace(y, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    t[y] += np.trace(t[a], offset, axis1, axis2)


# ---- variance and standard deviation ---------------------------------------------------
@register_vjp(np.var)
def var(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, correction=None):
    d[a] += sum_to_reduced(d[y], a, axis, keepdims) * variance_slope(a, axis, ddof, correction)


@register_jvp(np.var)
def var_jvp(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, correction=None):
    t[y] += np.sum(t[a] * variance_slope(a, axis, ddof, correction), axis=axis, keepdims=keepdims)


@register_vjp(np.std)
def std(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, correction=None):
    d[a] += sum_to_reduced(d[y] / y, a, axis, keepdims) * variance_slope(a, axis, ddof, correction) / 2


@register_jvp(np.std)
def std_jvp(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, correction=None):
    """A group at rest (every tangent 0) moves nothing, also at zero spread, where the slope is 0/0."""
    t[y] += np.sum(t[a] * variance_slope(a, axis, ddof, correction), axis=axis, keepdims=keepdims) * resting_zero(
        np.sum(np.abs(t[a]), axis=axis, keepdims=keepdims), 1 / (2 * y))


def variance_slope(a, axis, ddof, correction):
    """∂var/∂a = 2 (a - mean) / (N - ddof); ``correction`` is the array-API name of ddof."""
    a = as_array(a)
    dof = reduced_count(a, axis) - (ddof if correction is None else correction)
    return 2 * (a - np.mean(a, axis=axis, keepdims=True)) / dof


@register_vjp(np.nanvar)
def nanvar(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, correction=None):
    """The variance of the non-NaN entries; NaN entries get a zero derivative."""
    d[a] += sum_to_reduced(d[y], a, axis, keepdims) * nan_variance_slope(a, axis, ddof, correction)


@register_jvp(np.nanvar)
def nanvar_jvp(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, correction=None):
    t[y] += np.sum(np.where(np.isnan(a), 0, t[a]) * nan_variance_slope(a, axis, ddof, correction), axis=axis,
                   keepdims=keepdims)


@register_vjp(np.nanstd)
def nanstd(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, correction=None):
    d[a] += sum_to_reduced(d[y] / y, a, axis, keepdims) * nan_variance_slope(a, axis, ddof, correction) / 2


@register_jvp(np.nanstd)
def nanstd_jvp(y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, correction=None):
    """A group at rest (every tangent 0) moves nothing, also at zero spread, where the slope is 0/0."""
    t[y] += np.sum(np.where(np.isnan(a), 0, t[a]) * nan_variance_slope(a, axis, ddof, correction), axis=axis,
                   keepdims=keepdims) * resting_zero(np.sum(np.abs(t[a]), axis=axis, keepdims=keepdims), 1 / (2 * y))


def nan_variance_slope(a, axis, ddof, correction):
    """∂nanvar/∂a = 2 (a - nanmean) / (N - ddof), N counting the non-NaN entries; 0 at a NaN."""
    a = as_array(a)
    valid = ~np.isnan(a)
    dof = np.sum(valid, axis=axis, keepdims=True) - (ddof if correction is None else correction)
    return np.where(valid, 2 * (a - np.nanmean(a, axis=axis, keepdims=True)) / dof, 0.0)


# ---- peak to peak, median, NaN-ignoring sums -------------------------------------------
@register_vjp(np.ptp)
def ptp(y, a, axis=None, out=None, keepdims=False):
    """Ties at the maximum (minimum) share its part equally; a constant gives zero."""
    d[a] += sum_to_reduced(d[y], a, axis, keepdims) * ptp_slope(a, axis)


@register_jvp(np.ptp)
def ptp_jvp(y, a, axis=None, out=None, keepdims=False):
    t[y] += np.sum(t[a] * ptp_slope(a, axis), axis=axis, keepdims=keepdims)


def ptp_slope(a, axis):
    a = as_array(a)
    top = tie_shares(a == np.max(a, axis=axis, keepdims=True), axis)
    bottom = tie_shares(a == np.min(a, axis=axis, keepdims=True), axis)
    return (top - bottom).astype(float_dtype(a))


@register_vjp(np.median)
def median(y, a, axis=None, out=None, keepdims=False):
    """The middle entry (or the two middle ones, half each) gets the cotangent; entries
    tied with a middle value share its part equally. (No ``overwrite_input``: it would
    reorder ``a``, which this rule reads.)"""
    d[a] += sum_to_reduced(d[y], a, axis, keepdims) * median_slope(a, axis)


@register_jvp(np.median)
def median_jvp(y, a, axis=None, out=None, keepdims=False):
    t[y] += np.sum(t[a] * median_slope(a, axis), axis=axis, keepdims=keepdims)


def order_rows(a, axis):
    """``(rows, back)``: the entries of ``a`` each output of a reduction over ``axis`` combines,
    one row each (the last axis), and ``back(r)``, which puts an array shaped like ``rows``
    where those entries are in ``a``."""
    a = np.asarray(a)
    axes = reduced_axes(a, axis)
    last = tuple(range(-len(axes), 0))
    moved = np.moveaxis(a, axes, last)
    return moved.reshape(moved.shape[: moved.ndim - len(axes)] + (-1,)), \
        lambda r: np.moveaxis(np.reshape(r, moved.shape), last, axes)


def median_slope(a, axis):
    rows, back = order_rows(a, axis)
    n = rows.shape[-1]
    ordered = np.sort(rows, axis=-1)
    middles = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    slope = np.zeros(rows.shape, float_dtype(a))
    for m in middles:
        slope += tie_shares(rows == ordered[..., m:m + 1], -1) / len(middles)
    slope[np.isnan(ordered[..., -1])] = np.nan  # the median is NaN there: so is its slope
    return back(slope)


register_nondifferentiable(median_slope, reason="it is piecewise constant: which entries are the middle ones")


@register_vjp(np.nansum)
def nansum(y, a, axis=None, dtype=None, out=None, keepdims=False):
    """NaN entries count as zero, so they get a zero derivative."""
    d[a] += np.where(np.isnan(a), 0, sum_to_reduced(d[y], a, axis, keepdims))


@register_jvp(np.nansum)
def nansum_jvp(y, a, axis=None, dtype=None, out=None, keepdims=False):
    t[y] += np.sum(np.where(np.isnan(a), 0, t[a]), axis=axis, keepdims=keepdims)


@register_vjp(np.nanmean)
def nanmean(y, a, axis=None, dtype=None, out=None, keepdims=False):
    """The mean of the non-NaN entries; NaN entries get a zero derivative."""
    d[a] += sum_to_reduced(d[y], a, axis, keepdims) * tie_shares(~np.isnan(a), axis)


@register_jvp(np.nanmean)
def nanmean_jvp(y, a, axis=None, dtype=None, out=None, keepdims=False):
    t[y] += np.sum(np.where(np.isnan(a), 0, t[a]) * tie_shares(~np.isnan(a), axis), axis=axis, keepdims=keepdims)


# ---- weighted average ------------------------------------------------------------------
@register_vjp(np.average)
def average(y, a, axis=None, weights=None, keepdims=False):
    d[a] += sum_to_reduced(d[y], a, axis, keepdims) * average_slope(a, axis, weights)
    d[weights] += weights_back(sum_to_reduced(d[y], a, axis, keepdims) * weights_slope(a, y, axis, weights, keepdims),
                               a, axis, weights)


@register_jvp(np.average)
def average_jvp(y, a, axis=None, weights=None, keepdims=False):
    t[y] += np.sum(t[a] * average_slope(a, axis, weights), axis=axis, keepdims=keepdims)
    t[y] += np.sum(weights_full(t[weights], a, axis) * weights_slope(a, y, axis, weights, keepdims), axis=axis,
                   keepdims=keepdims)


def weights_full(weights, a, axis):
    """``average``'s weights broadcast against ``a``: as NumPy does, weights shaped like
    ``a`` along ``axis`` (in the order given) are laid out along those axes."""
    weights = np.asarray(weights)
    if weights.shape == np.shape(a):
        return weights
    axes = reduced_axes(a, axis)
    shape = tuple(n if ax in axes else 1 for ax, n in enumerate(np.shape(a)))
    return np.transpose(weights, np.argsort(axes)).reshape(shape)


def weights_back(g, a, axis, weights):
    """The adjoint of ``weights`` from one shaped like ``a`` (undoes ``weights_full``)."""
    if np.shape(weights) == np.shape(a):
        return g
    axes = reduced_axes(a, axis)
    kept = tuple(ax for ax in range(np.ndim(a)) if ax not in axes)
    summed = np.sum(g, axis=kept).reshape(tuple(np.shape(a)[ax] for ax in sorted(axes)))
    return np.transpose(summed, np.argsort(np.argsort(axes)))


def average_slope(a, axis, weights):
    """∂average/∂a: w / Σw, or 1/N without weights."""
    if weights is None:
        return 1.0 / reduced_count(a, axis)
    w = weights_full(weights, a, axis)
    return w / np.sum(np.broadcast_to(w, np.shape(a)), axis=axis, keepdims=True)


def weights_slope(a, y, axis, weights, keepdims):
    """∂average/∂w = (a - average) / Σw, shaped like ``a``."""
    w = np.broadcast_to(weights_full(weights, a, axis), np.shape(a))
    return (a - expand_reduced(y, a, axis, keepdims)) / np.sum(w, axis=axis, keepdims=True)


# ---- cumulative sum and product ----------------------------------------------------------
@register_vjp(np.cumsum)
def cumsum(y, a, axis=None, dtype=None, out=None):
    d[a] += cumsum_grad(d[y], a, axis)


@register_jvp(np.cumsum)
def cumsum_jvp(y, a, axis=None, dtype=None, out=None):
    t[y] += np.cumsum(t[a], axis=axis)


def cumsum_grad(g, a, axis):
    """Sums from the end: entry i of ``a`` feeds every output from i on."""
    if axis is None:
        return np.cumsum(np.asarray(g)[::-1])[::-1].reshape(np.shape(a))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


@register_vjp(np.cumprod)
def cumprod(y, a, axis=None, dtype=None, out=None):
    """Exact where ``a`` has zeros: no division by the entries."""
    d[a] += cumprod_grad(d[y], a, axis)


@register_jvp(np.cumprod)
def cumprod_jvp(y, a, axis=None, dtype=None, out=None):
    t[y] += cumprod_tangent(t[a], a, axis)


def cumprod_grad(g, a, axis):
    """With y_i = Π_{k≤i} a_k: ∂L/∂a_j = (Π_{k<j} a_k)·S_j where S_j = Σ_{i≥j} g_i Π_{j<k≤i} a_k
    (no division by the entries)."""
    return cumprod_grad_mixed(g, a, (), axis)


def cumprod_tangent(ta, a, axis):
    return cumprod_mixed(a, (ta,), axis)


def cumprod_grad_along(g, a, ta, axis):
    """The derivative of ``cumprod_grad(g, a, axis)`` in ``a`` along ``ta``."""
    return cumprod_grad_mixed(g, a, (ta,), axis)


# Second order: cumprod_grad(g, a) is the gradient of <g, cumprod(a)>, so its derivative in a
# along a direction is a Hessian product, symmetric: the same helper gives its jvp and vjp.
@register_vjp(cumprod_grad)
def cumprod_grad_vjp(r, g, a, axis):
    d[g] += cumprod_tangent(d[r], a, axis)
    d[a] += cumprod_grad_along(g, a, d[r], axis)


@register_jvp(cumprod_grad)
def cumprod_grad_jvp(r, g, a, axis):
    t[r] += cumprod_grad(t[g], a, axis)
    t[r] += cumprod_grad_along(g, a, t[a], axis)


# Third order: the tangent and the Hessian product are multilinear in their directions and
# cotangents; the derivative in ``a`` adds one more direction to the mixed derivative
@register_vjp(cumprod_tangent)
def cumprod_tangent_vjp(r, ta, a, axis):
    d[ta] += cumprod_grad(d[r], a, axis)
    d[a] += cumprod_grad_along(d[r], a, ta, axis)


@register_jvp(cumprod_tangent)
def cumprod_tangent_jvp(r, ta, a, axis):
    t[r] += cumprod_tangent(t[ta], a, axis)
    t[r] += cumprod_mixed(a, (ta, t[a]), axis)


@register_vjp(cumprod_grad_along)
def cumprod_grad_along_vjp(r, g, a, ta, axis):
    d[g] += cumprod_mixed(a, (ta, d[r]), axis)
    d[ta] += cumprod_grad_along(g, a, d[r], axis)
    d[a] += cumprod_grad_mixed(g, a, (ta, d[r]), axis)


@register_jvp(cumprod_grad_along)
def cumprod_grad_along_jvp(r, g, a, ta, axis):
    t[r] += cumprod_grad_along(t[g], a, ta, axis)
    t[r] += cumprod_grad_along(g, a, t[ta], axis)
    t[r] += cumprod_grad_mixed(g, a, (ta, t[a]), axis)


# ---- norms -------------------------------------------------------------------------------
@register_vjp(np.linalg.norm)
def norm(y, x, ord=None, axis=None, keepdims=False):
    """Ties (at the largest entry, column or row sum for the inf/1 norms) share equally."""
    d[x] += sum_to_reduced(d[y], x, norm_axes(x, ord, axis), keepdims) * norm_slope(x, y, ord, axis, keepdims)


@register_jvp(np.linalg.norm)
def norm_jvp(y, x, ord=None, axis=None, keepdims=False):
    t[y] += np.sum(t[x] * resting_zero(t[x], norm_slope(x, y, ord, axis, keepdims)), axis=norm_axes(x, ord, axis),
                   keepdims=keepdims)  # at x = 0 a resting x moves nothing (0 · 0/0)


def norm_axes(x, ord, axis):
    """The axes ``np.linalg.norm`` reduces over."""
    if axis is None:
        return tuple(range(np.ndim(x)))
    return reduced_axes(x, axis)


def norm_slope(x, y, ord, axis, keepdims):
    """∂norm/∂x, shaped like ``x``, for vector norms (one axis, or a flattened array) and
    matrix norms (two axes, or a 2-D array with ``ord`` given)."""
    x = as_array(x)
    axes = norm_axes(x, ord, axis)
    if (axis is None and ord is None) or len(axes) == 1:
        return vector_norm_slope(x, expand_reduced(y, x, axes, keepdims), ord, axes)
    if len(axes) != 2:
        raise ValueError("np.linalg.norm: improper number of dimensions to norm")
    last = (-2, -1)
    moved = np.moveaxis(x, axes, last)
    if ord in (None, "fro"):
        slope = moved / np.linalg.norm(moved, axis=last, keepdims=True)
    elif ord in ("nuc", 2, -2):
        u, s, vh = np.linalg.svd(moved, full_matrices=False)
        picked = np.arange(s.shape[-1]) == (0 if ord == 2 else s.shape[-1] - 1)
        problem = kinked(s, max(moved.shape[-2:]), np.ones_like(picked) if ord == "nuc" else picked,
                         f"np.linalg.norm(ord={ord!r})")
        if problem is not None:
            raise UnsupportedCaseError(problem)
        if ord == "nuc":
            slope = u @ vh
        else:
            k = slice(0, 1) if ord == 2 else slice(-1, None)
            slope = u[..., :, k] @ vh[..., k, :]
    elif ord in (1, -1, np.inf, -np.inf):
        sum_axis, pick_axis = (-2, -1) if ord in (1, -1) else (-1, -2)
        sums = np.sum(np.abs(moved), axis=sum_axis, keepdims=True)
        picked = np.max(sums, axis=pick_axis, keepdims=True) if ord > 0 else np.min(sums, axis=pick_axis,
                                                                                   keepdims=True)
        slope = np.sign(moved) * tie_shares(sums == picked, pick_axis)
    else:
        raise ValueError(f"np.linalg.norm: invalid norm order {ord!r} for matrices")
    return np.moveaxis(slope, last, axes).astype(float_dtype(x))


def vector_norm_slope(x, y, ord, axes):
    """∂‖x‖_p/∂x = sign(x)·|x|^(p-1) / ‖x‖^(p-1); the inf norms pick the extreme |x|."""
    if ord is None or ord == 2:
        return x / y
    if ord == 1:
        return np.sign(x)
    if ord == 0:
        return np.zeros(x.shape, float_dtype(x))  # a count of nonzeros: piecewise constant
    if ord in (np.inf, -np.inf):
        return np.sign(x) * tie_shares(np.abs(x) == y, axes)
    if isinstance(ord, str):
        raise ValueError(f"np.linalg.norm: invalid norm order {ord!r} for vectors")
    return np.sign(x) * (np.abs(x) / y) ** (ord - 1)
