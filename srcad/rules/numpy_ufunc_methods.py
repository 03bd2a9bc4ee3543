"""Methods of ufuncs: ``np.add.reduce``, ``np.maximum.accumulate`` and the like, reverse and
forward rules.

A rule is keyed by the bound method itself: ``np.add.reduce`` is a new object at each
attribute access, but two of them are equal, and hash alike, exactly when they are the same
method of the same ufunc, so the lookup matches ``np.add.reduce`` and never
``np.multiply.reduce`` or a ufunc of the user's.

The templates are those of the NumPy function with the same math, with the method's own
signature (``axis=0`` by default, not ``None``): ``add.reduce`` is ``np.sum``'s,
``multiply.reduce`` ``np.prod``'s (exact at zeros), ``maximum``/``minimum.reduce`` ``np.max``'s
(ties share equally; ``fmax``/``fmin.reduce`` skip NaNs as ``np.nanmax`` does),
``add.accumulate`` ``np.cumsum``'s and ``multiply.accumulate`` ``np.cumprod``'s.
``logaddexp.reduce`` is log Σ exp: each entry's share is ``exp(a - y)`` (``logaddexp2``:
``2 ** (a - y)``). A running extremum (``maximum.accumulate`` and ``minimum``, ``fmax``,
``fmin``) sends each output's cotangent to the entries that are the extremum of the prefix
there, ties sharing equally as for ``np.max`` of that prefix (``running_extremum_grad``).
Other keywords (``casting``, ``order``, ``signature``...) are refused at the call, and so is
every other method (``reduceat``, ``at`` of another ufunc than ``np.add``) and ufunc: they have
no rule. ``np.X.outer(a, b)`` is lowered to ``np.X`` of broadcast operands
(``passes/ufunc_outer.py``), whose rules serve.
"""
import numpy as np

from ..registry import register_jvp, register_vjp
from ..runtime import as_array, expand_reduced, extremum_grad, prod_grad, sum_to_reduced, unbroadcast
from .numpy_reductions import (cumprod_grad, cumprod_tangent, cumsum_grad, extremum_shares, float_dtype,
                               initial_share, masked_prod_grad)


# ---- reductions --------------------------------------------------------------------------
@register_vjp(np.add.reduce, zero="where")  # piecewise constant in the mask
def add_reduce(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    if initial is not None or where is not True:
        d[array] += np.where(where, sum_to_reduced(d[y], array, axis, keepdims), 0)
        d[initial] += unbroadcast(d[y], initial)
    else:
        d[array] += sum_to_reduced(d[y], array, axis, keepdims)


@register_jvp(np.add.reduce, zero="where")
def add_reduce_jvp(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    if where is True:
        t[y] += np.sum(t[array], axis=axis, keepdims=keepdims)
    else:
        t[y] += np.sum(t[array], axis=axis, keepdims=keepdims, where=where)
    t[y] += t[initial]


@register_vjp(np.multiply.reduce, zero="where")
def multiply_reduce(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    if initial is not None or where is not True:
        d[array] += masked_prod_grad(d[y], array, axis, keepdims, initial, where)
        d[initial] += unbroadcast(d[y] * np.prod(array, axis=axis, keepdims=keepdims, where=where), initial)
    else:
        d[array] += prod_grad(d[y], array, axis, keepdims)


@register_jvp(np.multiply.reduce, zero="where")
def multiply_reduce_jvp(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    if initial is not None or where is not True:
        t[y] += np.sum(t[array] * masked_prod_grad(np.ones_like(y), array, axis, keepdims, initial, where), axis=axis,
                       keepdims=keepdims)
        t[y] += t[initial] * np.prod(array, axis=axis, keepdims=keepdims, where=where)
    else:
        t[y] += np.sum(t[array] * prod_grad(np.ones_like(y), array, axis, keepdims), axis=axis, keepdims=keepdims)


@register_vjp(np.maximum.reduce, np.minimum.reduce, np.fmax.reduce, np.fmin.reduce, zero="where")
def extremum_reduce(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Ties share the cotangent equally, ``initial`` is one more entry (as for ``np.max``)."""
    if initial is not None or where is not True:
        d[array] += sum_to_reduced(d[y], array, axis, keepdims) * extremum_shares(array, y, axis, keepdims, initial,
                                                                                  where)
        d[initial] += unbroadcast(d[y] * initial_share(array, y, axis, keepdims, initial, where), initial)
    else:
        d[array] += extremum_grad(d[y], array, y, axis, keepdims)


@register_jvp(np.maximum.reduce, np.minimum.reduce, np.fmax.reduce, np.fmin.reduce, zero="where")
def extremum_reduce_jvp(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    if initial is not None or where is not True:
        t[y] += np.sum(t[array] * extremum_shares(array, y, axis, keepdims, initial, where), axis=axis,
                       keepdims=keepdims)
        t[y] += t[initial] * initial_share(array, y, axis, keepdims, initial, where)
    else:
        t[y] += np.sum(t[array] * extremum_grad(np.ones_like(y), array, y, axis, keepdims), axis=axis,
                       keepdims=keepdims)


@register_vjp(np.logaddexp.reduce, zero="where")
def logaddexp_reduce(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """y = log(exp(initial) + Σ exp(a)): each entry's share is exp(a - y), a softmax."""
    d[array] += sum_to_reduced(d[y], array, axis, keepdims) * log_sum_shares(array, y, axis, keepdims, where, 1.0)
    d[initial] += unbroadcast(d[y] * np.exp(initial - y), initial)


@register_jvp(np.logaddexp.reduce, zero="where")
def logaddexp_reduce_jvp(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    t[y] += np.sum(t[array] * log_sum_shares(array, y, axis, keepdims, where, 1.0), axis=axis, keepdims=keepdims)
    t[y] += t[initial] * np.exp(initial - y)


@register_vjp(np.logaddexp2.reduce, zero="where")
def logaddexp2_reduce(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """y = log2(2**initial + Σ 2**a): each entry's share is 2**(a - y)."""
    d[array] += sum_to_reduced(d[y], array, axis, keepdims) * log_sum_shares(array, y, axis, keepdims, where, LN2)
    d[initial] += unbroadcast(d[y] * np.exp2(initial - y), initial)


@register_jvp(np.logaddexp2.reduce, zero="where")
def logaddexp2_reduce_jvp(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    t[y] += np.sum(t[array] * log_sum_shares(array, y, axis, keepdims, where, LN2), axis=axis, keepdims=keepdims)
    t[y] += t[initial] * np.exp2(initial - y)


LN2 = float(np.log(2.0))


def log_sum_shares(a, y, axis, keepdims, where, scale):
    """∂y/∂a for ``y = log Σ exp(scale · a) / scale`` over ``axis``: exp(scale · (a - y)) for the
    entries in the mask ``where``, 0 for the others. Smooth in ``a`` and ``y``: read as source at
    second order."""
    return np.where(where, np.exp(scale * (a - expand_reduced(y, a, axis, keepdims))), 0.0)


# ---- running sums, products and extrema --------------------------------------------------
@register_vjp(np.add.accumulate)
def add_accumulate(y, array, axis=0, dtype=None, out=None):
    d[array] += cumsum_grad(d[y], array, axis)


@register_jvp(np.add.accumulate)
def add_accumulate_jvp(y, array, axis=0, dtype=None, out=None):
    t[y] += np.cumsum(t[array], axis=axis)


@register_vjp(np.multiply.accumulate)
def multiply_accumulate(y, array, axis=0, dtype=None, out=None):
    """Exact where ``array`` has zeros (``np.cumprod``'s helpers: no division by the entries)."""
    d[array] += cumprod_grad(d[y], array, axis)


@register_jvp(np.multiply.accumulate)
def multiply_accumulate_jvp(y, array, axis=0, dtype=None, out=None):
    t[y] += cumprod_tangent(t[array], array, axis)


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


def running_extremum_grad(g, a, y, axis):
    """The adjoint of ``a`` for ``y = np.maximum.accumulate(a, axis)`` (or minimum, fmax, fmin):
    a tied entry j gets Σ g_i / count_i over the outputs i from j to the end of its run. An entry
    at or before a NaN output gets NaN, as every entry of ``np.max`` of a NaN does."""
    ties, count, first, last, defined = running_ties(a, y, axis)
    dtype = float_dtype(a)
    g = np.moveaxis(np.broadcast_to(g, np.shape(y)), axis, -1)
    share = np.where(defined, g / np.maximum(count, 1).astype(dtype), 0)
    from_here = np.flip(np.cumsum(np.flip(share, -1), axis=-1), -1)  # Σ over the outputs from i on
    past = np.concatenate([from_here[..., 1:], np.zeros(from_here.shape[:-1] + (1,), from_here.dtype)], -1)
    grad = ties * (from_here - np.take_along_axis(past, last, -1))
    undefined = np.flip(np.logical_or.accumulate(np.flip(~defined, -1), axis=-1), -1)
    return np.moveaxis(np.where(undefined, np.nan, grad).astype(dtype, copy=False), -1, axis)


def running_extremum_tangent(ta, a, y, axis):
    """The tangent of the running extremum ``y`` of ``a``: per output, the mean of the tangents
    of its tied entries so far (NaN where the output is NaN)."""
    ties, count, first, last, defined = running_ties(a, y, axis)
    dtype = float_dtype(a)
    moving = np.where(ties, np.moveaxis(np.broadcast_to(ta, np.shape(a)), axis, -1), 0)
    so_far = np.cumsum(moving, axis=-1)
    in_run = so_far - np.take_along_axis(so_far - moving, first, -1)
    tangent = np.where(defined, in_run / np.maximum(count, 1).astype(dtype), np.nan)
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
