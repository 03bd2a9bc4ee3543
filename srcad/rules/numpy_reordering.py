"""Rules for NumPy's routines that reorder or repeat elements without reshaping by axes:
flips, rolls, rotations, sorts and partitions; tiles, repeats, copies and casts. Reverse
(vjp) and forward (jvp), as in ``numpy_shapes.py``: the forward rule applies the routine to
the tangent, the reverse rule gathers back through the permutation or sums the copies."""
import numpy as np

from ..registry import register_jvp, register_nondifferentiable, register_vjp
from .numpy_shapes import grad_zeros

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


# generated adjoints call reorder_grad: a scatter through a permutation, undone by a gather
# (the permutation is piecewise constant in ``a``: no derivative flows into it)
@register_vjp(reorder_grad)
def reorder_grad_vjp(r, g, a, y, axis):
    d[g] += np.reshape(reorder_tangent(d[r], a, y, axis), np.shape(g))


@register_jvp(reorder_grad)
def reorder_grad_jvp(r, g, a, y, axis):
    t[r] += reorder_grad(t[g], a, y, axis)


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


# generated adjoints call tile_grad: it is linear in the cotangent
@register_vjp(tile_grad)
def tile_grad_vjp(r, g, a, reps):
    d[g] += np.tile(d[r], reps)


@register_jvp(tile_grad)
def tile_grad_jvp(r, g, a, reps):
    t[r] += tile_grad(t[g], a, reps)


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


# generated adjoints call repeat_grad: summing the copies is undone by repeating
@register_vjp(repeat_grad)
def repeat_grad_vjp(r, g, a, repeats, axis):
    d[g] += np.reshape(np.repeat(d[r], repeats, axis), np.shape(g))


@register_jvp(repeat_grad)
def repeat_grad_jvp(r, g, a, repeats, axis):
    t[r] += repeat_grad(t[g], a, repeats, axis)


@register_vjp(np.repeat)
def repeat(y, a, repeats, axis=None):
    d[a] += repeat_grad(d[y], a, repeats, axis)


@register_jvp(np.repeat)
def repeat_jvp(y, a, repeats, axis=None):
    t[y] += np.repeat(t[a], repeats, axis)


@register_jvp(np.copy)
def copy_jvp(y, a, order="K", subok=False):
    t[y] += t[a]


@register_jvp(np.ndarray.astype, dtype_aware=True)
def astype_jvp(y, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    t[y] += cast_tangent(t[a], y)


def cast_tangent(t, y):
    """A tangent in the float dtype of ``y``; zero when ``y`` is an integer or boolean cast."""
    dtype = getattr(y, "dtype", None)
    if dtype is not None and np.issubdtype(dtype, np.inexact):
        return np.asarray(t, dtype)
    return np.zeros(np.shape(y))


# index bookkeeping that generated adjoints call: no derivative flows through it
register_nondifferentiable(permutation_to, reason="it computes positions, axes, weights or an order")
