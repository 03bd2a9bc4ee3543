"""Helpers the batched backward pass (``srcad.passes.batch``) calls.

A *batched* value holds one per-example value per cotangent along a new leading axis:
shape ``(B,) + s`` for per-example shape ``s``; it is always an ndarray. Each helper
computes, for every row, what its unbatched counterpart computes for that row's value.
A case a helper cannot do exactly raises ``Unbatchable``: the caller then pulls back
each cotangent on its own (never a guess).
"""
import numpy as np

from .errors import CotangentError
from .runtime_boundary import in_output_dtype
from .runtime_adjoints import _grad_dtype, rule_adjoint


class Unbatchable(Exception):
    """A batched helper met a case it does not compute exactly (the caller falls back)."""


def aligned(g, other):
    """Batched ``g`` with axes of length 1 after the batch axis, so that its per-example part
    broadcasts against the unbatched ``other`` as the unbatched value would (NumPy aligns
    trailing axes: without them the batch axis would meet one of ``other``'s)."""
    extra = (other.ndim if other.__class__ is np.ndarray else np.ndim(other)) - g.ndim + 1
    return g.reshape(g.shape[:1] + (1,) * extra + g.shape[1:]) if extra > 0 else g


def aligned_batched(g, other):
    """``aligned`` where ``other`` is batched too."""
    extra = other.ndim - g.ndim
    return g.reshape(g.shape[:1] + (1,) * extra + g.shape[1:]) if extra > 0 else g


def batched_factor(p, g):
    """An unbatched factor ``p`` of an in-place ``row *= p``: one that fits each row (NumPy
    would otherwise broadcast it against the batch axis)."""
    if np.ndim(p) > g.ndim - 1:
        raise Unbatchable("a factor with more dimensions than the adjoint")
    return p


def batched_cotangent(v, y):
    """The batched cotangent ``v`` checked against the output ``y`` (one row per cotangent)."""
    if not (v.__class__ is np.ndarray and (y.__class__ is np.ndarray or np.ndim(y) == 0)):
        raise Unbatchable("not an array output")
    return batched_cotangent_like(v, np.shape(y), getattr(y, "dtype", None))


def batched_cotangent_like(v, shape, dtype):
    if v.__class__ is not np.ndarray:
        raise Unbatchable("not an array cotangent")
    if v.shape[1:] != tuple(shape):
        raise CotangentError(f"the batched cotangents have shape {v.shape}; each row must have the output's "
                             f"shape {tuple(shape)}, so pass an array of shape (B,) + {tuple(shape)}")
    return v if dtype is None or not shape else in_output_dtype(v, dtype)


def batched_zeros(v, x):
    """Zero adjoints of ``x`` for every row of the batched cotangent ``v``."""
    if not (x.__class__ is np.ndarray or isinstance(x, (float, int, np.generic))):
        raise Unbatchable("a zero adjoint of a non-array")
    return np.zeros((v.shape[0],) + np.shape(x), _grad_dtype(x))


def batched_rule_adjoint(g, x, rule, shapes, operands):
    """``rule_adjoint`` of every row of ``g``: the check of one row's shape, then the sum."""
    if g.__class__ is np.ndarray and len(g):
        rule_adjoint(g[0], x, rule, shapes, operands)
    return batched_unbroadcast(g, x)


def batched_unbroadcast(g, x):
    """``unbroadcast`` of every row of ``g`` to the shape of ``x``."""
    if g.__class__ is not np.ndarray or isinstance(x, (list, tuple, dict)):
        raise Unbatchable("not an array adjoint")
    xshape = np.shape(x)
    if g.shape[1:] == xshape:
        return g
    extra = g.ndim - 1 - len(xshape)
    if extra > 0:  # axes broadcasting put in front of x's
        g = np.sum(g, axis=tuple(range(1, extra + 1)))
    elif extra < 0:
        g = aligned(g, np.broadcast_to(0.0, xshape))
    axes = tuple(i + 1 for i, n in enumerate(xshape) if n == 1 and g.shape[i + 1] != 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    target = g.shape[:1] + xshape
    return np.broadcast_to(g, target) if g.shape != target else g


def batched_finish(g, x, v, shared=False):
    """``finish`` for every row: a new array of shape ``(B,) + x.shape`` in ``x``'s gradient dtype
    (``None``: zeros), never a view of the cotangent."""
    if (g.__class__ is np.ndarray and x.__class__ is np.ndarray and g.shape[1:] == x.shape and g.dtype == x.dtype
            and x.dtype.kind == "f" and g.base is None and not shared):
        return g  # the common case: new memory of the right shape and dtype
    if not (x.__class__ is np.ndarray or isinstance(x, (float, int, np.generic))) or isinstance(x, bool) \
            or np.iscomplexobj(x):
        raise Unbatchable("a gradient that is not a real array or number")
    dtype = _grad_dtype(x)
    if g is None:
        return np.zeros((v.shape[0],) + np.shape(x), dtype)
    if g.__class__ is not np.ndarray:
        raise Unbatchable("a gradient that is not an ndarray")
    if g.shape[1:] != np.shape(x):
        wide = aligned(g, np.broadcast_to(0.0, np.shape(x)))
        full = g.shape[:1] + np.broadcast_shapes(wide.shape[1:], np.shape(x))
        g = batched_unbroadcast(np.broadcast_to(wide, full), x)
    if g.dtype != dtype:
        return g.astype(dtype)
    return g.copy() if shared or not g.flags.writeable or g.base is not None else g


def batched_sum(g, axis=None, keepdims=False):
    """``np.sum`` of every row: a per-example ``axis`` counts after the batch axis."""
    return np.sum(g, axis=_shifted(axis, g.ndim - 1), keepdims=keepdims)


def _shifted(axis, ndim):
    if axis is None:
        return tuple(range(1, ndim + 1))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % ndim + 1 for a in axes) if ndim else ()


def batched_sum_to_reduced(g, x, axis, keepdims):
    """``sum_to_reduced`` for every row: ``g``'s rows broadcast back to the shape of ``x``."""
    xshape = np.shape(x)
    target = g.shape[:1] + xshape
    if g.ndim == 1:  # one value per row for every element of x: new memory, as np.full
        return np.broadcast_to(g.reshape(g.shape + (1,) * len(xshape)), target).copy()
    if axis is None:
        return np.broadcast_to(aligned(g, np.broadcast_to(0.0, xshape)), target)
    wide = g if keepdims else np.expand_dims(g, _shifted(axis, len(xshape)))
    return np.broadcast_to(wide, target)


def batched_reshape(g, shape, order="C"):
    """``np.reshape`` of every row (C order only: another order mixes the batch axis in)."""
    if order != "C":
        raise Unbatchable("reshape in another order than C")
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    return np.reshape(g, g.shape[:1] + shape)


def batched_transpose(g, axes=None):
    """``np.transpose`` (``.T`` when ``axes`` is None) of every row."""
    n = g.ndim - 1
    order = tuple(range(n - 1, -1, -1)) if axes is None else tuple(int(a) % n for a in axes)
    return np.transpose(g, (0,) + tuple(a + 1 for a in order))


def _array(p):
    if p.__class__ is np.ndarray:
        return p
    if not isinstance(p, (int, float, np.generic, list, tuple)):
        raise Unbatchable("a matmul operand that is not an ndarray")  # a Dask array: its own rules
    return np.asarray(p)


def batched_matmul_left(p, g):
    """``p @ row`` for every row of ``g`` (``p`` unbatched)."""
    p = _array(p)
    n = g.ndim - 1
    if p.ndim == 2 and n == 1:
        return g @ p.T
    if p.ndim == 2 and n == 2:
        return np.matmul(p, g)
    if p.ndim == 1 and n == 1:
        return g @ p
    raise Unbatchable("matmul with these dimensions")


def batched_vdot_left(g, p):
    """``np.vdot(row, p)`` for every row of ``g`` (``p`` unbatched, as large as a row)."""
    p = _array(p)
    rows = g.reshape(g.shape[0], -1)
    if rows.shape[1] != p.size:
        raise Unbatchable("vdot of arrays of different sizes")
    return np.conj(rows) @ p.ravel()


def batched_vdot_right(p, g):
    """``np.vdot(p, row)`` for every row of ``g`` (``p`` unbatched, as large as a row)."""
    p = _array(p)
    rows = g.reshape(g.shape[0], -1)
    if rows.shape[1] != p.size:
        raise Unbatchable("vdot of arrays of different sizes")
    return rows @ np.conj(p).ravel()


def batched_matmul_right(g, p):
    """``row @ p`` for every row of ``g``."""
    p = _array(p)
    n = g.ndim - 1
    if p.ndim == 2 and n in (1, 2):
        return g @ p
    if p.ndim == 1 and n == 1:
        return g @ p
    if p.ndim == 1 and n == 2:
        return g @ p
    raise Unbatchable("matmul with these dimensions")


def batched_matmul_dx(g, x, y):
    """``runtime.matmul_dx`` for every row of ``g``: the adjoint of ``x`` in ``x @ y``."""
    x, y = _array(x), _array(y)
    if x.ndim == 2 and y.ndim == 2:
        return batched_matmul_right(g, y.T)
    if x.ndim == 1 and y.ndim == 2:
        return g @ y.T
    if x.ndim == 2 and y.ndim == 1:
        return g[:, :, None] * y
    if x.ndim == 1 and y.ndim == 1:
        return g[:, None] * y
    raise Unbatchable("matmul with these dimensions")


def batched_matmul_dy(g, x, y):
    """``runtime.matmul_dy`` for every row of ``g``: the adjoint of ``y`` in ``x @ y``."""
    x, y = _array(x), _array(y)
    if x.ndim == 2 and y.ndim == 2:
        return batched_matmul_left(x.T, g)
    if x.ndim == 2 and y.ndim == 1:
        return g @ x
    if x.ndim == 1 and y.ndim == 2:
        return g[:, None, :] * x[:, None]
    if x.ndim == 1 and y.ndim == 1:
        return g[:, None] * x
    raise Unbatchable("matmul with these dimensions")


def batched_where(condition, g, other):
    """``np.where(condition, row, other)`` for every row of ``g`` (``other`` unbatched)."""
    g = aligned(aligned(g, condition), other)
    return np.where(condition, g, other)


def batched_where_else(condition, other, g):
    """``np.where(condition, other, row)`` for every row of ``g`` (``other`` unbatched)."""
    g = aligned(aligned(g, condition), other)
    return np.where(condition, other, g)


def batched_index_part(part):
    """One part of a per-example index, if it addresses the same positions in every row
    (an integer, a slice, None, Ellipsis); an array, a list or a tuple raises ``Unbatchable``."""
    if part is None or part is Ellipsis or isinstance(part, slice) or _is_integer(part):
        return part
    raise Unbatchable("an index that is not basic")


def _is_integer(p):
    return isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_))


def batched_left(op, g, other):
    """``op(row, other)`` for every row of ``g``."""
    return op(aligned(g, other), other)


def batched_right(op, other, g):
    """``op(other, row)`` for every row of ``g``."""
    return op(other, aligned(g, other))


def batched_both(op, a, b):
    """``op(row of a, row of b)`` row by row."""
    return op(aligned_batched(a, b), aligned_batched(b, a))


def batched_add_grads(a, b):
    """``add_grads`` row by row (None is zero; both batched arrays)."""
    if a is None:
        return b
    if b is None:
        return a
    return batched_both(np.add, a, b)


def batched_store(buffer, index, g):
    """``buffer[index] = row`` for every row (``index`` already has the batch axis first)."""
    region = buffer[index]
    buffer[index] = aligned_batched(g, region)


def batched_add_at(buffer, index, g):
    """``buffer[index] += row`` for every row, at a basic index (a view: no repeated positions)."""
    region = buffer[index]
    region += aligned_batched(g, region)


def batched_subtract_at(buffer, index, g):
    """``buffer[index] -= row`` for every row, at a basic index."""
    region = buffer[index]
    region -= aligned_batched(g, region)


def batched_expand_reduced(r, x, axis, keepdims):
    """``expand_reduced`` of every row: a reduction's adjoint shaped to broadcast against ``x``."""
    if axis is None or keepdims:
        return aligned(r, np.broadcast_to(0.0, np.shape(x)))
    return np.expand_dims(r, _shifted(axis, len(np.shape(x))))


def batched_transpose_back(g, axes):
    """``transpose_back`` of every row: undo ``np.transpose(x, axes)``."""
    if isinstance(axes, tuple) and len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        axes = axes[0]
    if axes is None or len(axes) == 0:
        return batched_transpose(g)
    return batched_transpose(g, tuple(np.argsort(axes)))


def batched_full_of(shape, g):
    """``full_of(shape, row)`` for every row: new memory."""
    shape = tuple(shape)
    return np.array(np.broadcast_to(aligned(g, np.broadcast_to(0.0, shape)), g.shape[:1] + shape))


def batched_broadcast_to(g, shape):
    """``np.broadcast_to(row, shape)`` for every row (a read-only view, as NumPy's)."""
    shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
    return np.broadcast_to(aligned(g, np.broadcast_to(0.0, shape)), g.shape[:1] + shape)


def batched_broadcast_like(g, y):
    """``broadcast_like(row, y)`` for every row: the row broadcast to the shape of ``y``."""
    return g if g.shape[1:] == np.shape(y) else batched_broadcast_to(g, np.shape(y))


def batched_stored_adjoint(g, index, value):
    """``stored_adjoint(row, index, value)`` for every row, at a basic index (every position
    written once: the region's adjoint, copied, summed to the value's shape)."""
    parts = index if isinstance(index, tuple) else (index,)
    region = g[(slice(None),) + tuple(batched_index_part(p) for p in parts)]
    return batched_unbroadcast(region.copy(), value)


def batched_container_grad(g, x):
    """``container_grad(row, x)`` for an ``x`` that is no list or tuple: the row as it is."""
    if isinstance(x, (list, tuple)):
        raise Unbatchable("the adjoint of a list or tuple")
    return g


def batched_cleared_slot(value):
    """``cleared_slot``: 0 in every row (a container slot's zeros are not batched)."""
    if isinstance(value, (list, tuple, dict)):
        raise Unbatchable("a cleared container slot")
    return 0


def batched_scatter_add(buffer, index, g):
    """``scatter_add(buffer, index, row)`` for every row, at a basic index only (an integer
    array index would need the batch axis placed by NumPy's advanced-indexing rules)."""
    if buffer.__class__ is not np.ndarray:
        raise Unbatchable("a buffer that is not an array")
    parts = index if isinstance(index, tuple) else (index,)
    batched_add_at(buffer, (slice(None),) + tuple(batched_index_part(p) for p in parts), g)
