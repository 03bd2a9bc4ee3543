"""Arrays that srcad computes on through NumPy's dispatch protocols (``__array_function__``,
``__array_ufunc__``) without converting them: Dask arrays (lazy, out of core, distributed)
and duck arrays such as CuPy's (on a GPU). Everything here reads an array's ``.shape`` or
asks its own library, so nothing is computed or moved to host memory.

>>> class Lazy:  # the least a duck array needs
...     shape, dtype = (2, 3), np.dtype(np.float64)
...     def __array_function__(self, func, types, args, kwargs): return NotImplemented
...     def __array_ufunc__(self, ufunc, method, *inputs, **kwargs): return NotImplemented
>>> protocol_array(Lazy()), shape_of(Lazy()), size_of(Lazy()), shape_of([1.0, 2.0])
(True, (2, 3), 6, (2,))
"""
import math

import numpy as np


def protocol_array(x):
    """Is ``x`` an array that srcad's generated code computes on through NumPy's dispatch
    protocols, without converting it? A Dask array, or a duck array: a class outside the
    ndarray hierarchy that implements both ``__array_function__`` and ``__array_ufunc__``
    and has a tuple ``shape`` and a NumPy ``dtype`` (CuPy's arrays are such). Subclasses
    of ``np.ndarray`` (``np.matrix``, masked arrays) are not: they pass the protocols on to
    ndarray's own code with other semantics.

    >>> protocol_array(np.ones(2)), protocol_array(np.ma.ones(2)), protocol_array([1.0])
    (False, False, False)
    """
    if isinstance(x, np.ndarray):
        return False
    cls = x.__class__
    if getattr(cls, "__array_function__", None) is None or getattr(cls, "__array_ufunc__", None) is None:
        return False
    return isinstance(getattr(x, "shape", None), tuple) and isinstance(getattr(x, "dtype", None), np.dtype)


def copy_array(x):
    """A copy of the array ``x`` made by its own library (a Dask array stays lazy, a CuPy
    array on its device)."""
    return x.copy() if hasattr(x, "copy") else np.copy(x)


def shape_of(x):
    """``x``'s shape; read off the array itself (lazily known for a Dask array)."""
    return x.shape if isinstance(x, np.ndarray) or protocol_array(x) else np.shape(x)


def size_of(x):
    """How many values ``x`` holds, from its shape (``np.size`` would compute a Dask array)."""
    return math.prod(shape_of(x))


def is_array(x):
    """Is ``x`` an ndarray or an array srcad computes on through NumPy's protocols?"""
    return isinstance(x, np.ndarray) or protocol_array(x)


def as_array(x):
    """``x`` as an array: arrays as they are (a Dask array stays lazy, a CuPy array on its
    device), anything else (a number, a list) through ``np.asarray``."""
    return x if is_array(x) else np.asarray(x)
