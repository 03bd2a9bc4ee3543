"""The derivatives of particular NumPy operations that rules call in the code they generate
(re-exported by ``srcad.runtime``): reductions (``sum_to_reduced``, ``prod_grad``,
``extremum_grad``), products (``matmul_dx``/``matmul_dy``), and undoing
joins, transposes and traces.
"""
import numpy as np

from .errors import SrcadError
from .protocol import as_array, copy_array, protocol_array, shape_of, size_of
from .runtime_adjoints import JOINED_SEQUENCES, unbroadcast


def full_of(shape, value):
    """``np.full(shape, value)``: new memory holding one adjoint value everywhere; for a
    Dask or CuPy ``value`` made by its own library (``np.full`` would compute it, and put it
    in host memory)."""
    if protocol_array(value):
        return copy_array(np.broadcast_to(value, shape))
    return np.full(shape, value)


def moves(t):
    """Does the tangent ``t`` move: an array (``resting_zero`` masks its zeros element by
    element), or a number other than 0?"""
    return t.__class__ is np.ndarray or t != 0


def resting_zero(t, slope):
    """``slope`` where the tangent ``t`` is not exactly zero, and 0 where it is: an input that does
    not move moves nothing, also where the slope is infinite (``sqrt`` at 0 with a constant
    0.0 beside the array: 0 · ∞ would be NaN)."""
    if t.__class__ is not np.ndarray and np.ndim(t) == 0 and np.ndim(slope) == 0:
        return slope if t != 0 else 0.0
    return np.where(np.asarray(t) == 0, 0.0, slope)


def sum_to_reduced(g, x, axis, keepdims):
    """The adjoint of a reduction over ``axis``: ``g`` broadcast back to ``x``'s shape."""
    xshape = shape_of(x)
    if len(shape_of(g)) == 0:  # one value for every element (a scalar seed such as 1.0, or axis=None)
        if protocol_array(g) or protocol_array(x):
            return np.broadcast_to(g, xshape)  # np.full would compute a lazy g and put it in host memory
        return np.full(xshape, g)
    if axis is None:
        return np.broadcast_to(g, xshape)
    if not keepdims:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        ndim = len(xshape)
        g = np.expand_dims(g, tuple(a % ndim for a in axes))
    return np.broadcast_to(g, xshape)


def expand_reduced(r, x, axis, keepdims):
    """A reduction's result (or its adjoint) reshaped so it broadcasts against ``x``."""
    if axis is None or keepdims:
        return r
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    ndim = len(shape_of(x))
    return np.expand_dims(r, tuple(a % ndim for a in axes))


def unstack(g, axis=0):
    """The pieces that ``np.stack(pieces, axis)`` joined, as a list."""
    return list(np.moveaxis(g, axis, 0))


def matmul_dx(g, x, y):
    """The adjoint of ``x`` in ``x @ y`` (1-D operands and batch broadcasting included)."""
    return _matmul_grads(g, x, y, 0)


def matmul_dy(g, x, y):
    """The adjoint of ``y`` in ``x @ y``."""
    return _matmul_grads(g, x, y, 1)


def _matmul_grads(g, x, y, which):
    if x.__class__ is not np.ndarray or y.__class__ is not np.ndarray:
        x, y = as_array(x), as_array(y)
    if g.__class__ is not np.ndarray:
        g = as_array(g)
    if x.ndim == 2 and y.ndim == 2:
        return g @ y.T if which == 0 else x.T @ g
    if x.ndim == 1 and y.ndim == 1:
        return g * y if which == 0 else g * x
    if x.ndim == 2 and y.ndim == 1 and g.ndim == 1:  # matrix @ vector
        return np.multiply.outer(g, y) if which == 0 else x.T @ g
    if x.ndim == 1 and y.ndim == 2 and g.ndim == 1:  # vector @ matrix
        return y @ g if which == 0 else np.multiply.outer(x, g)
    x2 = x[None, :] if x.ndim == 1 else x
    y2 = y[:, None] if y.ndim == 1 else y
    if x.ndim == 1:
        g = np.expand_dims(g, -2)
    if y.ndim == 1:
        g = np.expand_dims(g, -1)
    if which == 0:
        grad = g @ np.swapaxes(y2, -1, -2)
        return unbroadcast(grad, x2).reshape(x.shape)
    grad = np.swapaxes(x2, -1, -2) @ g
    return unbroadcast(grad, y2).reshape(y.shape)


def reduction_groups(x, axis):
    """``(flat, ungroup)``: ``x`` with the axes a reduction over ``axis`` keeps first and the
    entries each of its outputs combines on one last axis, and ``ungroup(r)``, which puts an
    array shaped like ``flat`` back where those entries are in ``x``. The last axis is sized
    explicitly: NumPy cannot infer a -1 for an array with no entries."""
    axes = tuple(range(x.ndim)) if axis is None else ((axis,) if np.ndim(axis) == 0 else tuple(axis))
    axes = tuple(a % x.ndim for a in axes) if x.ndim else ()
    order = tuple(a for a in range(x.ndim) if a not in axes) + axes
    moved = np.transpose(x, order)
    kept = moved.shape[: x.ndim - len(axes)]
    flat = moved.reshape(kept + (-1,) if size_of(x) else kept + (int(np.prod(moved.shape[len(kept):])),))
    return flat, lambda r: np.transpose(np.reshape(r, moved.shape), tuple(np.argsort(order)))


def prod_grad(g, x, axis=None, keepdims=False):
    """The adjoint of ``np.prod(x, axis)``: products of all other factors (zeros included)."""
    x = as_array(x)
    g = sum_to_reduced(g, x, axis, keepdims)
    flat, ungroup = reduction_groups(x, axis)
    ones = np.ones_like(flat[..., :1])  # where x lives
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], -1), -1)
    right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], -1), -1)[..., ::-1]
    return g * ungroup(left * right)


def extremum_grad(g, x, y, axis=None, keepdims=False):
    """The adjoint of ``max``/``min`` over ``axis``: ties share the cotangent equally."""
    mask = x == expand_reduced(y, x, axis, keepdims)
    count = np.sum(mask, axis=axis, keepdims=True)
    return sum_to_reduced(g, x, axis, keepdims) * mask / count


def sum_grad(g, x):
    """The adjoint of the builtin ``sum(x)`` (over the first axis, or a list's items): ``g``
    summed down to each item's shape (a start value may broadcast the sum beyond it); refused
    for a sum that joined lists or tuples (``sum(groups, [])``), as ``+`` of them is."""
    if g.__class__ in (list, tuple):
        raise SrcadError(JOINED_SEQUENCES)
    if isinstance(x, (list, tuple)):
        return [unbroadcast(g, item) for item in x]
    shape = shape_of(x)
    return np.broadcast_to(unbroadcast(g, np.broadcast_to(0.0, shape[1:])), shape)


def transpose_back(g, axes):
    """Undo ``np.transpose(x, axes)`` (or ``x.transpose(*axes)``)."""
    if isinstance(axes, tuple) and len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        axes = axes[0]
    if axes is None or len(axes) == 0:
        return np.transpose(g)
    return np.transpose(g, tuple(np.argsort(axes)))


def concat_grad(g, pieces, axis=0):
    """Split the adjoint of ``np.concatenate(pieces, axis)`` into the pieces' adjoints."""
    if axis is None:
        flat = np.reshape(g, (-1,))
        ends = np.cumsum([size_of(p) for p in pieces]).tolist()
        return [np.reshape(flat[end - size_of(p):end], shape_of(p)) for end, p in zip(ends, pieces)]
    lead = (slice(None),) * (axis % len(shape_of(g)))  # slices, not np.split: Dask has no split
    ends = np.cumsum([shape_of(p)[axis] for p in pieces]).tolist()
    return [g[lead + (slice(end - shape_of(p)[axis], end),)] for end, p in zip(ends, pieces)]


def trace_grad(g, a, offset=0, axis1=0, axis2=1):
    """The adjoint of ``np.trace(a, offset, axis1, axis2)``: ``g`` on that diagonal."""
    a = as_array(a)
    moved = np.zeros(np.moveaxis(a, (axis1, axis2), (-2, -1)).shape, np.result_type(a.dtype, np.float64))
    rows, cols = moved.shape[-2:]
    i = np.arange(max(0, min(rows - max(0, -offset), cols - max(0, offset))))
    moved[..., i + max(0, -offset), i + max(0, offset)] = np.expand_dims(g, -1)
    return np.moveaxis(moved, (-2, -1), (axis1, axis2))
