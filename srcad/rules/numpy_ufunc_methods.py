"""The ``reduce`` method of ufuncs: ``np.add.reduce``, ``np.subtract.reduce`` and the like,
reverse and forward rules (``accumulate``: ``numpy_ufunc_scans``; ``reduceat``:
``numpy_ufunc_segments``).

A rule is keyed by the bound method itself: ``np.add.reduce`` is a new object at each
attribute access, but two of them are equal, and hash alike, exactly when they are the same
method of the same ufunc, so the lookup matches ``np.add.reduce`` and never
``np.multiply.reduce`` or a ufunc of the user's.

The templates are those of the NumPy function with the same math, with the method's own
signature (``axis=0`` by default, not ``None``): ``add.reduce`` is ``np.sum``'s,
``multiply.reduce`` ``np.prod``'s (exact at zeros), ``maximum``/``minimum.reduce`` ``np.max``'s
(ties share equally; ``fmax``/``fmin.reduce`` skip NaNs as ``np.nanmax`` does).
``logaddexp.reduce`` is log Σ exp: each entry's share is ``exp(a - y)`` (``logaddexp2``:
``2 ** (a - y)``). ``subtract.reduce`` is ``a_0 - a_1 - ...`` (``initial - a_0 - a_1 - ...``
with ``initial``, which NumPy requires for a ``where`` mask), ``divide.reduce`` ``a_0 / (a_1
···)`` (``initial / (a_0 ···)``), whose derivative in the dividend never divides by it.
Other keywords (``casting``, ``order``, ``signature``...) are refused at the call, and so is
every other method (``at`` of another ufunc than ``np.add``) and ufunc: they have no rule.
``np.X.outer(a, b)`` is lowered to ``np.X`` of broadcast operands (``passes/ufunc_outer.py``),
whose rules serve.
"""
import numpy as np

from ..registry import register_jvp, register_nondifferentiable, register_vjp
from ..runtime import as_array, expand_reduced, extremum_grad, prod_grad, sum_to_reduced, unbroadcast
from .numpy_reductions import extremum_shares, initial_share, masked_prod_grad, reduced_axes


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


@register_vjp(np.subtract.reduce, zero="where")
def subtract_reduce(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    d[array] += sum_to_reduced(d[y], array, axis, keepdims) * difference_signs(array, axis, initial, where)
    d[initial] += unbroadcast(d[y], initial)


@register_jvp(np.subtract.reduce, zero="where")
def subtract_reduce_jvp(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    t[y] += np.sum(t[array] * difference_signs(array, axis, initial, where), axis=axis, keepdims=keepdims)
    t[y] += t[initial]


def single_axis(a, axis):
    """The one axis of ``a`` an ``accumulate``, or the ``reduce`` of a ufunc whose operands do not
    commute, runs along, as an int (NumPy takes an int, a tuple of one, or None for a vector)."""
    (axis,) = reduced_axes(a, axis)
    return axis


def first_along(a, axis):
    """True at the first entry of ``a`` along ``single_axis(a, axis)``, shaped like ``a``."""
    axis = single_axis(a, axis)
    return np.broadcast_to(np.expand_dims(np.arange(np.shape(a)[axis]) == 0, tuple(range(1, np.ndim(a) - axis))),
                           np.shape(a))


def difference_signs(a, axis, initial, where):
    """∂y/∂a for ``y = np.subtract.reduce(a, axis, initial=initial, where=where)``: -1 for the
    entries subtracted (those in the mask), +1 for the first unless ``initial`` is given."""
    subtracted = np.where(where, -1.0, 0.0) * np.ones(np.shape(a))
    return subtracted if initial is not None else np.where(first_along(a, axis), 1.0, subtracted)


register_nondifferentiable(single_axis, first_along, difference_signs, reason="it reads only the shape of its argument")


@register_vjp(np.divide.reduce, zero="where")
def divide_reduce(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    d[array] += sum_to_reduced(d[y], array, axis, keepdims) * quotient_slope(array, y, axis, keepdims, initial, where)
    d[initial] += unbroadcast(d[y] / np.prod(array, axis=axis, keepdims=keepdims, where=where), initial)


@register_jvp(np.divide.reduce, zero="where")
def divide_reduce_jvp(y, array, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=True):
    t[y] += np.sum(t[array] * quotient_slope(array, y, axis, keepdims, initial, where), axis=axis, keepdims=keepdims)
    t[y] += t[initial] / np.prod(array, axis=axis, keepdims=keepdims, where=where)


def quotient_slope(a, y, axis, keepdims, initial, where):
    """∂y/∂a for ``y = np.divide.reduce(a, axis, initial=initial, where=where)``: -y / a for a
    divisor in the mask, 0 outside it, and for the dividend (the first entry, without
    ``initial``) 1 / (the product of the divisors). Smooth in ``a`` and ``y``: read as source at
    second order."""
    a = as_array(a)
    if initial is not None:
        return np.where(where, -expand_reduced(y, a, axis, keepdims) / np.where(where, a, 1.0), 0.0)
    first = first_along(a, axis)  # NumPy takes a mask only with `initial`
    divisors = np.where(first, 1.0, a)
    rest = np.prod(divisors, axis=reduced_axes(a, axis), keepdims=True)
    return np.where(first, 1.0 / rest, -expand_reduced(y, a, axis, keepdims) / divisors)


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
