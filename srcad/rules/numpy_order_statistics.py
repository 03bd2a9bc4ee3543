"""Quantiles and percentiles: ``np.quantile(a, q, axis, method=..., keepdims=...)`` and
``np.percentile`` (q in percent), and ``np.nanquantile``, ``np.nanpercentile`` and
``np.nanmedian``, which skip NaNs.

For every method NumPy has, a quantile of ``n`` sorted values is a fixed combination of
them: which order statistics it reads and their weights depend on ``n`` and ``q`` only. So
the weights are read off NumPy's own function, applied to ``n`` sorted probe rows (row ``k``
is 0 before position ``k`` and 1 from it on: its quantile is the total weight of the
positions from ``k`` on), and every method is covered by construction. An entry of ``a``
gets the weight of its place in the sorted order; entries tied with one another share their
weights equally (the convention of ``max``, ``min`` and ``median``); a row holding NaN, whose
quantile is NaN, gets NaN. The NaN-skipping forms read the weights of a row's count of numbers
(its NaNs, sorted last, get none): ``nanmedian`` is ``nanquantile`` at 0.5 by ``linear``, as
``median`` is ``quantile``'s; a row of NaNs only, whose quantile is NaN, gets NaN. ``out``,
``overwrite_input`` (which reorders ``a``, which the rule reads) and ``weights`` are refused,
and so is a derivative in ``q``.
"""
import numpy as np

from ..registry import register_jvp, register_vjp
from .numpy_reductions import float_dtype, order_rows


def quantile_weights(a, q, axis, method, scale, skip_nan):
    """``(weights, back)``: the weight of each entry of ``a`` in each quantile
    ``np.quantile(a, q / scale, axis, method=method)`` (``np.nanquantile`` if ``skip_nan``),
    shaped ``np.shape(q)`` + rows (see ``order_rows``, whose ``back`` it returns)."""
    rows, back = order_rows(a, axis)
    n = rows.shape[-1]
    levels = np.asarray(q, dtype=np.float64) / scale
    counts = np.sum(~np.isnan(rows), axis=-1) if skip_nan else np.full(rows.shape[:-1], n)
    at_k = np.zeros(levels.shape + rows.shape)  # the weight of each place in a sorted row
    for count in np.unique(counts):
        if count:
            at_k[..., counts == count, :count] = place_weights(levels, count, method)[..., None, :]
    order = np.argsort(rows, axis=-1, kind="stable")
    ordered = np.take_along_axis(rows, order, axis=-1)
    # a run of tied values shares its positions' weights: each gets the run's mean weight
    positions = np.broadcast_to(np.arange(n), ordered.shape)
    starts = np.concatenate([np.ones(ordered.shape[:-1] + (1,), bool), ordered[..., 1:] != ordered[..., :-1]], -1)
    ends = np.concatenate([starts[..., 1:], np.ones(ordered.shape[:-1] + (1,), bool)], -1)
    first = np.maximum.accumulate(np.where(starts, positions, 0), axis=-1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, positions, n - 1), -1), axis=-1), -1)
    total = np.cumsum(at_k, axis=-1)
    below = np.concatenate([np.zeros(total.shape[:-1] + (1,)), total[..., :-1]], -1)
    shape = levels.shape + ordered.shape
    run_weight = (np.take_along_axis(total, np.broadcast_to(last, shape), -1)
                  - np.take_along_axis(below, np.broadcast_to(first, shape), -1))
    shared = run_weight / (last - first + 1)
    weights = np.empty(shape, float_dtype(a))
    np.put_along_axis(weights, np.broadcast_to(order, shape), shared, axis=-1)
    undefined = counts == 0 if skip_nan else np.isnan(ordered[..., -1])
    weights[..., undefined, :] = np.nan  # the quantile is NaN there: so is its slope
    return weights, back


def place_weights(levels, n, method):
    """The weight of each place of ``n`` sorted values in their quantiles at ``levels``
    (levels.shape + (n,)), read off NumPy's function: row k of the probes is 0 before place k
    and 1 from it on, so its quantile is the total weight of the places from k on."""
    probes = (np.arange(n) >= np.arange(n)[:, None]).astype(np.float64)
    from_k = np.quantile(probes, levels, axis=-1, method=method)
    return from_k - np.concatenate([from_k[..., 1:], np.zeros(levels.shape + (1,))], axis=-1)


def quantile_grad(g, a, q, axis, method, keepdims, scale, skip_nan):
    """The adjoint of ``a`` from the cotangent ``g`` of its quantiles (see the module doc)."""
    weights, back = quantile_weights(a, q, axis, method, scale, skip_nan)
    levels = np.ndim(q)
    g = np.reshape(g, weights.shape[:-1])  # keepdims' axes of size 1 dropped: the rows' order
    return back(np.sum(g[..., None] * weights, axis=tuple(range(levels))))


def quantile_tangent(tangent, a, q, axis, method, keepdims, scale, skip_nan):
    """The tangent of the quantiles of ``a`` from the ``tangent`` of ``a``."""
    weights, _ = quantile_weights(a, q, axis, method, scale, skip_nan)
    rows, _ = order_rows(tangent, axis)
    if skip_nan:  # a skipped entry's tangent, NaN or not, is not read
        rows = np.where(np.isnan(order_rows(a, axis)[0]), 0.0, rows)
    out = np.sum(weights * rows, axis=-1)
    if keepdims:
        kept = np.shape(np.quantile(np.zeros(np.shape(a)), 0.5, axis=axis, keepdims=True))
        out = np.reshape(out, np.shape(q) + kept)
    return out


@register_vjp(np.quantile)
def quantile(y, a, q, axis=None, method="linear", keepdims=False):
    d[a] += quantile_grad(d[y], a, q, axis, method, keepdims, 1.0, False)


@register_jvp(np.quantile)
def quantile_jvp(y, a, q, axis=None, method="linear", keepdims=False):
    t[y] += quantile_tangent(t[a], a, q, axis, method, keepdims, 1.0, False)


@register_vjp(np.percentile)
def percentile(y, a, q, axis=None, method="linear", keepdims=False):
    d[a] += quantile_grad(d[y], a, q, axis, method, keepdims, 100.0, False)


@register_jvp(np.percentile)
def percentile_jvp(y, a, q, axis=None, method="linear", keepdims=False):
    t[y] += quantile_tangent(t[a], a, q, axis, method, keepdims, 100.0, False)


@register_vjp(np.nanquantile)
def nanquantile(y, a, q, axis=None, method="linear", keepdims=False):
    d[a] += quantile_grad(d[y], a, q, axis, method, keepdims, 1.0, True)


@register_jvp(np.nanquantile)
def nanquantile_jvp(y, a, q, axis=None, method="linear", keepdims=False):
    t[y] += quantile_tangent(t[a], a, q, axis, method, keepdims, 1.0, True)


@register_vjp(np.nanpercentile)
def nanpercentile(y, a, q, axis=None, method="linear", keepdims=False):
    d[a] += quantile_grad(d[y], a, q, axis, method, keepdims, 100.0, True)


@register_jvp(np.nanpercentile)
def nanpercentile_jvp(y, a, q, axis=None, method="linear", keepdims=False):
    t[y] += quantile_tangent(t[a], a, q, axis, method, keepdims, 100.0, True)


@register_vjp(np.nanmedian)
def nanmedian(y, a, axis=None, out=None, keepdims=False):
    d[a] += quantile_grad(d[y], a, 0.5, axis, "linear", keepdims, 1.0, True)


@register_jvp(np.nanmedian)
def nanmedian_jvp(y, a, axis=None, out=None, keepdims=False):
    t[y] += quantile_tangent(t[a], a, 0.5, axis, "linear", keepdims, 1.0, True)


# the helpers are linear in their first argument and piecewise constant in ``a``
@register_vjp(quantile_grad, zero="a")
def quantile_grad_vjp(y, g, a, q, axis, method, keepdims, scale, skip_nan):
    d[g] += quantile_tangent(d[y], a, q, axis, method, keepdims, scale, skip_nan)


@register_jvp(quantile_grad, zero="a")
def quantile_grad_jvp(y, g, a, q, axis, method, keepdims, scale, skip_nan):
    t[y] += quantile_grad(t[g], a, q, axis, method, keepdims, scale, skip_nan)


@register_vjp(quantile_tangent, zero="a")
def quantile_tangent_vjp(y, tangent, a, q, axis, method, keepdims, scale, skip_nan):
    d[tangent] += quantile_grad(d[y], a, q, axis, method, keepdims, scale, skip_nan)


@register_jvp(quantile_tangent, zero="a")
def quantile_tangent_jvp(y, tangent, a, q, axis, method, keepdims, scale, skip_nan):
    t[y] += quantile_tangent(t[tangent], a, q, axis, method, keepdims, scale, skip_nan)
