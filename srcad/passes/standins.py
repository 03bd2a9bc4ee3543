"""Which calls shape inference may run on stand-ins: values known only by their shape and
dtype (zero-strided zeros). A call runs on stand-ins only where the result's shape and dtype
follow from the stand-ins' shapes and dtypes alone, and every other argument is known; any
other call's result is unknown, never guessed from what the stand-ins happen to hold.

>>> import numpy as np
>>> standin_positions(np.sum, 2), standin_positions(np.add, 2), standin_positions(np.zeros, 1)
((0,), (0, 1), None)
>>> standin_positions(np.linalg.inv, 1) is None  # would run on singular zeros
True
"""
import builtins

import numpy as np

from .. import registry
from ..runtime_boundary import in_place_result


def _names(*names, module=np):
    return {getattr(module, n) for n in names if hasattr(module, n)}


# NumPy functions whose result's shape and dtype follow from the shapes and dtypes of the
# arguments at these positions (which may be stand-ins) and the values of all the others
# (which must be known). Anything else, and any function that would have to run on
# stand-in data, leaves its result unknown.
_FROM_SHAPES = dict.fromkeys(_names(
    "sum", "prod", "mean", "std", "var", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any",
    "cumsum", "cumprod", "ptp", "nansum", "nanprod", "nanmean", "nanstd", "nanvar", "nanmax", "nanmin",
    "reshape", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims", "ravel", "flip", "fliplr",
    "flipud", "rot90", "roll", "broadcast_to", "diagonal", "trace", "tril", "triu", "diag", "copy",
    "asarray", "array", "asanyarray", "ascontiguousarray", "zeros_like", "ones_like", "empty_like",
    "real", "imag", "sort", "tile", "repeat", "diff", "float64", "float32", "complex128", "sinc",
    "angle", "around", "round", "shape", "ndim", "size", "atleast_1d",
), (0,))
_FROM_SHAPES.update(dict.fromkeys(_names("concatenate", "stack", "hstack", "vstack", "dstack", "column_stack"), (0,)))
_FROM_SHAPES.update(dict.fromkeys(_names("full_like", "outer", "inner", "kron", "cross", "tensordot", "vdot"), (0, 1)))
_FROM_SHAPES.update(dict.fromkeys(_names("full"), (1,)))
_FROM_SHAPES.update(dict.fromkeys(_names("where", "clip"), (0, 1, 2)))
_FROM_SHAPES.update(dict.fromkeys(_names("norm", module=np.linalg), (0,)))
_FROM_SHAPES.update(dict.fromkeys(_names("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "fftshift",
                                         "ifftshift", "rfft2", "rfftn", "irfft2", "irfftn", module=np.fft), (0,)))  # their complex dtype guards rules
# of these, only the result's shape is asked: their integers are exact, not stand-ins
_SHAPE_QUERIES = _names("shape", "ndim", "size") | {builtins.len}
_FROM_SHAPES[builtins.len] = (0,)
_FROM_SHAPES[builtins.abs] = (0,)
# ndarray methods of the same kind: the receiver may be a stand-in, the other arguments not
_METHODS_FROM_SHAPES = {
    "sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin", "all", "any", "cumsum",
    "cumprod", "reshape", "transpose", "swapaxes", "squeeze", "ravel", "flatten", "copy", "astype",
    "conj", "conjugate", "diagonal", "trace", "round", "repeat",
}
# builtins run only on known values (``range(n)``, ``int(k)``): on a stand-in they would guess
_PLAIN_BUILTINS = {builtins.range, builtins.int, builtins.float, builtins.min, builtins.max, builtins.tuple}


def standin_positions(fn, n_args):
    """The argument positions of ``fn`` that may be stand-ins, or None if it must not run on any."""
    if isinstance(fn, np.ufunc):  # elementwise: the result broadcasts the arguments
        return tuple(range(n_args))
    positions = _FROM_SHAPES.get(hashable(fn))
    return positions if positions is not None else registry.standin_positions_of(hashable(fn))


def method_runs_on_standin(name):
    """May the ndarray method ``name`` run on a stand-in receiver (other arguments known)?"""
    return name in _METHODS_FROM_SHAPES


def runs_on_known_values(fn):
    """May ``fn`` run at generation time on arguments whose values are all known?"""
    return hashable(fn) in _PLAIN_BUILTINS or hashable(fn) in _FROM_SHAPES or is_numpy(fn)


def is_shape_query(fn):
    """Is ``fn`` one whose integer result is a shape, exact even for a stand-in?"""
    return hashable(fn) in _SHAPE_QUERIES


def is_large(value):
    """Is ``value`` a size, or a shape, of more than a million entries?"""
    if isinstance(value, tuple) and value and all(isinstance(v, int) for v in value):
        return int(np.prod(value, dtype=np.float64)) > 1_000_000
    return isinstance(value, int) and value > 1_000_000


def hashable(fn):
    try:
        hash(fn)
        return fn
    except TypeError:
        return None


def is_numpy(fn):
    return getattr(fn, "__module__", "") in ("numpy", "numpy.linalg") or isinstance(fn, np.ufunc)


# every method of list and dict that changes it
CHANGING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear", "reverse", "sort", "update",
                    "setdefault", "popitem"}


def keeps_arguments(fn):
    """NumPy's functions and Python's builtins do not change a list or dict passed to them, nor
    does the value normalize makes of ``x op= e`` (``in_place_result``: a new value or ``x``'s)."""
    return is_numpy(fn) or getattr(fn, "__module__", None) == "builtins" or fn is in_place_result
