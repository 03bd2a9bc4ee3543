"""Rules for NumPy's reshaping, axis-permuting and array-building routines (``np.array``,
``np.linspace``), reverse (vjp) and forward (jvp).

Each of these routines is linear and only moves (copies, drops or sums) elements, so the
forward rule applies the routine itself to the tangent and the reverse rule undoes the
move on the cotangent: reshape it back, sum the copies of an element, scatter into zeros.
Items of lists of arrays (``np.stack([a, b])``, ``np.split``) may have no tangent or
adjoint (None): the helpers here (``filled``, ``grad_zeros``) use zeros there; reordering
(flips, rolls, sorts) and repeating (tiles, repeats, copies) are in ``numpy_reordering.py``,
the joining and splitting rules in ``numpy_joining.py``, diagonals, padding, taking and
differences in ``numpy_indexing.py``.
"""
import numpy as np

from ..registry import no_derivative, register_jvp, register_nondifferentiable, register_vjp
from ..runtime import as_array, item_grad, unbroadcast, zeros_like


def grad_zeros(shape, g):
    """Zeros of ``shape`` in the float dtype of the cotangent ``g``."""
    return np.zeros(shape, np.result_type(as_array(g).dtype, np.float16))


def filled(tangents, values):
    """Per-item tangents (or adjoints) of a list of arrays, zeros where an item has none."""
    if isinstance(values, np.ndarray):
        return zeros_like(values) if tangents is None else tangents
    if tangents is None:
        tangents = [None] * len(values)
    return [zeros_like(x) if tx is None else tx for tx, x in zip(tangents, values)]

# ---- reshaping ------------------------------------------------------------------------------

def ravel_order(a, order):
    """How ``np.ravel(a, order)`` reads ``a``: "C", "F", or (order "K" of a strided array)
    the C-order positions of the elements it reads."""
    if order in ("C", "F", None):
        return order or "C"
    a = np.asarray(a)
    if order == "A":
        return "F" if np.isfortran(a) else "C"
    if a.flags.c_contiguous:
        return "C"
    if a.flags.f_contiguous:
        return "F"
    positions = np.empty_like(a, dtype=np.intp)  # same memory layout as a
    positions[...] = np.arange(a.size).reshape(a.shape)
    return np.ravel(positions, order="K")


def ravel_grad(g, a, order):
    """The adjoint of ``np.ravel(a, order)`` (and ``a.flatten(order)``)."""
    how = ravel_order(a, order)
    if isinstance(how, str):
        return np.reshape(g, np.shape(a), order=how)
    return np.reshape(np.asarray(g)[np.argsort(how)], np.shape(a))


def ravel_tangent(t, a, order):
    how = ravel_order(a, order)
    if isinstance(how, str):
        return np.ravel(t, order=how)
    return np.ravel(t)[how]


@register_vjp(np.reshape)
def reshape(y, a, shape=None, order="C", newshape=None, copy=None):
    d[a] += np.reshape(d[y], np.shape(a), order=ravel_order(a, order))


@register_jvp(np.reshape)
def reshape_jvp(y, a, shape=None, order="C", newshape=None, copy=None):
    t[y] += np.reshape(t[a], np.shape(y), order=ravel_order(a, order))


@register_vjp(np.ndarray.reshape)
def ndarray_reshape(y, a, *shape, order="C"):
    d[a] += np.reshape(d[y], np.shape(a), order=ravel_order(a, order))


@register_jvp(np.ndarray.reshape)
def ndarray_reshape_jvp(y, a, *shape, order="C"):
    t[y] += np.reshape(t[a], np.shape(y), order=ravel_order(a, order))


@register_vjp(np.ravel)
def ravel(y, a, order="C"):
    d[a] += ravel_grad(d[y], a, order)


@register_jvp(np.ravel)
def ravel_jvp(y, a, order="C"):
    t[y] += ravel_tangent(t[a], a, order)


@register_vjp(np.ndarray.flatten)
def flatten(y, a, order="C"):
    d[a] += ravel_grad(d[y], a, order)


@register_jvp(np.ndarray.flatten)
def flatten_jvp(y, a, order="C"):
    t[y] += ravel_tangent(t[a], a, order)


@register_vjp(np.expand_dims)
def expand_dims(y, a, axis):
    d[a] += np.reshape(d[y], np.shape(a))


@register_jvp(np.expand_dims)
def expand_dims_jvp(y, a, axis):
    t[y] += np.reshape(t[a], np.shape(y))


@register_vjp(np.squeeze)
def squeeze(y, a, axis=None):
    d[a] += np.reshape(d[y], np.shape(a))


@register_jvp(np.squeeze)
def squeeze_jvp(y, a, axis=None):
    t[y] += np.reshape(t[a], np.shape(y))


@register_vjp(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd(y, *arys):
    """One argument gives an array, several give a tuple of arrays."""
    if len(arys) == 1:
        for a in arys:
            d[a] += np.reshape(d[y], np.shape(a))
    else:
        for i, a in enumerate(arys):
            d[a] += np.reshape(item_grad(d[y], i, y), np.shape(a))


@register_jvp(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd_jvp(y, *arys):
    if len(arys) == 1:
        for a in arys:
            t[y] += np.reshape(t[a], np.shape(y))
    else:
        for i, a in enumerate(arys):
            t[y] += item_tangent(np.reshape(t[a], np.shape(y[i])), i, y)


def item_tangent(ti, i, y):
    """The tangent of a tuple-valued result ``y`` that only its item ``i`` gets."""
    out = [zeros_like(v) for v in y]
    out[i] = ti
    return out


@register_vjp(np.broadcast_arrays)
def broadcast_arrays(y, *args, subok=False):
    for i, a in enumerate(args):
        d[a] += unbroadcast(item_grad(d[y], i, y), a)


@register_jvp(np.broadcast_arrays)
def broadcast_arrays_jvp(y, *args, subok=False):
    for i, a in enumerate(args):
        t[y] += item_tangent(np.broadcast_to(t[a], np.shape(y[i])), i, y)


def meshgrid_axis(i, n, indexing):
    """The axis along which item ``i`` of ``np.meshgrid`` of ``n`` arrays varies ("xy"
    swaps the first two)."""
    return 1 - i if indexing == "xy" and n > 1 and i < 2 else i


def meshgrid_item_grad(g, x, i, n, indexing):
    """The adjoint of ``x``, the ``i``-th of the ``n`` arrays given to ``np.meshgrid``, from the
    adjoint ``g`` of its item: the sum over the axes it is repeated along, in ``x``'s shape."""
    axis = meshgrid_axis(i, n, indexing)
    return np.reshape(np.sum(g, axis=tuple(k for k in range(np.ndim(g)) if k != axis)), np.shape(x))


def meshgrid_item_tangent(tx, i, y, indexing):
    """Item ``i`` of the tangent of ``y = np.meshgrid(...)``, from the tangent ``tx`` of its
    ``i``-th array: ``tx`` repeated as the item repeats it (a copy: the item may be written)."""
    shape = [1] * len(y)
    shape[meshgrid_axis(i, len(y), indexing)] = -1
    return np.broadcast_to(np.reshape(tx, shape), np.shape(y[i])).copy()


@register_vjp(np.meshgrid)
def meshgrid(y, *xi, copy=True, sparse=False, indexing="xy"):
    for i, x in enumerate(xi):
        d[x] += meshgrid_item_grad(item_grad(d[y], i, y), x, i, len(xi), indexing)


@register_jvp(np.meshgrid)
def meshgrid_jvp(y, *xi, copy=True, sparse=False, indexing="xy"):
    for i, x in enumerate(xi):
        t[y] += item_tangent(meshgrid_item_tangent(t[x], i, y, indexing), i, y)


@register_vjp(np.broadcast_to)
def broadcast_to(y, array, shape, subok=False):
    d[array] += unbroadcast(d[y], array)


@register_jvp(np.broadcast_to)
def broadcast_to_jvp(y, array, shape, subok=False):
    t[y] += np.broadcast_to(t[array], np.shape(y))


# ---- permuting axes -------------------------------------------------------------------------

def transpose_axes(axes, ndim):
    """The permutation ``np.transpose(a, axes)`` or ``a.transpose(*axes)`` applies."""
    if isinstance(axes, tuple) and len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        axes = axes[0]  # a.transpose((1, 0)) or a.transpose(None)
    if axes is None or len(axes) == 0:
        return tuple(range(ndim))[::-1]
    return tuple(int(ax) % ndim for ax in axes)


@register_vjp(np.transpose)
def transpose(y, a, axes=None):
    if axes is None:
        d[a] += np.transpose(d[y])  # reversing the axes undoes itself
    else:
        d[a] += np.transpose(d[y], tuple(np.argsort(transpose_axes(axes, np.ndim(a)))))  # a tuple: Dask refuses an array of axes


@register_jvp(np.transpose)
def transpose_jvp(y, a, axes=None):
    t[y] += np.transpose(t[a], transpose_axes(axes, np.ndim(a)))


@register_vjp(np.ndarray.transpose)
def ndarray_transpose(y, a, *axes):
    d[a] += np.transpose(d[y], tuple(np.argsort(transpose_axes(axes, np.ndim(a)))))  # a tuple: Dask refuses an array of axes


@register_jvp(np.ndarray.transpose)
def ndarray_transpose_jvp(y, a, *axes):
    t[y] += np.transpose(t[a], transpose_axes(axes, np.ndim(a)))


_MATRIX_TRANSPOSES = [f for f in (getattr(np, "matrix_transpose", None), getattr(np.linalg, "matrix_transpose", None))
                      if f is not None]  # NumPy 2 (and a.mT)


@register_vjp(*_MATRIX_TRANSPOSES)
def matrix_transpose(y, x):
    d[x] += np.swapaxes(d[y], -1, -2)  # swapping the last two axes undoes itself


@register_jvp(*_MATRIX_TRANSPOSES)
def matrix_transpose_jvp(y, x):
    t[y] += np.swapaxes(t[x], -1, -2)


@register_vjp(np.swapaxes)
def swapaxes(y, a, axis1, axis2):
    d[a] += np.swapaxes(d[y], axis1, axis2)


@register_jvp(np.swapaxes)
def swapaxes_jvp(y, a, axis1, axis2):
    t[y] += np.swapaxes(t[a], axis1, axis2)


@register_vjp(np.moveaxis)
def moveaxis(y, a, source, destination):
    d[a] += np.moveaxis(d[y], destination, source)


@register_jvp(np.moveaxis)
def moveaxis_jvp(y, a, source, destination):
    t[y] += np.moveaxis(t[a], source, destination)


def rollaxis_destination(ndim, axis, start):
    """``np.rollaxis(a, axis, start)`` is ``np.moveaxis(a, axis, destination)``."""
    axis = axis % ndim
    start = start + ndim if start < 0 else start
    return start - 1 if axis < start else start


@register_vjp(np.rollaxis)
def rollaxis(y, a, axis, start=0):
    d[a] += np.moveaxis(d[y], rollaxis_destination(np.ndim(a), axis, start), axis)


@register_jvp(np.rollaxis)
def rollaxis_jvp(y, a, axis, start=0):
    t[y] += np.rollaxis(t[a], axis, start)


# ---- arrays from lists ----------------------------------------------------------------------

def array_grad(g, obj, y):
    """The adjoint of ``np.array(obj)``: ``g`` split back into the nesting of ``obj``
    (zero when the result is not a float array, as for any integer or boolean value)."""
    if not np.issubdtype(np.asarray(y).dtype, np.inexact):
        return zeros_like(obj)
    return _unnest(np.reshape(g, np.shape(obj)), obj)  # reshape drops ndmin's new axes


def _unnest(g, obj):
    if isinstance(obj, (list, tuple)):
        return [_unnest(g[i], item) for i, item in enumerate(obj)]
    return g


def array_tangent(ta, obj, y):
    """The tangent of ``y = np.array(obj)`` from ``ta``, the tangent of ``obj`` (None for a zero item)."""
    dtype = np.asarray(y).dtype
    if not np.issubdtype(dtype, np.inexact):
        return np.zeros(np.shape(y))
    return np.reshape(np.array(_fill_nested(ta, obj), dtype=dtype), np.shape(y))


def _fill_nested(t, obj):
    if isinstance(obj, (list, tuple)):
        items = [None] * len(obj) if t is None else t
        return [_fill_nested(ti, oi) for ti, oi in zip(items, obj, strict=True)]
    return zeros_like(obj) if t is None else t


# generated adjoints call array_grad: splitting into the nesting is undone by np.array
@register_vjp(array_grad)
def array_grad_vjp(r, g, obj, y):
    d[g] += np.reshape(array_tangent(d[r], obj, y), np.shape(g))


@register_jvp(array_grad)
def array_grad_jvp(r, g, obj, y):
    t[r] += array_grad(t[g], obj, y)


# and tangent code calls array_tangent, linear in the tangent: array_grad is its transpose (third order)
@register_vjp(array_tangent)
def array_tangent_vjp(r, ta, obj, y):
    d[ta] += array_grad(d[r], obj, y)


@register_jvp(array_tangent)
def array_tangent_jvp(r, ta, obj, y):
    t[r] += array_tangent(t[ta], obj, y)


@register_vjp(np.array, dtype_aware=True)
def array(y, object, dtype=None, copy=True, order="K", subok=False, ndmin=0, like=None):
    d[object] += array_grad(d[y], object, y)


@register_jvp(np.array, dtype_aware=True)
def array_jvp(y, object, dtype=None, copy=True, order="K", subok=False, ndmin=0, like=None):
    t[y] += array_tangent(t[object], object, y)


@register_vjp(np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray,
              dtype_aware=True)
def asarray(y, a, dtype=None, order=None, device=None, copy=None, like=None):
    d[a] += array_grad(d[y], a, y)


@register_jvp(np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray,
              dtype_aware=True)
def asarray_jvp(y, a, dtype=None, order=None, device=None, copy=None, like=None):
    t[y] += array_tangent(t[a], a, y)


# np.float64(s) as a conversion to a NumPy number (of an array: a cast array)
@register_vjp(np.float64, np.float32, np.float16, dtype_aware=True)
def float_type(y, x=0.0):
    d[x] += array_grad(d[y], x, y)


@register_jvp(np.float64, np.float32, np.float16, dtype_aware=True)
def float_type_jvp(y, x=0.0):
    t[y] += array_tangent(t[x], x, y)


# ---- evenly spaced values ------------------------------------------------------------------

def linspace_weights(y, num, endpoint, axis, which):
    """How much each sample of ``np.linspace`` moves with its ``"start"`` or ``"stop"``:
    ``1 - s`` or ``s`` for ``s = i / (num - 1)`` (``i / num`` without the endpoint), shaped to
    broadcast along ``axis`` of the result ``y``; zeros for an integer result."""
    ndim = np.ndim(y)
    shape = [1] * ndim
    shape[axis % ndim] = num
    if not np.issubdtype(np.asarray(y).dtype, np.inexact):
        return np.zeros(shape)
    s = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    return np.reshape(1.0 - s if which == "start" else s, shape)


def linspace_grad(g, v, y, num, endpoint, axis, which):
    """The adjoint of the endpoint ``v`` (``which``: "start" or "stop") of ``y = np.linspace(...)``."""
    weights = linspace_weights(y, num, endpoint, axis, which)
    return unbroadcast(np.sum(np.asarray(g) * weights, axis=axis % np.ndim(y)), v)


def linspace_tangent(tv, y, num, endpoint, axis, which):
    """The tangent of ``y = np.linspace(...)`` when its endpoint ``which`` moves by ``tv``."""
    tv = np.asarray(tv)
    ndim = np.ndim(y)
    tv = np.reshape(tv, (1,) * (ndim - 1 - tv.ndim) + tv.shape)  # the broadcast endpoints' rank
    weights = linspace_weights(y, num, endpoint, axis, which)
    return np.broadcast_to(np.expand_dims(tv, axis % ndim) * weights, np.shape(y))


_RETSTEP = "compute the step as (stop - start) / (num - 1) instead"


@register_vjp(np.linspace)
def linspace(y, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    if retstep:
        d[start] += no_derivative("np.linspace with retstep=True", _RETSTEP)
        d[stop] += no_derivative("np.linspace with retstep=True", _RETSTEP)
    d[start] += linspace_grad(d[y], start, y, num, endpoint, axis, "start")
    d[stop] += linspace_grad(d[y], stop, y, num, endpoint, axis, "stop")


@register_jvp(np.linspace)
def linspace_jvp(y, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    if retstep:
        t[y] += t[start] * no_derivative("np.linspace with retstep=True", _RETSTEP)
        t[y] += t[stop] * no_derivative("np.linspace with retstep=True", _RETSTEP)
    t[y] += linspace_tangent(t[start], y, num, endpoint, axis, "start")
    t[y] += linspace_tangent(t[stop], y, num, endpoint, axis, "stop")


# the two helpers are each other's adjoint (both linear in their first argument)
@register_vjp(linspace_grad)
def linspace_grad_vjp(r, g, v, y, num, endpoint, axis, which):
    d[g] += linspace_tangent(d[r], y, num, endpoint, axis, which)


@register_jvp(linspace_grad)
def linspace_grad_jvp(r, g, v, y, num, endpoint, axis, which):
    t[r] += linspace_grad(t[g], v, y, num, endpoint, axis, which)


@register_vjp(linspace_tangent)
def linspace_tangent_vjp(r, tv, y, num, endpoint, axis, which):
    d[tv] += linspace_grad(d[r], tv, y, num, endpoint, axis, which)


@register_jvp(linspace_tangent)
def linspace_tangent_jvp(r, tv, y, num, endpoint, axis, which):
    t[r] += linspace_tangent(t[tv], y, num, endpoint, axis, which)


# index bookkeeping that generated adjoints call: no derivative flows through it
register_nondifferentiable(ravel_order, transpose_axes, rollaxis_destination, linspace_weights,
                           reason="it computes positions, axes, weights or an order")
