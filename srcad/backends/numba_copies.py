"""njit versions of the copies generated code makes (``copy_grad``, ``copy_value``,
``snapshot``), for the numba backend (``numba_runtime`` imports this module, registering the
overloads): arrays are copied, inside the tuples and lists holding them too; numbers, None,
strings and ranges are immutable and kept; anything else gets no implementation, which numba
refuses to type."""
from numba import types
from numba.extending import overload

from .. import runtime
from ..arguments import snapshot


def number_type(t):
    """Is ``t`` a numba number type (float, integer, boolean)?"""
    return isinstance(t, (types.Float, types.Integer, types.Boolean))


def none_type(t):
    """Is ``t`` None's numba type (or an omitted argument's)?"""
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


@overload(runtime.copy_grad)
def _copy_grad(g):
    if isinstance(g, types.Array):
        return lambda g: g.copy()
    if number_type(g):
        return lambda g: g
    return None


@overload(runtime.copy_value)
def _copy_value(v):
    if isinstance(v, types.Array):
        return lambda v: v.copy()
    if isinstance(v, (types.List, types.ListType)):
        return lambda v: v.copy()  # a value stack handed to a backward sweep: shallow, as in Python
    if number_type(v) or isinstance(v, (types.BaseTuple, types.RangeType)):
        return lambda v: v  # immutable
    return None


def _immutable(t):
    """Is a value of numba type ``t`` immutable (numbers, None, strings, ranges, tuples of them)?"""
    if isinstance(t, types.Optional):
        return _immutable(t.type)
    if isinstance(t, types.BaseTuple):
        return all(_immutable(item) for item in t.types)
    return number_type(t) or none_type(t) or isinstance(t, (types.UnicodeType, types.RangeType))


def unchanged_copy(value):
    """The copy a turned-around value stack (``passes.numba_stacks``) pushes right after the
    assignment, where Python copies the value at its next save: the same only for a value no
    update in place can change in between, so numba compiles it for immutable values only."""
    return value


@overload(unchanged_copy)
def _unchanged_copy(value):
    if _immutable(value):
        return lambda value: value
    return None


@overload(snapshot)
def _snapshot(x):
    """A saved copy of a value that may hold the user's memory (``pullback_values``): its
    arrays copied, inside the tuples and lists holding them too (a value stack, a helper's
    saved values); numbers and None as they are. numba's globals are numbers (arrays, lists
    and dicts it would freeze are refused), but a default argument may be an array."""
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    if _immutable(x):
        return lambda x: x
    if isinstance(x, types.Optional) and isinstance(x.type, types.Array):
        def optional_array(x):
            if x is None:
                return None
            return x.copy()

        return optional_array
    if isinstance(x, types.BaseTuple):
        return _snapshot_items(len(x))
    if isinstance(x, (types.List, types.ListType)):
        item = x.dtype if isinstance(x, types.List) else x.item_type
        if _immutable(item):
            return lambda x: x.copy()
        if isinstance(item, types.Array):
            def array_list(x):
                out = x.copy()
                for k in range(len(out)):
                    out[k] = out[k].copy()
                return out

            return array_list
    return None


def _snapshot_items(n):
    """``snapshot`` of an ``n``-tuple, item by item (its items may differ in type, so they are
    read with constant indices: the function is written out for ``n``)."""
    scope = {"snapshot": snapshot}
    items = "".join(f"snapshot(x[{k}]), " for k in range(n))
    exec(f"def each_item(x):\n    return ({items})\n", scope)
    return scope["each_item"]
