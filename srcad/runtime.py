"""Helpers that generated code calls. Each is small, documented and has rules of its own
(see ``srcad/rules/runtime_rules.py``), so generated code can itself be differentiated.

They are dispatch-clean: an array with NumPy's protocols (a Dask array, a CuPy array; see
``srcad.protocol``) is never converted to an ndarray. Shapes are read
from ``.shape``, new arrays are made with ``*_like`` functions of an array at hand, and
everything else goes through NumPy functions that dispatch to the array's own library.
"""
import math
import numbers

import numpy as np

from .errors import CotangentError, SrcadError, UnsupportedCaseError, not_scalar
from .protocol import as_array, copy_array, is_array, protocol_array, shape_of, size_of
from .pytrees import field_names, is_dataclass_instance, rebuilt

_CONTAINERS = (list, tuple, dict)
_REAL_SCALARS = (float, np.float64, np.float32)
_IMMUTABLE_SCALARS = _REAL_SCALARS + (int, bool, np.int64, np.bool_, complex, np.complex128)


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x`` (undoing NumPy broadcasting); ``g`` if it fits."""
    if g.__class__ in _REAL_SCALARS:
        return g  # a scalar adjoint: x was a scalar too
    if g.__class__ is not np.ndarray:
        if not protocol_array(g):
            if g.__class__ in (list, tuple) and len(g) != len(x):  # + or * of lists joins or repeats them
                raise SrcadError(_JOINED_SEQUENCES)
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


_JOINED_SEQUENCES = ("srcad does not differentiate + or * of lists or tuples that carry derivatives (they join or "
                     "repeat the sequences, not their items); build the sequence you mean with a display or a "
                     "comprehension ([*a, b] is refused too: [a[0], a[1], b]), or use arrays (np.concatenate)")


def _checked_shape(g, x):
    """``g`` if it has the shape of the array ``x``; otherwise an error, never a wrong shape."""
    if shape_of(g) != x.shape:
        raise SrcadError(f"srcad computed an adjoint of shape {shape_of(g)} for an array of shape {x.shape} "
                         f"({type(x).__module__}.{type(x).__qualname__}); this is a bug in srcad: please "
                         "report it with the function")
    return g


def _grad_dtype(x):
    dtype = getattr(x, "dtype", None)
    if dtype is not None and np.issubdtype(dtype, np.inexact):
        return dtype
    return np.float64


def zeros_like(x):
    """A zero adjoint for ``x``: float zeros of its shape (lists, tuples and dicts of them;
    a dict by field for a dataclass)."""
    if isinstance(x, dict):
        return {k: zeros_like(v) for k, v in x.items()}
    if isinstance(x, _CONTAINERS):
        return [zeros_like(v) for v in x]
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, _grad_dtype(x))
    if isinstance(x, range):  # a sequence like any other where a saved range's tangent is iterated
        return [0.0] * len(x)
    if protocol_array(x):
        return np.zeros_like(x, dtype=_grad_dtype(x))  # made where x lives
    if isinstance(x, np.generic):
        return np.dtype(_grad_dtype(x)).type(0)
    if is_dataclass_instance(x):
        return {name: zeros_like(getattr(x, name)) for name in field_names(x)}
    return 0.0


def cleared_slot(value):
    """What the slot of an adjoint holds after ``S[i] = value`` was reversed: zeros shaped like
    ``value`` if it is a list, tuple or dict (later adjoints add to it item by item), else 0
    (which adds to an item of any shape, also one that ``value`` replaced)."""
    return zeros_like(value) if isinstance(value, _CONTAINERS) else 0


def copy_grad(g):
    """A private copy of an adjoint so it can be updated in place."""
    if is_array(g):
        return copy_array(g)
    if isinstance(g, dict):
        return {k: copy_grad(v) for k, v in g.items()}
    if isinstance(g, _CONTAINERS):
        return [copy_grad(v) for v in g]
    return g


def grad_buffer(g):
    """``g`` as a buffer that may be written into: a number (the adjoint of a 0-d array after
    NumPy arithmetic, or a float cotangent) becomes a new 0-d array; arrays and containers
    are returned as they are."""
    if isinstance(g, (np.ndarray, *_CONTAINERS)):
        return g
    if protocol_array(g):
        return g if g.dtype.kind in "fc" else g.astype(np.float64)
    buffer = np.array(g)
    return buffer if buffer.dtype.kind in "fc" else buffer.astype(np.float64)


def container_grad(g, x):
    """The adjoint ``g`` of the list or tuple ``x`` laid out like ``x``: an array (the adjoint
    a NumPy function gives a list it took as an array) becomes a list of its rows, item by
    item like ``x``; any other ``g`` is returned as it is."""
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


def add_grads(a, b):
    """``a + b`` for adjoints, where None is zero and containers add item by item."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = add_grads(out.get(k), v)
        return out
    if isinstance(a, _CONTAINERS):
        return [add_grads(u, v) for u, v in zip(a, b, strict=True)]
    return a + b


def copy_value(v):
    """A snapshot of a value about to be overwritten in place (lists and dicts: shallow)."""
    if v.__class__ in _IMMUTABLE_SCALARS:  # the common case in scalar loops, without the checks below
        return v
    if isinstance(v, (np.ndarray, list, dict)):
        return v.copy()
    if protocol_array(v):  # a Dask array's __setitem__ rewrites the object in place
        return copy_array(v)
    return v


def as_real(x):
    """Integer arguments that are differentiated are treated as real (float64).

    Integer scalars inside a container stay integers: they may count or index (the trip
    counts and positions in the residuals of srcad's own code, which second order
    differentiates), and Python's arithmetic makes them real wherever they meet a float.
    """
    return _as_real(x, False)


def _as_real(x, inside):
    if is_array(x):
        return x if x.dtype.kind in "fc" else x.astype(np.float64)
    if isinstance(x, (bool, np.bool_)):
        return x
    if isinstance(x, numbers.Integral):
        return x if inside else float(x)
    if isinstance(x, _CONTAINERS):
        items = x.items() if isinstance(x, dict) else enumerate(x)
        if any(isinstance(v, (np.ndarray, *_CONTAINERS)) for _, v in items):
            if isinstance(x, dict):
                return {k: _as_real(v, True) for k, v in x.items()}
            items = [_as_real(v, True) for v in x]
            if hasattr(x, "_fields"):  # a namedtuple such as np.linalg.eigh's result
                return type(x)(*items)
            return type(x)(items)
    return x


def finish(g, x, shared=False):
    """The gradient returned for argument ``x``: its shape, its type, zeros for None.

    ``shared`` says ``g`` may be the caller's cotangent or another returned gradient: the
    caller then gets a copy, never an alias.
    """
    if (g.__class__ is np.ndarray and x.__class__ is np.ndarray and g.shape == x.shape
            and g.dtype == x.dtype and x.dtype.kind == "f" and g.base is None):
        return g.copy() if shared else g
    if g.__class__ is x.__class__ and x.__class__ in _REAL_SCALARS:  # immutable: nothing to copy
        return g
    return _finish(g, x, shared, True)


def _finish(g, x, shared, real_only):
    if real_only and (isinstance(x, (np.ndarray, np.generic, complex)) or protocol_array(x)) and np.iscomplexobj(x):
        raise UnsupportedCaseError("srcad differentiates real arguments only; this argument is complex")
    if g is None:
        g = zeros_like(x)
    if isinstance(x, dict):
        return {k: _finish(g.get(k) if isinstance(g, dict) else None, v, shared, real_only) for k, v in x.items()}
    if isinstance(x, _CONTAINERS):
        items = [_finish(gi, xi, shared, real_only) for gi, xi in zip(g, x)]
        if hasattr(x, "_fields"):  # a namedtuple such as np.linalg.slogdet's result
            return type(x)(*items)
        return tuple(items) if isinstance(x, tuple) else items
    if protocol_array(x) or (protocol_array(g) and isinstance(x, np.ndarray)):
        return _finish_protocol(g, x, shared)  # a gradient that depends on a Dask array stays one
    if isinstance(x, np.ndarray):
        g = np.asarray(g)
        if g.shape != x.shape:
            g = unbroadcast(np.broadcast_to(g, np.broadcast_shapes(g.shape, x.shape)), x)
            g = np.asarray(g)
        dtype = _grad_dtype(x)
        if g.dtype != dtype:
            g = g.astype(dtype)
        elif shared or not g.flags.writeable or g.base is not None:
            g = g.copy()  # never hand out the cotangent, a view of it or a read-only broadcast
        return g
    if protocol_array(g) and isinstance(x, (np.generic, numbers.Real)):
        return np.sum(g).astype(_grad_dtype(x))  # a 0-d Dask array: float() would compute it now
    if isinstance(x, np.generic):
        return np.dtype(_grad_dtype(x)).type(np.asarray(g).sum() if np.ndim(g) else g)
    if isinstance(x, (numbers.Real, bool)):
        return float(np.sum(g)) if np.ndim(g) else float(g)
    if is_dataclass_instance(x):  # its adjoint is a dict by field: the gradient is the same dataclass
        if is_dataclass_instance(g):  # a tangent given as the dataclass itself
            g = {k: getattr(g, k) for k in field_names(g)}
        grads = {k: _finish(g.get(k) if isinstance(g, dict) else None, getattr(x, k), shared, real_only)
                 for k in field_names(x)}
        return rebuilt(x, grads)
    return g


def _finish_protocol(g, x, shared):
    """``finish`` where ``x`` or its adjoint ``g`` is an array with NumPy's protocols: the
    result is such an array (lazy for a Dask array: nothing is computed here) of exactly
    ``x``'s shape; an ndarray or a number ``g`` for such an ``x`` is made where ``x`` lives."""
    dtype = _grad_dtype(x)
    if shape_of(g) != x.shape:
        g = unbroadcast(np.broadcast_to(g, np.broadcast_shapes(shape_of(g), x.shape)), x)
    if not protocol_array(g):  # a constant adjoint (a number, an ndarray): made where x lives
        g = np.zeros_like(x, dtype=dtype) + g
    elif shared:
        g = copy_array(g)
    if g.dtype != dtype:
        g = g.astype(dtype)
    return _checked_shape(g, x)


def finish_tangent(t, y, shared=False):
    """The tangent returned for output ``y``: its shape (a zero or scalar tangent broadcast to
    it), its type, never an alias of the caller's tangent when ``shared``. A tangent larger
    than its output is a rule's mistake: an error, not a silent sum."""
    if t is not None and not isinstance(y, _CONTAINERS):
        tshape, yshape = shape_of(t), shape_of(y)
        if tshape != yshape and np.broadcast_shapes(tshape, yshape) != yshape:
            raise ValueError(f"a tangent of shape {tshape} for an output of shape {yshape}")
    return _finish(t, y, shared, False)  # complex values too: split code returns saved intermediates


def cotangent(v, y):
    """Check a cotangent ``v`` against the output ``y`` and return it shaped like ``y``.

    ``v=None`` means 1 for a scalar output and is an error otherwise.
    """
    if v is None:
        if y.__class__ is float or y.__class__ is np.float64:
            return 1.0  # the common case: a scalar loss
        return default_cotangent(y)
    if v.__class__ is np.ndarray and y.__class__ is np.ndarray and v.shape == y.shape:
        return v
    if y.__class__ is range:  # a loop's range among a generated function's residuals: no derivative
        return v
    if isinstance(y, _CONTAINERS):
        if isinstance(y, dict):
            if not isinstance(v, dict) or set(v) != set(y):
                raise CotangentError(f"the output is a dict with keys {sorted(y)}; pass v as a dict with the same keys")
            return {k: _item_cotangent(v[k], y[k]) for k in y}
        if not isinstance(v, _CONTAINERS) or len(v) != len(y):
            raise CotangentError(
                f"the output is a {type(y).__name__} of {len(y)} values; pass v as a tuple of {len(y)} cotangents"
                " (None for an item that is not differentiated)")
        return [_item_cotangent(vi, yi) for vi, yi in zip(v, y)]
    yshape = shape_of(y)
    if isinstance(v, _CONTAINERS):
        raise _not_an_array(v, yshape)
    if protocol_array(y) and not protocol_array(v):
        v = _placed_like(v, y)
    vshape = shape_of(v)
    if vshape != yshape:
        if int(np.prod(vshape)) == 1 and int(np.prod(yshape)) == 1:
            return _one_value(v, yshape)
        raise CotangentError(
            f"the cotangent v has shape {vshape} but the output has shape {yshape}; "
            "pass v with the output's shape"
        )
    return v


def real_constant(value, message):
    """Raise unless ``value`` (a number, an array, or a list, tuple or dict of them) is real: a
    value srcad did not compute, read by a derivative that is right for real values only."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        if getattr(dtype, "kind", None) == "c":
            raise UnsupportedCaseError(message)
    elif isinstance(value, complex):
        raise UnsupportedCaseError(message)
    elif isinstance(value, (list, tuple)):
        for item in value:
            real_constant(item, message)
    elif isinstance(value, dict):
        for item in value.values():
            real_constant(item, message)


def _item_cotangent(v, y):
    # None for one item of a container output is zero there (a layer's cache, has_aux's aux)
    return zeros_like(y) if v is None else cotangent(v, y)


def _placed_like(v, y):
    """A number or ndarray cotangent ``v`` for a Dask or CuPy output ``y``, made where ``y``
    lives: every adjoint derived from it is then lazy (or on the device) too, and none is a
    NumPy buffer that a Dask value would be added into in place (NumPy refuses that)."""
    if math.prod(shape_of(v)) != 1 and shape_of(v) != y.shape:
        return v  # the wrong shape: the check that follows says so
    dtype = np.result_type(_grad_dtype(y), getattr(v, "dtype", np.float64))
    return np.reshape(np.zeros_like(y, dtype=dtype) + v, y.shape)


def full_of(shape, value):
    """``np.full(shape, value)``: new memory holding one adjoint value everywhere; for a
    Dask or CuPy ``value`` made by its own library (``np.full`` would compute it, and put it
    in host memory)."""
    if protocol_array(value):
        return copy_array(np.broadcast_to(value, shape))
    return np.full(shape, value)


def cotangent_like(v, shape, dtype):
    """``cotangent(v, y)`` for an output whose shape and dtype are known when the code is
    generated: the output itself need not be computed to check ``v``."""
    if shape == () and v.__class__ in _REAL_SCALARS:
        return v
    if v is None:
        if shape == () or math.prod(shape) == 1:
            return np.dtype(dtype).type(1) if not shape else np.ones(shape, dtype)
        raise CotangentError(not_scalar(f"shape {shape}"))
    if isinstance(v, _CONTAINERS):
        raise _not_an_array(v, shape)
    vshape = shape_of(v)
    if vshape == shape:
        return v
    if math.prod(vshape) == 1 and math.prod(shape) == 1:
        return _one_value(v, shape)
    raise CotangentError(f"the cotangent v has shape {vshape} but the output has shape {shape}; "
                         "pass v with the output's shape")


def _one_value(v, shape):
    """The cotangent ``v`` of one value reshaped to ``shape`` (a foreign array stays one)."""
    if shape or protocol_array(v):
        return np.reshape(v, shape)
    return np.asarray(v).reshape(())[()]


def _not_an_array(v, shape):
    # a list would add by concatenation: a cotangent for an array output must be an array
    return CotangentError(f"the output is an array of shape {shape} but the cotangent v is a {type(v).__name__}; "
                          "pass an array (np.asarray(v))")


def default_cotangent(y):
    """v = 1 for a scalar output; an error that says to pass v otherwise."""
    if isinstance(y, _CONTAINERS) or size_of(y) != 1:
        shape = f"a {type(y).__name__}" if isinstance(y, _CONTAINERS) else f"shape {shape_of(y)}"
        raise CotangentError(not_scalar(shape))
    if isinstance(y, np.ndarray):
        return np.ones(y.shape, y.dtype if y.dtype.kind in "fc" else np.float64)
    if protocol_array(y):
        return np.ones_like(y, dtype=y.dtype if y.dtype.kind in "fc" else np.float64)
    if isinstance(y, np.generic) and y.dtype.kind in "fc":
        return y.dtype.type(1)
    return 1.0


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


def _einsum_parse(subscripts, shapes):
    """Explicit per-operand letter strings and the output string, ellipses expanded."""
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    ins = ins.split(",")
    used = set("".join(ins).replace(".", ""))
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    ell_len = 0
    for term, shape in zip(ins, shapes):
        if "..." in term:
            ell_len = max(ell_len, len(shape) - (len(term) - 3))
    ell = "".join(free[:ell_len])
    expanded = []
    for term, shape in zip(ins, shapes):
        if "..." in term:
            n = len(shape) - (len(term) - 3)
            term = term.replace("...", ell[ell_len - n:] if n else "")
        expanded.append(term)
    if out is None:
        letters = "".join(expanded)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return expanded, out


def einsum_grad(subscripts, index, g, *operands):
    """The adjoint of operand ``index`` of ``np.einsum(subscripts, *operands)``."""
    operands = [as_array(o) for o in operands]
    ins, out = _einsum_parse(subscripts, [o.shape for o in operands])
    target = ins[index]
    others = [(t, o) for i, (t, o) in enumerate(zip(ins, operands)) if i != index]
    letters = "".join(dict.fromkeys(target))
    elsewhere = set(out).union(*(set(t) for t, _ in others))
    kept = "".join(c for c in letters if c in elsewhere)
    spec = ",".join([t for t, _ in others] + [out]) + "->" + kept
    grad = np.einsum(spec, *[o for _, o in others], g)
    sizes = {c: n for c, n in zip(target, operands[index].shape)}
    full = tuple(sizes[c] for c in letters)
    grad = np.broadcast_to(np.expand_dims(grad, tuple(i for i, c in enumerate(letters) if c not in elsewhere)), full)
    if len(letters) == len(target):
        return np.transpose(grad, [letters.index(c) for c in target]) if letters != target else grad
    result = np.zeros(operands[index].shape, np.result_type(grad.dtype, operands[index].dtype))
    np.einsum(target + "->" + letters, result)[...] = grad
    return result


def prod_grad(g, x, axis=None, keepdims=False):
    """The adjoint of ``np.prod(x, axis)``: products of all other factors (zeros included)."""
    x = as_array(x)
    g = sum_to_reduced(g, x, axis, keepdims)
    axes = tuple(range(x.ndim)) if axis is None else ((axis,) if np.ndim(axis) == 0 else tuple(axis))
    axes = tuple(a % x.ndim for a in axes) if x.ndim else ()
    rest = tuple(a for a in range(x.ndim) if a not in axes)
    moved = np.transpose(x, rest + axes)
    flat = moved.reshape(moved.shape[: len(rest)] + (-1,))
    ones = np.ones_like(flat[..., :1])  # where x lives
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], -1), -1)
    right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], -1), -1)[..., ::-1]
    others = (left * right).reshape(moved.shape)
    return g * np.transpose(others, tuple(np.argsort(rest + axes)))


def extremum_grad(g, x, y, axis=None, keepdims=False):
    """The adjoint of ``max``/``min`` over ``axis``: ties share the cotangent equally."""
    mask = x == expand_reduced(y, x, axis, keepdims)
    count = np.sum(mask, axis=axis, keepdims=True)
    return sum_to_reduced(g, x, axis, keepdims) * mask / count


def sum_grad(g, x):
    """The adjoint of the builtin ``sum(x)`` (over the first axis, or a list's items)."""
    if isinstance(x, (list, tuple)):
        return [g for _ in x]
    return np.broadcast_to(g, shape_of(x))


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
