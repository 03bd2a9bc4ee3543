"""The ``reduceat`` method of ufuncs: sums and extrema over slices, reverse and forward rules.

``np.X.reduceat(a, indices, axis)`` reduces, for each index j, the slice
``a[indices[j]:indices[j+1]]`` along ``axis`` (to the end for the last one), or the one entry
``a[indices[j]]`` where the next index is not larger: slices may overlap when the indices do not
increase. ``segment_members`` lists each slice's entries, so both directions visit every (slice,
entry) pair once, as NumPy's reduction does: the adjoint of an entry is the sum of its slices'
cotangents, never a difference of running totals, so its rounding is that of those cotangents.
``add.reduceat`` is linear: its tangent is ``add.reduceat`` of the tangent. ``maximum``,
``minimum``, ``fmax`` and ``fmin.reduceat`` share each slice's cotangent equally among the entries
equal to its extremum (the convention of ``np.max``): a slice whose extremum is NaN gives NaN to
every entry, one of ``fmax`` skips its NaN entries. The indices carry no derivative; ``dtype`` is
read as for every rule, ``out`` is refused.
"""
import numpy as np

from ..registry import register_jvp, register_nondifferentiable, register_vjp
from ..runtime import as_array
from .numpy_reductions import float_dtype
from .numpy_ufunc_methods import single_axis


@register_vjp(np.add.reduceat)
def add_reduceat(y, array, indices, axis=0, dtype=None, out=None):
    d[array] += segment_sum_grad(d[y], array, indices, axis)


@register_jvp(np.add.reduceat)
def add_reduceat_jvp(y, array, indices, axis=0, dtype=None, out=None):
    t[y] += np.add.reduceat(t[array], indices, axis=axis)  # linear


@register_vjp(np.maximum.reduceat, np.minimum.reduceat, np.fmax.reduceat, np.fmin.reduceat)
def extremum_reduceat(y, array, indices, axis=0, dtype=None, out=None):
    d[array] += segment_extremum_grad(d[y], array, y, indices, axis)


@register_jvp(np.maximum.reduceat, np.minimum.reduceat, np.fmax.reduceat, np.fmin.reduceat)
def extremum_reduceat_jvp(y, array, indices, axis=0, dtype=None, out=None):
    t[y] += segment_extremum_tangent(t[array], array, y, indices, axis)


def segment_members(indices, n):
    """``(slice, position)``: for every entry of every slice of ``reduceat`` over ``n`` entries,
    the slice's number and the entry's position, slice by slice."""
    starts = np.asarray(indices, dtype=np.intp).reshape(-1)
    following = np.append(starts[1:], n)
    lengths = np.where(starts < following, following - starts, 1)
    slices = np.repeat(np.arange(starts.size), lengths)
    offsets = np.arange(slices.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return slices, starts[slices] + offsets


register_nondifferentiable(segment_members, reason="it reads only indices and a length")


def moved_last(shape, axis):
    """``shape`` with ``axis`` moved last, as ``np.moveaxis(x, axis, -1)`` moves it."""
    return shape[:axis] + shape[axis + 1:] + (shape[axis],)


def segment_sum_grad(g, a, indices, axis):
    """The adjoint of ``a`` for ``y = np.add.reduceat(a, indices, axis)``: each entry gets the
    cotangents of the slices it is in."""
    axis = single_axis(a, axis)
    g = np.moveaxis(np.asarray(g), axis, -1)
    shape = moved_last(np.shape(a), axis)
    slices, positions = segment_members(indices, shape[-1])
    grad = np.zeros(shape, float_dtype(a))
    np.add.at(grad, (Ellipsis, positions), g[..., slices])
    return np.moveaxis(grad, -1, axis)


def segment_shares(a, y, indices, axis):
    """``(slices, positions, shares)``: per entry of every slice (see ``segment_members``), the
    share of the slice's extremum ``y`` it holds, along ``axis`` moved last. Tied entries share
    equally; NaN where the extremum is NaN."""
    a = np.moveaxis(as_array(a), axis, -1)
    y = np.moveaxis(as_array(y), axis, -1)
    slices, positions = segment_members(indices, a.shape[-1])
    tied = a[..., positions] == y[..., slices]
    count = np.zeros(y.shape, np.intp)
    np.add.at(count, (Ellipsis, slices), tied)
    held = count[..., slices]
    shares = np.where(held > 0, tied / np.maximum(held, 1), np.nan).astype(float_dtype(a), copy=False)
    return slices, positions, shares


def segment_extremum_grad(g, a, y, indices, axis):
    """The adjoint of ``a`` for ``y = np.maximum.reduceat(a, indices, axis)`` (or minimum, fmax,
    fmin): each slice's cotangent shared by its tied entries."""
    axis = single_axis(a, axis)
    slices, positions, shares = segment_shares(a, y, indices, axis)
    g = np.moveaxis(np.broadcast_to(g, np.shape(y)), axis, -1)
    grad = np.zeros(moved_last(np.shape(a), axis), shares.dtype)
    np.add.at(grad, (Ellipsis, positions), g[..., slices] * shares)
    return np.moveaxis(grad, -1, axis)


def segment_extremum_tangent(ta, a, y, indices, axis):
    """The tangent of the extrema ``y`` over slices of ``a``: per slice, the mean tangent of its
    tied entries."""
    axis = single_axis(a, axis)
    slices, positions, shares = segment_shares(a, y, indices, axis)
    ta = np.moveaxis(np.broadcast_to(ta, np.shape(a)), axis, -1)
    tangent = np.zeros(moved_last(np.shape(y), axis), shares.dtype)
    np.add.at(tangent, (Ellipsis, slices), ta[..., positions] * shares)
    return np.moveaxis(tangent, -1, axis)


# Second order: the helpers are linear in their first argument, each the transpose of the
# forward map (``add.reduceat`` itself for the sums), and the extrema's piecewise constant in
# ``a`` and ``y`` (which entries are tied); the sums' reads only ``a``'s shape.
@register_vjp(segment_sum_grad, zero="a")
def segment_sum_grad_vjp(r, g, a, indices, axis):
    d[g] += np.add.reduceat(d[r], indices, axis=single_axis(a, axis))


@register_jvp(segment_sum_grad, zero="a")
def segment_sum_grad_jvp(r, g, a, indices, axis):
    t[r] += segment_sum_grad(t[g], a, indices, axis)


@register_vjp(segment_extremum_grad, zero=("a", "y"))
def segment_extremum_grad_vjp(r, g, a, y, indices, axis):
    d[g] += segment_extremum_tangent(d[r], a, y, indices, axis)


@register_jvp(segment_extremum_grad, zero=("a", "y"))
def segment_extremum_grad_jvp(r, g, a, y, indices, axis):
    t[r] += segment_extremum_grad(t[g], a, y, indices, axis)


@register_vjp(segment_extremum_tangent, zero=("a", "y"))
def segment_extremum_tangent_vjp(r, ta, a, y, indices, axis):
    d[ta] += segment_extremum_grad(d[r], a, y, indices, axis)


@register_jvp(segment_extremum_tangent, zero=("a", "y"))
def segment_extremum_tangent_jvp(r, ta, a, y, indices, axis):
    t[r] += segment_extremum_tangent(t[ta], a, y, indices, axis)
