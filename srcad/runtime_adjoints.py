"""Adjoints inside generated code (re-exported by ``srcad.runtime``): summing a broadcast
adjoint back to its operand's shape, zeros and private copies to update in place, adding
adjoints (None is zero; lists, tuples and dicts add item by item), and accumulating into
a buffer at (possibly repeated) positions.
"""
import numpy as np

from .errors import SrcadError, UnsupportedCaseError
from .protocol import copy_array, is_array, protocol_array, shape_of, size_of
from .pytrees import by_field, field_names, is_dataclass_instance

_CONTAINERS = (list, tuple, dict)
_REAL_SCALARS = (float, np.float64, np.float32)
_IMMUTABLE_SCALARS = _REAL_SCALARS + (int, bool, np.int64, np.bool_, complex, np.complex128)


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x`` (undoing NumPy broadcasting); ``g`` if it fits."""
    if g.__class__ in _REAL_SCALARS:
        return g  # a scalar adjoint: x was a scalar too
    if g.__class__ is not np.ndarray:
        if not protocol_array(g):
            if g.__class__ in (list, tuple) and x is not None and len(g) != len(x):  # + or * of lists joins or repeats them
                raise SrcadError(JOINED_SEQUENCES)
            return g  # a scalar adjoint: x was a scalar too
    elif x.__class__ is np.ndarray and g.shape == x.shape:
        return g
    gshape = g.shape
    xshape = shape_of(x)
    if gshape == xshape:
        return g
    extra = len(gshape) - len(xshape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(xshape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    if not xshape:
        return g[()] if isinstance(g, np.ndarray) else g
    return np.broadcast_to(g, xshape) if g.shape != xshape else g


JOINED_SEQUENCES = ("srcad does not differentiate + or * of lists or tuples that carry derivatives (they join or "
                     "repeat the sequences, not their items); build the sequence you mean with a display or a "
                     "comprehension ([*a, b] is refused too: [a[0], a[1], b]), or use arrays (np.concatenate)")


def _grad_dtype(x):
    dtype = getattr(x, "dtype", None)
    if getattr(dtype, "kind", None) in ("f", "c"):  # np.issubdtype(dtype, np.inexact), without its cost
        return dtype
    return np.float64


def in_place_cast(g, y):
    """``g``, the adjoint or tangent of ``old op e``, as that of ``y = in_place_result(...)``:
    in ``y``'s dtype where ``y`` is a float array (NumPy's in-place update casts), zero where
    it holds integers or booleans, as it is for anything else (a number, a list: rebound)."""
    if y.__class__ is not np.ndarray or g is None:
        return g
    if y.dtype.kind in "fc":
        return g if getattr(g, "dtype", None) == y.dtype else np.asarray(g, y.dtype)
    return into_dtype_of(g, y)


def into_dtype_of(g, target):
    """The adjoint (or tangent) ``g`` of a value stored into ``target``; zero where ``target``
    holds integers or booleans: the store truncated the value, which is piecewise constant."""
    kind = getattr(getattr(target, "dtype", None), "kind", "f")
    return g if kind in "fcO" or g is None else zeros_like(g)


def zeros_like(x):
    """A zero adjoint for ``x``: float zeros of its shape (lists, tuples and dicts of them;
    a dict by field for a dataclass)."""
    if x.__class__ is np.float64:  # the common item of a tuple result (slogdet's pair), first
        return np.float64(0.0)
    if x.__class__ is float:  # a scalar loop's cotangent (a soft-minimum's cells): no other test
        return 0.0
    if isinstance(x, dict):
        return {k: zeros_like(v) for k, v in x.items()}
    if isinstance(x, _CONTAINERS):  # a None item (a zero item of an adjoint: none_items) stays None
        return [None if v is None else zeros_like(v) for v in x]
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, _grad_dtype(x))
    if isinstance(x, np.flatiter):  # x.flat, whose rule is np.ravel's: zeros of its array's size
        return np.zeros(x.base.size, _grad_dtype(x.base))
    if isinstance(x, range):  # a sequence like any other where a saved range's tangent is iterated
        return [0.0] * len(x)
    if protocol_array(x):
        return np.zeros_like(x, dtype=_grad_dtype(x))  # made where x lives
    if isinstance(x, np.generic):
        return np.dtype(_grad_dtype(x)).type(0)
    if is_dataclass_instance(x):
        return {name: zeros_like(getattr(x, name)) for name in field_names(x)}
    return 0.0


def item_grad(g, i, y):
    """Item ``i`` of the adjoint of a tuple-valued result ``y`` (zeros if it has none).

    Rules read a tuple result's adjoint only through it, so where every read of the result
    is an item by a literal index, the reverse pass keeps one adjoint per item and puts
    that item's adjoint in place of the call (``reverse_stores``)."""
    gi = None if g is None else g[i]
    if gi is None:
        return zeros_like(y[i])
    if np.shape(gi) != np.shape(y[i]):
        return np.broadcast_to(gi, np.shape(y[i]))
    return gi


def none_items(x):
    """The zero adjoint of what a Python function returned, before its items are added to: a
    None per item of a tuple or list (the callee's backward skips a None item, see
    ``cotangent_items``), zeros for anything else."""
    if isinstance(x, (tuple, list)):
        return [None] * len(x)
    return zeros_like(x)


def cleared_slot(value):
    """What the slot of an adjoint holds after ``S[i] = value`` was reversed: zeros shaped like
    ``value`` if it is a list, tuple or dict (later adjoints add to it item by item), else 0
    (which adds to an item of any shape, also one that ``value`` replaced)."""
    return zeros_like(value) if isinstance(value, _CONTAINERS) else 0


def copy_grad(g):
    """A private copy of an adjoint so it can be updated in place; a helper's derivative for a
    dataclass object (a dataclass object of derivatives) as the adjoint code lays such an
    adjoint out, a dict by field (``zeros_like``)."""
    if is_array(g):
        return copy_array(g)
    if isinstance(g, dict):
        return {k: copy_grad(v) for k, v in g.items()}
    if isinstance(g, _CONTAINERS):
        return [copy_grad(v) for v in g]
    if is_dataclass_instance(g):
        return copy_grad(by_field(g))
    return g


def grad_buffer(g):
    """``g`` as a buffer that may be written into: a number (the adjoint of a 0-d array after
    NumPy arithmetic, or a float cotangent) becomes a new 0-d array; arrays and containers
    are returned as they are."""
    if isinstance(g, (np.ndarray, *_CONTAINERS)):
        return g
    if is_dataclass_instance(g):  # a helper's derivative for a dataclass object: a dict by field
        return copy_grad(g)
    if protocol_array(g):
        return g if g.dtype.kind in "fc" else g.astype(np.float64)
    buffer = np.array(g)
    return buffer if buffer.dtype.kind in "fc" else buffer.astype(np.float64)


def container_grad(g, x):
    """The adjoint ``g`` of the list or tuple ``x`` laid out like ``x``: an array (the adjoint
    a NumPy function gives a list it took as an array) becomes a list of its rows, item by
    item like ``x``; a dataclass (what a helper's derivative returns for one) becomes the dict
    by field adjoints of dataclasses are kept in, and such a dict gets every field of ``x``
    (zeros where nothing reached it); any other ``g`` is returned as it is."""
    if is_dataclass_instance(g):
        return by_field(g)
    if isinstance(g, dict) and is_dataclass_instance(x):  # fields no read reached: zero, for a helper's cotangent
        return {n: zeros_like(getattr(x, n)) if g.get(n) is None else g[n] for n in field_names(x)}
    if is_array(g) and isinstance(x, (list, tuple)):
        if len(g) != len(x):
            raise ValueError(f"an adjoint of length {len(g)} for a container of length {len(x)}")
        return [container_grad(gi, xi) for gi, xi in zip(g, x)]
    return g


def stacked_grad(g, like):
    """The inverse of ``container_grad``: ``g`` stacked back into an array where ``like`` is one."""
    if like.__class__ is np.ndarray and isinstance(g, (list, tuple)):
        return np.reshape(np.array([stacked_grad(gi, li) for gi, li in zip(g, like)]), like.shape)
    if protocol_array(like) and isinstance(g, (list, tuple)):
        rows = [stacked_grad(gi, li) for gi, li in zip(g, like)]
        return np.reshape(np.stack([np.broadcast_to(r, shape_of(li)) for r, li in zip(rows, like)]), like.shape)
    return g


def tangent_or_zero(ta, a, y):
    """The tangent ``ta`` of the adjoint ``a``, or zeros like ``y`` where ``a`` is None (a
    zero adjoint, whose tangent is a scalar zero): forward mode over ``add_grads``."""
    return zeros_like(y) if a is None else ta


def rule_tangent(t, y, rule):
    """The tangent ``t`` a jvp rule of yours (named ``rule``) writes into ``t[y]``: of ``y``'s
    shape, or one that broadcasts to it (a number for an array); a larger one (an array for a
    number) is a mistake in the rule, which would broadcast into everything ``y`` meets."""
    if t is None or isinstance(y, _CONTAINERS) or isinstance(t, _CONTAINERS):
        return t
    tshape, yshape = shape_of(t), shape_of(y)
    if tshape != yshape:
        try:
            fits = np.broadcast_shapes(tshape, yshape) == yshape
        except ValueError:
            fits = False
        if not fits:
            raise UnsupportedCaseError(
                f"the jvp rule {rule} writes a tangent of shape {tshape} into t[...] of a value of shape "
                f"{yshape}: a tangent has its value's shape (sum or index it down in the rule)")
    return t


def rule_adjoint(g, x, rule, shapes, operands):
    """``unbroadcast(g, x)`` for what a vjp rule of yours (``rule`` names it) adds into an
    adjoint: summed only over axes that broadcasting ``x`` against one of the call's operands
    or results can have made (``d[s] += d[y] * y / s`` for a scalar ``s``). An axis none of
    them has (``d[x] += d[y][:, None] * x`` for a vector ``x``) is a mistake in the rule that
    the sum would hide; refused. ``shapes``: the operands' shapes known when the code was
    generated; ``operands``: the others, read now."""
    if isinstance(g, (list, tuple)) and not isinstance(x, _CONTAINERS) and not _rows_of(g, np.shape(x)):
        raise UnsupportedCaseError(
            f"the vjp rule {rule} adds a {type(g).__name__} of {len(g)} items into the adjoint of a value of shape "
            f"{np.shape(x)}, whose rows they are not: an adjoint has its value's shape (index the items of a "
            f"tuple or list cotangent: d[y][0])")
    if is_array(g) and not isinstance(x, _CONTAINERS):
        gshape, xshape = shape_of(g), shape_of(x)
        if gshape != xshape and not _summed_by_broadcasting(gshape, xshape, list(shapes) + _shapes(operands)):
            raise UnsupportedCaseError(
                f"the vjp rule {rule} adds a cotangent of shape {gshape} into the adjoint of a value of shape "
                f"{xshape}, and no operand or result of the call has the axes that would be summed away: an "
                f"adjoint has its value's shape (sum or index it down in the rule)")
    return unbroadcast(g, x)


def _rows_of(items, shape):
    """Are ``items`` (None for zero) the rows of an array of ``shape``?"""
    if not shape or len(items) != shape[0]:
        return False
    return all(item is None or (_rows_of(item, shape[1:]) if isinstance(item, (list, tuple))
                                else not isinstance(item, dict) and np.shape(item) == shape[1:]) for item in items)


def _shapes(values):
    out = []
    for value in values:
        if isinstance(value, dict):
            out.extend(_shapes(value.values()))
        elif isinstance(value, _CONTAINERS):
            out.extend(_shapes(value))
        elif is_array(value):
            out.append(shape_of(value))
    return out


def _summed_by_broadcasting(gshape, xshape, shapes):
    """Could NumPy have broadcast a value of ``xshape`` to ``gshape`` against values of ``shapes``?"""
    for k in range(1, len(gshape) + 1):
        n, m = gshape[-k], (xshape[-k] if k <= len(xshape) else None)
        if n == m or n == 1:
            continue
        if m not in (None, 1) or not any(len(s) >= k and s[-k] == n for s in shapes):
            return False
    return True


def add_grads(a, b):
    """``a + b`` for adjoints, where None is zero and containers add item by item."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict):
        out = dict(a)
        for k, v in (b if isinstance(b, dict) else by_field(b)).items():  # a helper's derivative: a dataclass
            out[k] = add_grads(out.get(k), v)
        return out
    if isinstance(a, _CONTAINERS):
        return [add_grads(u, v) for u, v in zip(a, b, strict=True)]
    if is_dataclass_instance(a):
        return add_grads(by_field(a), b)
    return a + b


# a loop saving at least this many values keeps them in a float64 array (8 bytes each, not a
# 32-byte NumPy scalar and an 8-byte list slot); a shorter one keeps a list, whose item reads
# and writes cost a third of an array's
LONG_LOOP = 2 ** 14


def value_stack(n):
    """Storage for the ``n`` float64 scalars a loop saves, one per trip, written and read back
    by trip number (``passes.array_stacks``): an array for a long loop, a list for a short one."""
    return np.empty(n) if n >= LONG_LOOP else [None] * n


def copy_value(v):
    """A snapshot of a value about to be overwritten in place (lists and dicts: shallow)."""
    if v.__class__ in _IMMUTABLE_SCALARS:  # the common case in scalar loops, without the checks below
        return v
    if isinstance(v, (np.ndarray, list, dict)):
        return v.copy()
    if protocol_array(v):  # a Dask array's __setitem__ rewrites the object in place
        return copy_array(v)
    return v


def scatter_add(buffer, index, g):
    """``buffer[index] += g`` where repeated integer indices accumulate; an item of a list,
    tuple or dict adds like one (``+=`` would concatenate a list)."""
    if protocol_array(buffer):
        if _has_int_array(index):  # a[i] = a[i] + g would keep one of repeated positions
            raise UnsupportedCaseError(
                f"srcad cannot accumulate an adjoint into a {type(buffer).__module__}.{type(buffer).__qualname__} "
                "at integer-array positions (no np.add.at for it); index with slices, or pass NumPy arrays")
        buffer[index] = buffer[index] + g
    elif not isinstance(buffer, np.ndarray):
        buffer[index] = add_grads(buffer[index], g)
    elif _has_int_array(index):
        np.add.at(buffer, index, g)
    else:
        buffer[index] += g


def stored_adjoint(g, index, value):
    """The adjoint of ``value`` in ``S[index] = value``, from ``g`` (the adjoint of ``S``).

    With repeated positions in an integer-array index NumPy keeps one write per position;
    only the values it kept get their slot's adjoint, the others get zero."""
    region = g[index]
    if not _has_int_array(index):
        return unbroadcast(copy_value(region), value)
    ids = np.arange(size_of(region)).reshape(shape_of(region))
    marker = np.full(shape_of(g), -1)
    marker[index] = ids
    kept = marker[index] == ids
    return unbroadcast(np.where(kept, region, 0.0), value)


def _has_int_array(index):
    parts = index if isinstance(index, tuple) else (index,)
    for p in parts:
        if isinstance(p, (list, np.ndarray)) and np.asarray(p).dtype.kind in "iu":
            return True
        if protocol_array(p) and p.dtype.kind in "iu":
            return True
    return False
