"""Where generated code meets its caller (re-exported by ``srcad.runtime``): arguments
coming in (differentiated integers made real, values srcad did not compute checked real, or numbers
and arrays where an operator reads them),
the cotangent checked against the output (``cotangent``, ``cotangent_like``,
``default_cotangent``), and gradients and tangents going out with their argument's shape,
type and dtype, never aliasing the caller's arrays (``finish``, ``finish_tangent``).
"""
import math
import numbers

import numpy as np

from .errors import CotangentError, SrcadError, UnsupportedCaseError, not_scalar
from .protocol import copy_array, is_array, protocol_array, shape_of, size_of
from .pytrees import by_field, field_names, is_dataclass_instance, rebuilt, remade
from .runtime_adjoints import _CONTAINERS, _REAL_SCALARS, _grad_dtype, unbroadcast, zeros_like


def _checked_shape(g, x):
    """``g`` if it has the shape of the array ``x``; otherwise an error, never a wrong shape."""
    if shape_of(g) != x.shape:
        raise SrcadError(f"srcad computed an adjoint of shape {shape_of(g)} for an array of shape {x.shape} "
                         f"({type(x).__module__}.{type(x).__qualname__}); this is a bug in srcad: please "
                         "report it with the function")
    return g


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
                return remade(x, items)
            return type(x)(items)
    return x


_FLOAT64 = np.dtype(np.float64)
_NATIVE_FLOATS = tuple(np.dtype(t) for t in (np.float64, np.float32, np.float16, np.longdouble))


def finish(g, x, shared=False):
    """The gradient returned for argument ``x``: its shape, its type, zeros for None.

    ``shared`` says ``g`` may be the caller's cotangent or another returned gradient: the
    caller then gets a copy, never an alias.
    """
    if g.__class__ is np.ndarray and x.__class__ is np.ndarray:
        dtype = x.dtype  # the common call first: the same (interned) float dtype, the same shape
        if g.dtype is dtype and dtype in _NATIVE_FLOATS and g.shape == x.shape and g.base is None:
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
            return remade(x, items)
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
            g = by_field(g)
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
        return v if v.dtype is y.dtype else in_output_dtype(v, y.dtype)
    if y.__class__ is range:  # a loop's range among a generated function's residuals: no derivative
        return v
    if is_dataclass_instance(y):  # its adjoint is a dict by field (a gradient's gradient, differentiated again)
        if is_dataclass_instance(v):
            v = by_field(v)
        if not isinstance(v, dict) or set(v) != set(field_names(y)):
            raise CotangentError(f"the output is a {type(y).__name__}; pass v as a {type(y).__name__} or a dict "
                                 f"by field ({', '.join(field_names(y))})")
        return {k: _item_cotangent(v[k], getattr(y, k)) for k in field_names(y)}
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
    return in_output_dtype(v, y.dtype) if yshape and hasattr(v, "dtype") and hasattr(y, "dtype") else v


def cotangent_items(v, y, primal=None):
    """``cotangent(v, y)`` for an output built as a tuple or list display: an item of ``v``
    that is None stays None, a zero the reverse sweep skips (so an infinite intermediate that
    feeds only that item gives 0, not 0 · inf = NaN). ``primal``: where ``v`` is the tangent
    of a cotangent (forward mode over the reverse sweep), that cotangent, whose None items
    are None here too."""
    if isinstance(y, (tuple, list)) and isinstance(v, (tuple, list)) and len(v) == len(y):
        skip = primal if isinstance(primal, (tuple, list)) and len(primal) == len(y) else v
        return [None if vi is None or si is None else cotangent(vi, yi) for vi, si, yi in zip(v, skip, y)]
    return cotangent(v, y)


def in_place_result(new, old):
    """What ``old op= e`` leaves where ``old`` is an array, which NumPy updates in place:
    ``new`` (srcad's ``old op e``) in ``old``'s dtype, or NumPy's error where its in-place
    update fails (a result of another shape; a cast that is not ``same_kind``, such as a
    float into an integer array). Anything else (a number, a tuple, a list) is rebound: ``new``."""
    if old.__class__ is not np.ndarray:
        return new
    shape, dtype = np.shape(new), np.result_type(new)
    if shape != old.shape:
        raise ValueError(f"non-broadcastable output operand with shape {old.shape} doesn't match the broadcast "
                         f"shape {shape} (an augmented assignment updates the array in place)")
    if dtype == old.dtype:
        # a 0-d array stays one (srcad's ``old op e`` is a NumPy scalar): ``old[...] = v`` after it
        return new if old.ndim or new.__class__ is np.ndarray else np.asarray(new)
    if not np.can_cast(dtype, old.dtype, "same_kind"):
        raise TypeError(f"Cannot cast ufunc output from {dtype!r} to {old.dtype!r} with casting rule 'same_kind' "
                        "(an augmented assignment updates the array in place)")
    return np.asarray(new).astype(old.dtype)


def inexact_result(value, message):
    """Raise unless ``value`` is a float or complex number or array: the result of a call given
    a ``dtype`` that its derivative rule does not take into account (an integer result would
    get the rule's derivative, where its true one is zero)."""
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    if kind is None and isinstance(value, (bool, int)) or kind is not None and kind not in "fc":
        raise UnsupportedCaseError(message)


def read_again(items, where, reversed_here=False):
    """Raise if ``items`` is a one-pass iterator (a generator, ``map``, ``iter(L)``: its own
    iterator), which a loop that may stop early (at ``where``, ``file:line``), or ``zip`` with
    a shorter sequence, reads only in part in Python, where srcad reads all of it first.
    ``reversed_here``: ``items`` is what a ``reversed(...)`` in the loop's header reverses; no
    one else reads that iterator, and it reads a list, tuple, range or array by index only."""
    if iter(items) is items or reversed_here and not isinstance(items, (list, tuple, range, np.ndarray)):
        what = (f"reversed(...) of a {type(items).__name__}" if reversed_here and iter(items) is not items
                else "a one-pass iterator (a generator, map(...), iter(...))")
        raise UnsupportedCaseError(
            f"{where}: this loop may stop before the end of what it iterates, here {what}: Python reads it only up "
            "to where the loop stops, srcad reads all of it first; iterate over a list (list(...)) instead")


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


_NUMBER_METHODS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
                   "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__neg__", "__pos__",
                   "__abs__", "__float__", "__int__", "__index__", "__array__", "__array_ufunc__", "__array_priority__")


def plain_number_class(cls):
    """Does ``cls``, a subclass of ``float``, ``int`` or ``bool``, compute with the base type's
    own operators (an ``IntEnum``), defining none of its own nor NumPy's protocols?"""
    base = float if issubclass(cls, float) else int
    return all(getattr(cls, name, None) is getattr(base, name, None) for name in _NUMBER_METHODS)


def numeric_constant(value, subject, complex_message=None):
    """Raise unless ``value`` is a number or array whose operators srcad's rules are the
    derivatives of: exactly ``np.ndarray`` (a subclass such as ``np.matrix`` or a masked array
    redefines them), a NumPy scalar, ``float``, ``int`` or ``bool`` (a subclass only with their
    own operators, ``plain_number_class``), an array with
    NumPy's protocols (Dask, CuPy), of a numeric dtype, or a list or tuple of them; complex
    unless ``complex_message`` is given. A dtype, a string, None, a slice, a class or function
    (of Python's own types or NumPy's) are let through: NumPy reads them as parameters
    (``x.astype(opts.dtype)``), and an operator on one and a number raises, as in Python.
    ``subject`` (``"file:12: 'self.sched'"``) names a value srcad did not compute that an
    operator it differentiates reads."""
    cls = value.__class__
    if cls is np.ndarray:
        kind = value.dtype.kind
    elif cls is float or cls is int or cls is bool or isinstance(value, (float, int)) and plain_number_class(cls):
        return  # (an IntEnum: int's own operators)
    elif isinstance(value, np.generic) and cls.__module__ == "numpy" or protocol_array(value):
        kind = value.dtype.kind
    elif cls is complex:
        kind = "c"
    elif cls is list or cls is tuple:
        for item in value:
            numeric_constant(item, subject, complex_message)
        return
    elif value is None or value is Ellipsis or cls is str or cls is slice or isinstance(value, np.dtype) or (
            callable(value) and cls.__module__ in ("builtins", "numpy")
            and (getattr(value, "__module__", None) or "builtins").split(".")[0] in ("builtins", "numpy")):
        # a dtype, a mode, an index, Python's or NumPy's class or function (float, np.sin): with a
        # number an operator raises, as in Python. (A class or function of yours is not: an
        # operator repeating a tuple of them, then reading an attribute of one, would run your code.)
        return
    else:
        kind = None
    if kind is not None and kind in "biuf" or kind == "c" and complex_message is None:
        return
    if kind in ("U", "S") and cls is not np.ndarray:  # np.str_('b'), a dict's key: a string, as str
        return
    if kind == "c":
        raise UnsupportedCaseError(complex_message)
    what = f"an array of dtype {value.dtype}" if kind is not None else (
        f"a {cls.__qualname__}" if cls.__module__ == "builtins" else f"a {cls.__module__}.{cls.__qualname__}")
    advice = ("srcad takes a sparse matrix only as the constant operand of a matrix product with a dense NumPy "
              "array (S @ x, x @ S, S.T @ x, S.dot(x), S a global or an argument); convert it with .toarray()"
              if cls.__module__.startswith("scipy.sparse") else
              "convert it before the operation (np.asarray(...) or float(...))")
    raise UnsupportedCaseError(
        f"{subject} is {what}, and an operator srcad differentiates reads it: srcad's rules are those of "
        f"numbers and NumPy arrays, and an object's own operators would make the derivative something else; "
        f"{advice}, or give the operation its derivative with srcad.custom_vjp")


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


def cotangent_like(v, shape, dtype):
    """``cotangent(v, y)`` for an output whose shape and dtype are known when the code is
    generated: the output itself need not be computed to check ``v``. For a float64 array
    output it returns a float64 array of that shape (``passes.proven_finish`` relies on it)."""
    if v.__class__ is np.ndarray and v.shape == shape:  # the common call: nothing to check
        return v if v.dtype is _FLOAT64 and dtype == "float64" else in_output_dtype(v, dtype)
    if shape == () and v.__class__ in _REAL_SCALARS:
        return v
    if v is None:
        if shape == () or math.prod(shape) == 1:
            return np.dtype(dtype).type(1) if not shape else np.ones(shape, dtype)
        raise CotangentError(not_scalar(f"shape {shape}"))
    if isinstance(v, _CONTAINERS):
        raise _not_an_array(v, shape)
    if isinstance(v, np.ndarray):  # a subclass (np.matrix) gives its own class to every product
        v = np.asarray(v)
    vshape = shape_of(v)
    if vshape == shape:
        return in_output_dtype(v, dtype) if shape else v
    if math.prod(vshape) == 1 and math.prod(shape) == 1:
        return in_output_dtype(_one_value(v, shape), dtype) if shape else _one_value(v, shape)
    raise CotangentError(f"the cotangent v has shape {vshape} but the output has shape {shape}; "
                         "pass v with the output's shape")


def in_output_dtype(v, dtype):
    """The array ``v`` as float64 where the output's ``dtype`` (or its name) is float64
    (lazily for a Dask array): exact for a narrower float or an integer ``v``, and the adjoint
    is computed in the output's precision. A cotangent of another output keeps its dtype
    (cast to a float16 output, 1e5 would be inf)."""
    return v.astype(_FLOAT64) if np.dtype(dtype) is _FLOAT64 and v.dtype is not _FLOAT64 else v


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
    record = isinstance(y, _CONTAINERS) or is_dataclass_instance(y)  # a one-field record is not a scalar either
    if record or size_of(y) != 1:
        raise CotangentError(not_scalar(f"a {type(y).__name__}" if record else f"shape {shape_of(y)}"))
    if not isinstance(y, (int, float, complex, np.generic, np.ndarray)) and not protocol_array(y):
        raise CotangentError(f"the output is {'None (does the function return a value on every path?)' if y is None else 'a ' + type(y).__name__}, "
                             "but a gradient needs a number or an array as output")
    if isinstance(y, np.ndarray):
        return np.ones(y.shape, y.dtype if y.dtype.kind in "fc" else np.float64)
    if protocol_array(y):
        return np.ones_like(y, dtype=y.dtype if y.dtype.kind in "fc" else np.float64)
    if isinstance(y, np.generic) and y.dtype.kind in "fc":
        return y.dtype.type(1)
    return 1.0


def check_integer_range(op, a, b, message):
    """Nothing, in Python (its integers grow); code the numba backend compiled raises
    ``IntegerOverflowError(message)`` where ``a op b`` (``op`` one of ``+ - *``) of 64-bit
    integers would wrap (``passes.integer_growth``)."""
    return None


def check_python_float(op, a, b, message):
    """Nothing, in Python (it raises itself); code the numba backend compiled raises where
    ``a op b`` (``op`` one of ``/ // % divmod **``) of Python numbers raises in Python (a
    division by zero, ``0.0 ** -1``, a power past the largest float) and numba's gives inf or
    nan, or where Python's is a complex number (``(-8.0) ** 0.5``) (``passes.integer_growth``)."""
    return None


def numba_refuses(reason):
    """Nothing, in Python; the numba backend's lowering refuses code that calls it, at its
    line, for ``reason`` (``passes.integer_growth``: a value numba would compute otherwise)."""
    return None
