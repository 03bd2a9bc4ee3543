"""Rules for NumPy's shape, indexing and joining routines, reverse (vjp) and forward (jvp).

Each of these routines is linear and only moves (copies, drops or sums) elements, so the
forward rule applies the routine itself to the tangent and the reverse rule undoes the
move on the cotangent: reshape it back, sum the copies of an element, scatter into zeros.
Items of lists of arrays (``np.stack([a, b])``, ``np.split``) may have no tangent or
adjoint (None): the helpers use zeros there.
"""
import numpy as np

from ..errors import UnsupportedCaseError
from ..registry import register_jvp, register_nondifferentiable, register_vjp
from ..runtime import concat_grad, unbroadcast, unstack, zeros_like


def grad_zeros(shape, g):
    """Zeros of ``shape`` in the float dtype of the cotangent ``g``."""
    return np.zeros(shape, np.result_type(np.asarray(g).dtype, np.float16))


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


def item_grad(g, i, y):
    """Item ``i`` of the adjoint of a tuple-valued result ``y`` (zeros if it has none)."""
    gi = None if g is None else g[i]
    if gi is None:
        return zeros_like(y[i])
    if np.shape(gi) != np.shape(y[i]):
        return np.broadcast_to(gi, np.shape(y[i]))
    return gi


def item_tangent(ti, i, y):
    """The tangent of a tuple-valued result ``y`` that only its item ``i`` gets."""
    out = [zeros_like(v) for v in y]
    out[i] = ti
    return out


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
    d[a] += np.transpose(d[y], np.argsort(transpose_axes(axes, np.ndim(a))))


@register_jvp(np.transpose)
def transpose_jvp(y, a, axes=None):
    t[y] += np.transpose(t[a], transpose_axes(axes, np.ndim(a)))


@register_vjp(np.ndarray.transpose)
def ndarray_transpose(y, a, *axes):
    d[a] += np.transpose(d[y], np.argsort(transpose_axes(axes, np.ndim(a))))


@register_jvp(np.ndarray.transpose)
def ndarray_transpose_jvp(y, a, *axes):
    t[y] += np.transpose(t[a], transpose_axes(axes, np.ndim(a)))


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


# ---- reordering elements --------------------------------------------------------------------

@register_vjp(np.flip)
def flip(y, m, axis=None):
    d[m] += np.flip(d[y], axis)


@register_jvp(np.flip)
def flip_jvp(y, m, axis=None):
    t[y] += np.flip(t[m], axis)


@register_vjp(np.fliplr)
def fliplr(y, m):
    d[m] += np.fliplr(d[y])


@register_jvp(np.fliplr)
def fliplr_jvp(y, m):
    t[y] += np.fliplr(t[m])


@register_vjp(np.flipud)
def flipud(y, m):
    d[m] += np.flipud(d[y])


@register_jvp(np.flipud)
def flipud_jvp(y, m):
    t[y] += np.flipud(t[m])


@register_vjp(np.roll)
def roll(y, a, shift, axis=None):
    d[a] += np.roll(d[y], np.negative(shift), axis)


@register_jvp(np.roll)
def roll_jvp(y, a, shift, axis=None):
    t[y] += np.roll(t[a], shift, axis)


@register_vjp(np.rot90)
def rot90(y, m, k=1, axes=(0, 1)):
    d[m] += np.rot90(d[y], -k, axes)


@register_jvp(np.rot90)
def rot90_jvp(y, m, k=1, axes=(0, 1)):
    t[y] += np.rot90(t[m], k, axes)


def permutation_to(a, y, axis):
    """Positions ``p`` along ``axis`` with ``take_along_axis(a, p, axis) == y``, for ``y`` a
    reordering of ``a`` along ``axis`` (sorted or partitioned); equal values are matched
    in order, so ties give one valid subgradient."""
    order_a = np.argsort(a, axis=axis, kind="stable")
    order_y = np.argsort(y, axis=axis, kind="stable")
    positions = np.empty_like(order_a)
    np.put_along_axis(positions, order_y, order_a, axis)
    return positions


def reorder_grad(g, a, y, axis):
    """The adjoint of a sort or partition of ``a`` along ``axis`` (None: flattened)."""
    flat = np.ravel(a) if axis is None else np.asarray(a)
    axis = -1 if axis is None else axis
    out = grad_zeros(flat.shape, g)
    np.put_along_axis(out, permutation_to(flat, y, axis), g, axis)
    return np.reshape(out, np.shape(a))


def reorder_tangent(t, a, y, axis):
    if axis is None:
        return np.take_along_axis(np.ravel(t), permutation_to(np.ravel(a), y, -1), -1)
    return np.take_along_axis(np.asarray(t), permutation_to(np.asarray(a), y, axis), axis)


@register_vjp(np.sort)
def sort(y, a, axis=-1, kind=None, order=None, stable=None):
    d[a] += reorder_grad(d[y], a, y, axis)


@register_jvp(np.sort)
def sort_jvp(y, a, axis=-1, kind=None, order=None, stable=None):
    t[y] += reorder_tangent(t[a], a, y, axis)


@register_vjp(np.partition)
def partition(y, a, kth, axis=-1, kind="introselect", order=None):
    d[a] += reorder_grad(d[y], a, y, axis)


@register_jvp(np.partition)
def partition_jvp(y, a, kth, axis=-1, kind="introselect", order=None):
    t[y] += reorder_tangent(t[a], a, y, axis)


# ---- copies and repeats ---------------------------------------------------------------------

def tile_grad(g, a, reps):
    """The adjoint of ``np.tile(a, reps)``: the sum over the copies."""
    shape = np.shape(a)
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    n = max(len(shape), len(reps))
    base = (1,) * (n - len(shape)) + shape
    reps = (1,) * (n - len(reps)) + reps
    blocks = np.reshape(g, [k for r, s in zip(reps, base) for k in (r, s)])
    return np.reshape(np.sum(blocks, axis=tuple(range(0, 2 * n, 2))), shape)


@register_vjp(np.tile)
def tile(y, A, reps):
    d[A] += tile_grad(d[y], A, reps)


@register_jvp(np.tile)
def tile_jvp(y, A, reps):
    t[y] += np.tile(t[A], reps)


def repeat_grad(g, a, repeats, axis):
    """The adjoint of ``np.repeat(a, repeats, axis)``: each element sums its copies."""
    shape = np.shape(a)
    if axis is None:
        flat = grad_zeros(int(np.prod(shape)), g)
        np.add.at(flat, np.repeat(np.arange(flat.size), repeats), g)
        return flat.reshape(shape)
    out = grad_zeros(shape, g)
    owners = np.repeat(np.arange(shape[axis]), repeats)
    np.add.at(np.moveaxis(out, axis, 0), owners, np.moveaxis(np.asarray(g), axis, 0))
    return out


@register_vjp(np.repeat)
def repeat(y, a, repeats, axis=None):
    d[a] += repeat_grad(d[y], a, repeats, axis)


@register_jvp(np.repeat)
def repeat_jvp(y, a, repeats, axis=None):
    t[y] += np.repeat(t[a], repeats, axis)


@register_jvp(np.copy)
def copy_jvp(y, a, order="K", subok=False):
    t[y] += t[a]


@register_jvp(np.ndarray.astype)
def astype_jvp(y, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    t[y] += cast_tangent(t[a], y)


def cast_tangent(t, y):
    """A tangent in the float dtype of ``y``; zero when ``y`` is an integer or boolean cast."""
    dtype = getattr(y, "dtype", None)
    if dtype is not None and np.issubdtype(dtype, np.inexact):
        return np.asarray(t, dtype)
    return np.zeros(np.shape(y))


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


def array_tangent(t, obj, y):
    dtype = np.asarray(y).dtype
    if not np.issubdtype(dtype, np.inexact):
        return np.zeros(np.shape(y))
    return np.reshape(np.array(_fill_nested(t, obj), dtype=dtype), np.shape(y))


def _fill_nested(t, obj):
    if isinstance(obj, (list, tuple)):
        items = [None] * len(obj) if t is None else t
        return [_fill_nested(ti, oi) for ti, oi in zip(items, obj)]
    return zeros_like(obj) if t is None else t


@register_vjp(np.array)
def array(y, object, dtype=None, copy=True, order="K", subok=False, ndmin=0, like=None):
    d[object] += array_grad(d[y], object, y)


@register_jvp(np.array)
def array_jvp(y, object, dtype=None, copy=True, order="K", subok=False, ndmin=0, like=None):
    t[y] += array_tangent(t[object], object, y)


@register_vjp(np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray)
def asarray(y, a, dtype=None, order=None, device=None, copy=None, like=None):
    d[a] += array_grad(d[y], a, y)


@register_jvp(np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray)
def asarray_jvp(y, a, dtype=None, order=None, device=None, copy=None, like=None):
    t[y] += array_tangent(t[a], a, y)


# ---- diagonals and triangles ----------------------------------------------------------------

def diagonal_grad(g, a, offset=0, axis1=0, axis2=1):
    """The adjoint of ``np.diagonal(a, offset, axis1, axis2)``: ``g`` on that diagonal."""
    shape = np.shape(a)
    axis1, axis2 = axis1 % len(shape), axis2 % len(shape)
    rest = [n for i, n in enumerate(shape) if i not in (axis1, axis2)]
    out = grad_zeros(rest + [shape[axis1], shape[axis2]], g)
    i = np.arange(np.shape(g)[-1])
    out[..., i + max(0, -offset), i + max(0, offset)] = g
    return np.moveaxis(out, (-2, -1), (axis1, axis2))


def diag_grad(g, v, k):
    """The adjoint of ``np.diag(v, k)``: the diagonal of ``g`` (1-D ``v``), or ``g`` on the
    diagonal of a zero matrix (2-D ``v``)."""
    if np.ndim(v) == 1:
        return np.diagonal(g, k)
    return diagonal_grad(g, v, k)


@register_vjp(np.diag)
def diag(y, v, k=0):
    d[v] += diag_grad(d[y], v, k)


@register_jvp(np.diag)
def diag_jvp(y, v, k=0):
    t[y] += np.diag(t[v], k)


@register_vjp(np.diagonal)
def diagonal(y, a, offset=0, axis1=0, axis2=1):
    d[a] += diagonal_grad(d[y], a, offset, axis1, axis2)


@register_jvp(np.diagonal)
def diagonal_jvp(y, a, offset=0, axis1=0, axis2=1):
    t[y] += np.diagonal(t[a], offset, axis1, axis2)


@register_vjp(np.tril)
def tril(y, m, k=0):
    d[m] += unbroadcast(np.tril(d[y], k), m)  # a 1-D m is broadcast to a square


@register_jvp(np.tril)
def tril_jvp(y, m, k=0):
    t[y] += np.tril(t[m], k)


@register_vjp(np.triu)
def triu(y, m, k=0):
    d[m] += unbroadcast(np.triu(d[y], k), m)


@register_jvp(np.triu)
def triu_jvp(y, m, k=0):
    t[y] += np.triu(t[m], k)


# ---- padding and taking ---------------------------------------------------------------------

_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def check_pad_mode(mode, reflect_type):
    """The modes whose padding only copies elements or constants."""
    if mode not in _PAD_MODES or (mode in ("reflect", "symmetric") and reflect_type != "even"):
        detail = f", reflect_type={reflect_type!r}" if mode in ("reflect", "symmetric") else ""
        raise UnsupportedCaseError(
            f"srcad differentiates np.pad in the modes {', '.join(_PAD_MODES)} (reflect and symmetric "
            f"with reflect_type='even'), not mode={mode!r}{detail}")


def pad_sources(shape, pad_width, mode, reflect_type):
    """For each element of the padded array, the C-order position of the input element it
    copies, or ``-1 - (2 * axis + side)`` where it holds the constant of that axis and side."""
    check_pad_mode(mode, reflect_type)
    index = np.arange(int(np.prod(shape))).reshape(shape)
    if mode == "constant":
        codes = -1 - np.arange(2 * len(shape)).reshape(len(shape), 2)
        return np.pad(index, pad_width, mode="constant", constant_values=codes)
    return np.pad(index, pad_width, mode=mode)


def pad_grad(g, array, pad_width, mode, reflect_type):
    """The adjoint of ``np.pad(array, ...)`` for the array: each element sums its copies."""
    sources = np.ravel(pad_sources(np.shape(array), pad_width, mode, reflect_type))
    copied = sources >= 0
    sums = np.bincount(sources[copied], weights=np.ravel(g)[copied], minlength=np.size(array))
    return sums.astype(np.result_type(np.asarray(g).dtype, np.float16)).reshape(np.shape(array))


def pad_constant_grad(g, array, pad_width, constant_values):
    """The adjoint of ``np.pad(array, ..., constant_values=c)`` for ``c``, which NumPy reads
    as one value, a (before, after) pair, or one pair per axis."""
    ndim = np.ndim(array)
    sources = np.ravel(pad_sources(np.shape(array), pad_width, "constant", "even"))
    constant = sources < 0
    sums = np.bincount(-1 - sources[constant], weights=np.ravel(g)[constant], minlength=2 * ndim)
    sums = sums.reshape(ndim, 2)
    c = np.asarray(constant_values)
    if c.size == 1:
        return np.reshape(sums.sum(), c.shape)
    if c.size == 2 and c.shape != (2, 1):
        return np.reshape(sums.sum(0), c.shape)
    return unbroadcast(sums, c)


def pad_tangent(t, pad_width, mode, reflect_type):
    check_pad_mode(mode, reflect_type)
    if mode in ("reflect", "symmetric"):
        return np.pad(t, pad_width, mode=mode, reflect_type=reflect_type)
    return np.pad(t, pad_width, mode=mode)


def pad_constant_tangent(tc, array, pad_width):
    zeros = np.zeros(np.shape(array), np.result_type(np.asarray(tc).dtype, np.float16))
    return np.pad(zeros, pad_width, mode="constant", constant_values=tc)


@register_vjp(np.pad)
def pad(y, array, pad_width, mode="constant", stat_length=None, constant_values=0, end_values=0,
        reflect_type="even"):
    d[array] += pad_grad(d[y], array, pad_width, mode, reflect_type)
    d[constant_values] += pad_constant_grad(d[y], array, pad_width, constant_values)


@register_jvp(np.pad)
def pad_jvp(y, array, pad_width, mode="constant", stat_length=None, constant_values=0, end_values=0,
            reflect_type="even"):
    t[y] += pad_tangent(t[array], pad_width, mode, reflect_type)
    t[y] += pad_constant_tangent(t[constant_values], array, pad_width)


def take_grad(g, a, indices, axis, mode):
    """The adjoint of ``np.take(a, indices, axis, mode=mode)``: repeated indices add up."""
    shape = np.shape(a)
    n = int(np.prod(shape)) if axis is None else shape[axis]
    indices = np.asarray(indices)
    if mode == "wrap":
        indices = indices % n
    elif mode == "clip":
        indices = np.clip(indices, 0, n - 1)
    if axis is None:
        flat = grad_zeros(n, g)
        np.add.at(flat, indices, g)
        return flat.reshape(shape)
    out = grad_zeros(shape, g)
    np.add.at(out, (slice(None),) * (axis % len(shape)) + (indices,), g)
    return out


@register_vjp(np.take)
def take(y, a, indices, axis=None, out=None, mode="raise"):
    d[a] += take_grad(d[y], a, indices, axis, mode)


@register_jvp(np.take)
def take_jvp(y, a, indices, axis=None, out=None, mode="raise"):
    t[y] += np.take(t[a], indices, axis, mode=mode)


# ---- joining and splitting ------------------------------------------------------------------

def unjoin(g, pieces, promote, axis):
    """The adjoints of ``pieces`` that were each promoted (``np.atleast_2d``...) and then
    concatenated along ``axis``, shaped like the pieces."""
    sizes = [np.shape(promote(p))[axis] for p in pieces]
    parts = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
    grads = [np.reshape(part, np.shape(p)) for part, p in zip(parts, pieces)]
    return np.stack(grads) if isinstance(pieces, np.ndarray) else grads


def as_column(a):
    """How ``np.column_stack`` sees one of its pieces."""
    a = np.asarray(a)
    return a.reshape(-1, 1) if a.ndim < 2 else a


def hstack_axis(pieces):
    return 0 if np.ndim(pieces[0]) <= 1 else 1


@register_vjp(np.stack)
def stack(y, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    d[arrays] += unstack(d[y], axis)


@register_jvp(np.stack)
def stack_jvp(y, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    t[y] += np.stack(filled(t[arrays], arrays), axis)


@register_vjp(np.concatenate)
def concatenate(y, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    d[arrays] += concat_grad(d[y], arrays, axis)


@register_jvp(np.concatenate)
def concatenate_jvp(y, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    t[y] += np.concatenate(filled(t[arrays], arrays), axis)


@register_vjp(np.vstack)
def vstack(y, tup, dtype=None, casting="same_kind"):
    d[tup] += unjoin(d[y], tup, np.atleast_2d, 0)


@register_jvp(np.vstack)
def vstack_jvp(y, tup, dtype=None, casting="same_kind"):
    t[y] += np.vstack(filled(t[tup], tup))


@register_vjp(np.hstack)
def hstack(y, tup, dtype=None, casting="same_kind"):
    d[tup] += unjoin(d[y], tup, np.atleast_1d, hstack_axis(tup))


@register_jvp(np.hstack)
def hstack_jvp(y, tup, dtype=None, casting="same_kind"):
    t[y] += np.hstack(filled(t[tup], tup))


@register_vjp(np.dstack)
def dstack(y, tup):
    d[tup] += unjoin(d[y], tup, np.atleast_3d, 2)


@register_jvp(np.dstack)
def dstack_jvp(y, tup):
    t[y] += np.dstack(filled(t[tup], tup))


@register_vjp(np.column_stack)
def column_stack(y, tup):
    d[tup] += unjoin(d[y], tup, as_column, 1)


@register_jvp(np.column_stack)
def column_stack_jvp(y, tup):
    t[y] += np.column_stack(filled(t[tup], tup))


@register_vjp(np.split, np.array_split)
def split(y, ary, indices_or_sections, axis=0):
    d[ary] += np.concatenate(filled(d[y], y), axis)


@register_jvp(np.split)
def split_jvp(y, ary, indices_or_sections, axis=0):
    t[y] += np.split(t[ary], indices_or_sections, axis)


@register_jvp(np.array_split)
def array_split_jvp(y, ary, indices_or_sections, axis=0):
    t[y] += np.array_split(t[ary], indices_or_sections, axis)


@register_vjp(np.hsplit)
def hsplit(y, ary, indices_or_sections):
    d[ary] += np.hstack(filled(d[y], y))


@register_jvp(np.hsplit)
def hsplit_jvp(y, ary, indices_or_sections):
    t[y] += np.hsplit(t[ary], indices_or_sections)


@register_vjp(np.vsplit)
def vsplit(y, ary, indices_or_sections):
    d[ary] += np.vstack(filled(d[y], y))


@register_jvp(np.vsplit)
def vsplit_jvp(y, ary, indices_or_sections):
    t[y] += np.vsplit(t[ary], indices_or_sections)


@register_vjp(np.dsplit)
def dsplit(y, ary, indices_or_sections):
    d[ary] += np.dstack(filled(d[y], y))


@register_jvp(np.dsplit)
def dsplit_jvp(y, ary, indices_or_sections):
    t[y] += np.dsplit(t[ary], indices_or_sections)


# ---- differences ----------------------------------------------------------------------------

def _diff_pieces(a, axis, prepend, append):
    """The blocks ``np.diff`` joins before differencing: (prepend, a, append), None if absent."""
    a = np.asarray(a)
    axis = axis % a.ndim

    def block(v):
        if v is None:
            return None
        v = np.asarray(v)
        if v.ndim == 0:
            shape = list(a.shape)
            shape[axis] = 1
            v = np.broadcast_to(v, shape)
        return v

    return block(prepend), a, block(append), axis


def diff_grad(g, a, n, axis, prepend, append, which):
    """The adjoint of ``np.diff(a, n, axis, prepend, append)`` for ``which`` of "a",
    "prepend" or "append" (None means the argument was not given)."""
    before, a, after, axis = _diff_pieces(a, axis, prepend, append)
    g = np.asarray(g)
    for _ in range(n):  # the adjoint of one first difference
        pad = [(0, 0)] * g.ndim
        pad[axis] = (1, 1)
        g = -np.diff(np.pad(g, pad), axis=axis)
    sizes = [0 if before is None else before.shape[axis], a.shape[axis]]
    parts = np.split(g, np.cumsum(sizes), axis=axis)
    if which == "a":
        return parts[1]
    if which == "prepend":
        return np.reshape(np.sum(parts[0]), ()) if np.ndim(prepend) == 0 else parts[0]
    return np.reshape(np.sum(parts[2]), ()) if np.ndim(append) == 0 else parts[2]


def diff_tangent(tv, a, n, axis, prepend, append, which):
    """The tangent of ``np.diff`` when only the argument ``which`` moves (by ``tv``)."""
    before, a, after, axis = _diff_pieces(a, axis, prepend, append)
    blocks = {"prepend": before, "a": a, "append": after}
    parts = []
    for name, block in blocks.items():
        if block is None:
            continue
        if name == which:
            parts.append(np.broadcast_to(tv, block.shape))
        else:
            parts.append(np.zeros(block.shape, np.result_type(np.asarray(tv).dtype, np.float16)))
    return np.diff(np.concatenate(parts, axis=axis), n, axis=axis)


@register_vjp(np.diff)
def diff(y, a, n=1, axis=-1, prepend=None, append=None):
    d[a] += diff_grad(d[y], a, n, axis, prepend, append, "a")
    d[prepend] += diff_grad(d[y], a, n, axis, prepend, append, "prepend")
    d[append] += diff_grad(d[y], a, n, axis, prepend, append, "append")


@register_jvp(np.diff)
def diff_jvp(y, a, n=1, axis=-1, prepend=None, append=None):
    t[y] += diff_tangent(t[a], a, n, axis, prepend, append, "a")
    t[y] += diff_tangent(t[prepend], a, n, axis, prepend, append, "prepend")
    t[y] += diff_tangent(t[append], a, n, axis, prepend, append, "append")


# index bookkeeping that generated adjoints call: no derivative flows through it
register_nondifferentiable(ravel_order, transpose_axes, rollaxis_destination, permutation_to, check_pad_mode,
                           pad_sources, hstack_axis, reason="it computes positions, axes or an order")


@register_vjp(np.bincount)
def bincount(y, x, weights=None, minlength=0):
    """Linear in ``weights``: each weight's adjoint is its bin's."""
    d[weights] += d[y][x]


@register_jvp(np.bincount)
def bincount_jvp(y, x, weights=None, minlength=0):
    t[y] += np.bincount(x, t[weights], minlength)
