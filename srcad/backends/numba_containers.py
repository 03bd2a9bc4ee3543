"""njit versions of the helpers that take a differentiated argument in and out of a
function (``as_real``, ``zeros_like``, ``finish``), for the numba backend (``numba_runtime``
imports this module, registering the overloads).

Numbers and arrays are converted as ``srcad.runtime`` converts them. A tuple or list argument
keeps its items (an integer inside a container stays one, a float array is kept); its adjoint
is a list like Python's, which numba can hold only when every item has one type: tuples and
lists of floats, or of float arrays of one dtype and number of dimensions (a tuple no adjoint
reached gets zeros item by item, whatever its float items). Anything else (an integer array
inside a container, which Python converts, mixed items, named tuples, dicts) gets no
implementation, so numba refuses to type the call: never a different meaning.
"""
import numpy as np
from numba import types
from numba.extending import overload

from .. import runtime
from ..rules import builtin_rules
from .numba_copies import none_type, number_type


def float_array(t):
    """Is ``t`` a numba array type of floats?"""
    return isinstance(t, types.Array) and isinstance(t.dtype, types.Float)


def _kept_items(t):
    """Does every item of the tuple or list type ``t`` (and of the tuples and lists inside it)
    stay as it is under ``as_real``: numbers, None, strings, float arrays?"""
    items = t.types if isinstance(t, types.BaseTuple) else (t.dtype,)
    return all(_kept_items(item) if isinstance(item, (types.BaseTuple, types.List))
               else number_type(item) or none_type(item) or isinstance(item, types.UnicodeType)
               or float_array(item) for item in items)


@overload(runtime.as_real)
def _as_real(x):
    if isinstance(x, types.Boolean):
        return lambda x: x
    if isinstance(x, types.Integer):
        return lambda x: float(x)
    if isinstance(x, types.Float) or float_array(x):
        return lambda x: x
    if isinstance(x, types.Array) and isinstance(x.dtype, (types.Integer, types.Boolean)):
        return lambda x: x.astype(np.float64)
    if isinstance(x, (types.BaseTuple, types.List)) and _kept_items(x):
        return lambda x: x  # Python keeps a container's numbers and float arrays as they are
    return None


def _same_items(t):
    """The one item type of the tuple or list type ``t`` if it is a float or a float array,
    else None (a list of mixed items has no numba type)."""
    if isinstance(t, types.UniTuple) or isinstance(t, types.List):
        item = t.dtype
        if isinstance(item, types.Float) or float_array(item):
            return item
    return None


@overload(runtime.zeros_like)
def _zeros_like_items(x):
    item = _same_items(x)
    if isinstance(item, types.Float) and isinstance(x, types.UniTuple):  # (a list of floats: numba_runtime's)
        return lambda x: [0.0 for _ in range(len(x))]
    if float_array(item):
        dtype = item.dtype

        def arrays(x):
            return [np.zeros(x[k].shape, dtype) for k in range(len(x))]
        return arrays
    return None


@overload(builtin_rules.list_grad)
def _list_grad_items(g, iterable):
    """The adjoint of ``list(t)`` of a tuple or list: a list of its items' adjoints."""
    if isinstance(g, types.List) and _same_items(iterable) is not None and g.dtype == iterable.dtype:
        return lambda g, iterable: g.copy()
    return None


@overload(runtime.container_grad)
def _container_grad_items(g, x):
    """A tuple's or list's adjoint that is already a list of its items' adjoints: itself."""
    if isinstance(g, types.List) and _same_items(x) is not None and g.dtype == x.dtype:
        return lambda g, x: g
    return None


@overload(runtime.finish)
def _finish_items(g, x, shared=False):
    """A list's or tuple's gradient: a list or tuple of its items' gradients (zeros for each
    item where ``g`` is None: a tuple's items may differ in type then). A named tuple, which
    Python remakes as one, gets none."""
    if isinstance(x, types.List) and _same_items(x) is not None:
        if none_type(g):
            return lambda g, x, shared=False: [runtime.finish(None, x[k], shared) for k in range(len(x))]
        if isinstance(g, types.List) and g.dtype == x.dtype:
            def each(g, x, shared=False):
                if len(g) != len(x):
                    raise ValueError("an adjoint whose length is not its list's")
                return [runtime.finish(g[k], x[k], shared) for k in range(len(x))]
            return each
        return None
    if isinstance(x, types.BaseNamedTuple) or not isinstance(x, types.BaseTuple):
        return None
    if none_type(g) and all(isinstance(item, types.Float) or float_array(item) for item in x.types):
        return _each_item(len(x), True)
    if isinstance(x, types.UniTuple) and _same_items(x) is not None and isinstance(g, types.List) \
            and g.dtype == x.dtype:
        return _each_item(len(x), False)
    return None


def _each_item(n, no_grad):
    """``finish`` of an ``n``-tuple item by item (written out for ``n``: numba builds a tuple
    of a length it knows)."""
    scope = {"finish": runtime.finish}
    grad = "None" if no_grad else "g[{k}]"
    items = "".join(f"finish({grad.format(k=k)}, x[{k}], shared), " for k in range(n))
    check = "" if no_grad else (f"    if len(g) != {n}:\n"
                                "        raise ValueError('an adjoint whose length is not its tuple length')\n")
    exec(f"def each_item(g, x, shared=False):\n{check}    return ({items})\n", scope)
    return scope["each_item"]
