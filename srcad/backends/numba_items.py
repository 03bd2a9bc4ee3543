"""njit versions of the helpers the adjoints of item-wise loops call, for the numba backend
(``numba_runtime`` imports this module, registering the overloads): a loop over an array's
items (``for v in x``, ``enumerate(x)``, ``zip(x, y)``: ``zeros_like`` of its list of items and
``list_grad``), a store at an index computed at run time (``stored_adjoint``, ``scatter_add``),
``abs`` (``unit_phase``) and ``np.roll`` (its adjoint rolls back with ``axis=None``). The
items' zeros (``zeros_like`` of a list) are ``numba_runtime``'s.

Each covers real numbers and float arrays indexed by integers and slices, as NumPy computes
them; for anything else (complex values, integer-array or mask indices, items that are rows)
it offers no implementation, so numba refuses to type the call: never a different meaning.
"""
import numpy as np
from numba import types
from numba.extending import overload

from .. import runtime
from ..rules import builtin_rules, numpy_core
from .numba_copies import none_type, number_type


def _real_array(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, (types.Float, types.Integer))


def real_numbers(t):
    """A list of real floats (a float vector's items, ``list(x)``)."""
    return isinstance(t, types.List) and isinstance(t.dtype, types.Float)


def _basic_index(t):
    """An index NumPy reads as a view, not a gather: integers and slices, alone or in a tuple."""
    parts = t.types if isinstance(t, types.BaseTuple) else (t,)
    return all(isinstance(p, (types.Integer, types.SliceType)) for p in parts)  # a bool is no Integer here


@overload(builtin_rules.list_grad)
def _list_grad(g, iterable):
    if real_numbers(g) and _real_array(iterable) and iterable.ndim == 1:
        def impl(g, iterable):  # the adjoint of list(x) of a vector: back to a vector
            if len(g) != len(iterable):
                raise ValueError("an adjoint whose length is not its vector's")
            return np.array(g)
        return impl
    return None


@overload(numpy_core.unit_phase)
def _unit_phase(x):
    """Typed for the real values ``abs``'s rule never calls it with (its branch for complex
    ``x``, which numba types too); a complex ``x`` gets none."""
    if x == types.float64:
        return lambda x: x / (1.0 if x == 0 else abs(x))
    if isinstance(x, types.Array) and x.dtype == types.float64:
        return lambda x: x / np.where(x == 0, 1.0, np.abs(x))
    return None


_CHECKED = {"boundscheck": True}  # an index out of bounds is an IndexError, as in Python (not the caller's flag)


@overload(runtime.stored_adjoint, jit_options=_CHECKED)
def _stored_adjoint(g, index, value):
    if isinstance(g, types.Array) and isinstance(g.dtype, types.Float) and _basic_index(index):
        return lambda g, index, value: runtime.unbroadcast(runtime.copy_value(g[index]), value)
    return None  # an integer-array index: NumPy keeps one write per repeated position


@overload(runtime.scatter_add, jit_options=_CHECKED)
def _scatter_add(buffer, index, g):
    if (isinstance(buffer, types.Array) and isinstance(buffer.dtype, types.Float) and _basic_index(index)
            and (number_type(g) or isinstance(g, types.Array))):
        def impl(buffer, index, g):
            buffer[index] += g
        return impl
    return None  # repeated integer-array positions accumulate: np.add.at


@overload(np.roll)
def _roll_flat(a, shift, axis):
    """``np.roll(a, shift, None)``, which a roll's adjoint calls: numba's own takes no axis."""
    if none_type(axis) and isinstance(a, types.Array) and isinstance(shift, types.Integer):
        def impl(a, shift, axis):  # the shift reduced first, as NumPy does: i + shift cannot overflow
            return np.roll(a, shift % a.size if a.size else 0)
        return impl
    return None
