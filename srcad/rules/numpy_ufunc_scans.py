"""The ``accumulate`` method of ufuncs (running sums, products, differences, quotients, extrema
and log-sums), reverse and forward rules.

``add.accumulate`` is ``np.cumsum``, ``multiply.accumulate`` ``np.cumprod`` (exact at zeros).
``subtract.accumulate`` is ``a_0 - a_1 - ... - a_i``: every entry after the first enters with a
minus sign. ``divide.accumulate`` is ``a_0 / (a_1 ··· a_i)``: linear in the first entry, whose
derivative never divides by it (exact where it is zero). ``logaddexp.accumulate`` is
``log Σ_{k≤i} exp(a_k)`` (``logaddexp2``: base 2): output i's cotangent goes to entry k ≤ i with
the weight ``exp(a_k - y_i)``, summed in log space with the positive and negative cotangents
apart, so no term overflows however far the entries spread. A running extremum
(``maximum.accumulate`` and ``minimum``, ``fmax``, ``fmin``) sends each output's cotangent to the
entries that are the extremum of the prefix there, ties sharing equally as for ``np.max`` of that
prefix (``running_extremum_grad``); its sums run within one run of equal outputs (``run_sums``),
so their rounding is that of the run's cotangents, never of the whole row's.
"""
import numpy as np

from ..registry import register_jvp, register_vjp
from ..runtime import as_array
from .numpy_reductions import cumprod_grad, cumprod_tangent, cumsum_grad, float_dtype
from .numpy_ufunc_methods import LN2, first_along, single_axis


# ---- running sums, products, differences and quotients -------------------------------------
@register_vjp(np.add.accumulate)
def add_accumulate(y, array, axis=0, dtype=None, out=None):
    d[array] += cumsum_grad(d[y], array, single_axis(array, axis))


@register_jvp(np.add.accumulate)
def add_accumulate_jvp(y, array, axis=0, dtype=None, out=None):
    t[y] += np.cumsum(t[array], axis=single_axis(array, axis))


@register_vjp(np.multiply.accumulate)
def multiply_accumulate(y, array, axis=0, dtype=None, out=None):
    """Exact where ``array`` has zeros (``np.cumprod``'s helpers: no division by the entries)."""
    d[array] += cumprod_grad(d[y], array, axis)


@register_jvp(np.multiply.accumulate)
def multiply_accumulate_jvp(y, array, axis=0, dtype=None, out=None):
    t[y] += cumprod_tangent(t[array], array, axis)


@register_vjp(np.subtract.accumulate)
def subtract_accumulate(y, array, axis=0, dtype=None, out=None):
    """Entry j feeds every output from j on, with a minus sign unless it is the first."""
    d[array] += cumsum_grad(d[y], array, single_axis(array, axis)) * np.where(first_along(array, axis), 1.0, -1.0)


@register_jvp(np.subtract.accumulate)
def subtract_accumulate_jvp(y, array, axis=0, dtype=None, out=None):
    t[y] += np.subtract.accumulate(t[array], axis=axis)  # linear


@register_vjp(np.divide.accumulate)
def divide_accumulate(y, array, axis=0, dtype=None, out=None):
    d[array] += quotient_scan_grad(d[y], array, y, axis)


@register_jvp(np.divide.accumulate)
def divide_accumulate_jvp(y, array, axis=0, dtype=None, out=None):
    t[y] += quotient_scan_tangent(t[array], array, y, axis)


def quotient_scan_grad(g, a, y, axis):
    """The adjoint of ``a`` for ``y = np.divide.accumulate(a, axis)``, y_i = a_0 / P_i with
    P_i = a_1 ··· a_i: a_0 gets Σ_i g_i / P_i, a_j (j > 0) gets -Σ_{i≥j} g_i y_i / a_j. Smooth in
    ``a`` and ``y``: read as source at second order."""
    a = as_array(a)
    first = first_along(a, axis)
    axis = single_axis(a, axis)
    divisors = np.where(first, 1.0, a)
    head = np.sum(g / np.multiply.accumulate(divisors, axis=axis), axis=axis, keepdims=True)
    return np.where(first, head, -cumsum_grad(g * y, a, axis) / divisors)


def quotient_scan_tangent(ta, a, y, axis):
    """The tangent of ``y = np.divide.accumulate(a, axis)``: ta_0 / P_i - y_i Σ_{0<k≤i} ta_k / a_k."""
    a = as_array(a)
    first = first_along(a, axis)
    axis = single_axis(a, axis)
    divisors = np.where(first, 1.0, a)
    head = np.sum(np.where(first, ta, 0.0), axis=axis, keepdims=True)
    return head / np.multiply.accumulate(divisors, axis=axis) - y * np.cumsum(np.where(first, 0.0, ta / divisors),
                                                                               axis=axis)


# ---- running log-sums ----------------------------------------------------------------------
@register_vjp(np.logaddexp.accumulate)
def logaddexp_accumulate(y, array, axis=0, dtype=None, out=None):
    d[array] += log_scan_grad(d[y], array, y, axis, 1.0)


@register_jvp(np.logaddexp.accumulate)
def logaddexp_accumulate_jvp(y, array, axis=0, dtype=None, out=None):
    t[y] += log_scan_tangent(t[array], array, y, axis, 1.0)


@register_vjp(np.logaddexp2.accumulate)
def logaddexp2_accumulate(y, array, axis=0, dtype=None, out=None):
    d[array] += log_scan_grad(d[y], array, y, axis, LN2)


@register_jvp(np.logaddexp2.accumulate)
def logaddexp2_accumulate_jvp(y, array, axis=0, dtype=None, out=None):
    t[y] += log_scan_tangent(t[array], array, y, axis, LN2)


def log_cumsum(w, logs, axis, reverse):
    """log Σ w · exp(logs) over the entries with w > 0, cumulated along ``axis`` (from its end if
    ``reverse``); -inf where there is none."""
    terms = np.where(w > 0, np.log(np.where(w > 0, w, 1.0)) + logs, -np.inf)
    if reverse:
        return np.flip(np.logaddexp.accumulate(np.flip(terms, axis), axis=axis), axis)
    return np.logaddexp.accumulate(terms, axis=axis)


def log_scan_grad(g, a, y, axis, scale):
    """Σ_{i≥k} g_i exp(scale (a_k - y_i)): the adjoint of ``a`` for ``y`` its running log-sum
    (``scale`` 1: ``logaddexp``, ln 2: ``logaddexp2``)."""
    a = as_array(a)
    axis = single_axis(a, axis)
    return (np.exp(scale * a + log_cumsum(g, -scale * y, axis, True))
            - np.exp(scale * a + log_cumsum(-g, -scale * y, axis, True)))


def log_scan_tangent(ta, a, y, axis, scale):
    """Σ_{k≤i} ta_k exp(scale (a_k - y_i)): the tangent of the running log-sum ``y`` of ``a``."""
    a = as_array(a)
    axis = single_axis(a, axis)
    return (np.exp(log_cumsum(ta, scale * a, axis, False) - scale * y)
            - np.exp(log_cumsum(-ta, scale * a, axis, False) - scale * y))


# Higher orders: the helpers are linear in their first argument and each other's transpose;
# ∂/∂a_k multiplies term k by scale, ∂/∂y_i multiplies term i by -scale.
@register_vjp(log_scan_grad)
def log_scan_grad_vjp(r, g, a, y, axis, scale):
    d[g] += log_scan_tangent(d[r], a, y, axis, scale)
    d[a] += scale * d[r] * r
    d[y] -= scale * g * log_scan_tangent(d[r], a, y, axis, scale)


@register_jvp(log_scan_grad)
def log_scan_grad_jvp(r, g, a, y, axis, scale):
    t[r] += log_scan_grad(t[g], a, y, axis, scale)
    t[r] += scale * t[a] * r
    t[r] -= scale * log_scan_grad(g * t[y], a, y, axis, scale)


@register_vjp(log_scan_tangent)
def log_scan_tangent_vjp(r, ta, a, y, axis, scale):
    d[ta] += log_scan_grad(d[r], a, y, axis, scale)
    d[a] += scale * ta * log_scan_grad(d[r], a, y, axis, scale)
    d[y] -= scale * d[r] * r


@register_jvp(log_scan_tangent)
def log_scan_tangent_jvp(r, ta, a, y, axis, scale):
    t[r] += log_scan_tangent(t[ta], a, y, axis, scale)
    t[r] += scale * log_scan_tangent(ta * t[a], a, y, axis, scale)
    t[r] -= scale * t[y] * r


# ---- running extrema -----------------------------------------------------------------------
@register_vjp(np.maximum.accumulate, np.minimum.accumulate, np.fmax.accumulate, np.fmin.accumulate)
def running_extremum(y, array, axis=0, dtype=None, out=None):
    """Output i's cotangent goes to the entries up to i equal to it, shared equally."""
    d[array] += running_extremum_grad(d[y], array, y, axis)


@register_jvp(np.maximum.accumulate, np.minimum.accumulate, np.fmax.accumulate, np.fmin.accumulate)
def running_extremum_jvp(y, array, axis=0, dtype=None, out=None):
    t[y] += running_extremum_tangent(t[array], array, y, axis)


def running_ties(a, y, axis):
    """The ties of a running extremum ``y`` of ``a`` along ``axis``, that axis moved last.

    The outputs fall into runs of equal value; in a run, the entries equal to its value
    (``ties``: the one that set it, and any that equal it later) are the extremum of every
    prefix that ends in the run from their place on. Returns ``(ties, count, first, last,
    defined)``: per output the number of tied entries up to it (``count``), where its run
    starts and ends, and whether its value is a number (a NaN output has no tied entry)."""
    a = np.moveaxis(as_array(a), axis, -1)
    y = np.moveaxis(as_array(y), axis, -1)
    n = y.shape[-1]
    positions = np.broadcast_to(np.arange(n), y.shape)
    edge = np.ones(y.shape[:-1] + (1,), bool)
    starts = np.concatenate([edge, y[..., 1:] != y[..., :-1]], -1)  # NaN != NaN: each NaN a run of its own
    ends = np.concatenate([starts[..., 1:], edge], -1)
    first = np.maximum.accumulate(np.where(starts, positions, 0), axis=-1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, positions, n - 1), -1), axis=-1), -1)
    ties = a == y
    tied = np.cumsum(ties, axis=-1)
    count = tied - np.take_along_axis(tied - ties, first, -1)
    return ties, count, first, last, count > 0


def run_sums(values, first, last, reverse):
    """Per entry of ``values`` (along the last axis), the sum over its run (from ``first`` to
    ``last``, per entry) up to it, or from it on if ``reverse``. A segmented scan by doubling: a
    sum never takes in, then takes off, the entries of other runs, so its rounding is that of
    the run's own values."""
    n = values.shape[-1]
    longest = int(np.max(last - first)) + 1 if values.size else 0
    positions = np.arange(n)
    step = 1
    while step < longest:  # each entry holds the sum of up to `step` entries of its run from it on (before it)
        if reverse:
            inside = positions[:-step] + step <= last[..., :-step]
            values = np.concatenate([values[..., :-step] + np.where(inside, values[..., step:], 0),
                                     values[..., n - step:]], -1)
        else:
            inside = positions[step:] - step >= first[..., step:]
            values = np.concatenate([values[..., :step],
                                     values[..., step:] + np.where(inside, values[..., :-step], 0)], -1)
        step *= 2
    return values


def running_extremum_grad(g, a, y, axis):
    """The adjoint of ``a`` for ``y = np.maximum.accumulate(a, axis)`` (or minimum, fmax, fmin):
    a tied entry j gets Σ g_i / count_i over the outputs i from j to the end of its run. An entry
    at or before a NaN output gets NaN, as every entry of ``np.max`` of a NaN does."""
    axis = single_axis(a, axis)
    ties, count, first, last, defined = running_ties(a, y, axis)
    dtype = float_dtype(a)
    g = np.moveaxis(np.broadcast_to(g, np.shape(y)), axis, -1)
    share = np.where(defined, g / np.maximum(count, 1).astype(dtype), 0)
    grad = ties * run_sums(share, first, last, True)
    undefined = np.flip(np.logical_or.accumulate(np.flip(~defined, -1), axis=-1), -1)
    return np.moveaxis(np.where(undefined, np.nan, grad).astype(dtype, copy=False), -1, axis)


def running_extremum_tangent(ta, a, y, axis):
    """The tangent of the running extremum ``y`` of ``a``: per output, the mean of the tangents
    of its tied entries so far (NaN where the output is NaN)."""
    axis = single_axis(a, axis)
    ties, count, first, last, defined = running_ties(a, y, axis)
    dtype = float_dtype(a)
    moving = np.where(ties, np.moveaxis(np.broadcast_to(ta, np.shape(a)), axis, -1), 0)
    tangent = np.where(defined, run_sums(moving, first, last, False) / np.maximum(count, 1).astype(dtype), np.nan)
    return np.moveaxis(tangent.astype(dtype, copy=False), -1, axis)


# Second order: both helpers are linear in their first argument, each the other's transpose, and
# piecewise constant in ``a`` and ``y`` (which entries are tied)
@register_vjp(running_extremum_grad, zero=("a", "y"))
def running_extremum_grad_vjp(r, g, a, y, axis):
    d[g] += running_extremum_tangent(d[r], a, y, axis)


@register_jvp(running_extremum_grad, zero=("a", "y"))
def running_extremum_grad_jvp(r, g, a, y, axis):
    t[r] += running_extremum_grad(t[g], a, y, axis)


@register_vjp(running_extremum_tangent, zero=("a", "y"))
def running_extremum_tangent_vjp(r, ta, a, y, axis):
    d[ta] += running_extremum_grad(d[r], a, y, axis)


@register_jvp(running_extremum_tangent, zero=("a", "y"))
def running_extremum_tangent_jvp(r, ta, a, y, axis):
    t[r] += running_extremum_tangent(t[ta], a, y, axis)
