"""The abstract values of shape inference: a value known up to its data (``Spec``: shape
and dtype), a value not assigned yet (``BOTTOM``) or one that depends on data
(``UNKNOWN``), and how values from two assignments join.

>>> import numpy as np
>>> arg_spec(np.ones((2, 3))), arg_spec(2.0)
(Spec((2, 3), float64), Spec((), float64, float))
>>> join(Spec((2,), np.float64), Spec((2,), np.float64)), join(3, 4) == Spec((), np.int64, int)
(Spec((2,), float64), True)
>>> join(0.0, Spec((), np.float64)), join(0.0, 0.5)
(Spec((), float64), Spec((), float64, float))
"""
import functools
import numbers

import numpy as np


class Spec:
    """A value known up to its data: an array or scalar of this shape and dtype."""

    __slots__ = ("shape", "dtype", "python")

    def __init__(self, shape, dtype, python=None):
        self.shape, self.dtype, self.python = tuple(shape), np.dtype(dtype), python

    def __eq__(self, other):
        return (isinstance(other, Spec) and self.shape == other.shape and self.dtype == other.dtype
                and self.python == other.python)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.python))

    def __repr__(self):  # the persistent cache's key: a Python float is not a NumPy scalar
        return f"Spec({self.shape}, {self.dtype}" + (f", {self.python.__name__})" if self.python else ")")

    def dummy(self):
        """A stand-in value of this shape and dtype (a zero-strided view: no memory)."""
        if self.python is not None:
            return self.python(0)
        return _standin(self.shape, self.dtype)


@functools.lru_cache(maxsize=1024)
def _standin(shape, dtype):
    """(read-only: one per shape and dtype serves every ``Spec`` of them)"""
    return np.broadcast_to(np.zeros((), dtype), shape)


BOTTOM = object()  # not assigned yet
UNKNOWN = object()  # depends on data


def arg_spec(value):
    """What specialisation keeps of an argument: shapes and dtypes, container structure."""
    if value.__class__ is np.ndarray:
        return Spec(value.shape, value.dtype)
    if isinstance(value, bool):
        return Spec((), np.bool_, bool)
    if isinstance(value, numbers.Integral) and not isinstance(value, np.generic):
        return Spec((), np.int64, int)
    if isinstance(value, np.generic):  # before float: np.float64 is a float, but promotes as float64
        return Spec((), value.dtype)
    if isinstance(value, float):
        return Spec((), np.float64, float)
    if isinstance(value, (list, tuple)) and len(value) <= 64:  # a named tuple as a plain tuple
        return (list if isinstance(value, list) else tuple)(arg_spec(v) for v in value)
    if isinstance(value, dict) and len(value) <= 64 and all(isinstance(k, str) for k in value):
        return ("dict", tuple((k, arg_spec(v)) for k, v in value.items()))
    return UNKNOWN


def argument_kinds(specs):
    """``(arrays, numbers, keyed)`` of ``specs`` (parameter -> ``arg_spec``): the parameters
    given an array or a number, of those the ones given a Python number, and the parameters
    given a dict whose keys are strings."""
    known = [p for p, spec in specs.items() if isinstance(spec, Spec)]
    keyed = tuple(p for p, spec in specs.items() if isinstance(spec, tuple) and spec[:1] == ("dict",))
    return tuple(known), tuple(p for p in known if specs[p].python is not None), keyed


def spec_key(value):
    """A hashable key of ``arg_spec(value)`` (for the compile cache)."""
    spec = arg_spec(value)
    return freeze(spec)


def specs_key(specs):
    """A hashable key of a mapping of parameters to ``Spec``s (for the compile cache)."""
    return tuple(sorted((name, freeze(spec)) for name, spec in specs.items()))


def freeze(spec):
    if isinstance(spec, list):
        return ("list",) + tuple(freeze(s) for s in spec)
    if isinstance(spec, tuple) and spec and spec[0] == "dict":
        return ("dict",) + tuple((k, freeze(v)) for k, v in spec[1])
    if isinstance(spec, tuple):
        return ("tuple",) + tuple(freeze(s) for s in spec)
    return spec if isinstance(spec, Spec) else None


def as_value(spec):
    """Abstract argument -> an abstract value of the interpreter."""
    if isinstance(spec, tuple) and spec and spec[0] == "dict":
        return {k: as_value(v) for k, v in spec[1]}
    if isinstance(spec, (list, tuple)):
        return type(spec)(as_value(s) for s in spec)
    return spec


def join(a, b):
    if a is BOTTOM:
        return b
    if b is BOTTOM or a is b:
        return a
    if isinstance(a, Spec) and isinstance(b, Spec) and a.shape == b.shape and a.dtype == b.dtype:
        return Spec(a.shape, a.dtype, a.python if a.python is b.python else None)
    try:
        if type(a) is type(b) and a == b:
            return a
    except Exception:  # comparing arrays or odd objects
        pass
    if isinstance(a, numbers.Integral) and isinstance(b, numbers.Integral):
        return Spec((), np.int64, int)
    if _is_number(a) or _is_number(b):  # ``total = 0.0`` then ``total = total + x @ y``: a scalar of one kind
        a, b = (arg_spec(a) if _is_number(a) else a), (arg_spec(b) if _is_number(b) else b)
        if isinstance(a, Spec) and isinstance(b, Spec):
            return join(a, b)
    return UNKNOWN


def _is_number(value):
    """A known number (Python's or NumPy's scalar), whose kind ``arg_spec`` gives."""
    return isinstance(value, (numbers.Number, np.bool_))


def same(a, b):
    """Are two abstract values the same (without comparing arrays elementwise)?"""
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False
