"""Shapes of results srcad knows without running anything on stand-ins: np.linalg's
results from the arguments' shapes (stand-in zeros are singular), ``np.pad``'s from its
widths, the kind of Python scalar
arithmetic (``i - 1`` of a loop counter is an int) and ``min``/``max`` of scalars of one kind.

>>> import numpy as np
>>> LINALG_SHAPES[np.linalg.inv](Spec((5, 3, 3), np.float32))
Spec((5, 3, 3), float32)
>>> pad_shape(Spec((4, 5), np.float64), 1, mode="constant")
Spec((6, 7), float64)
>>> import gast
>>> python_arithmetic(gast.Sub(), 0, 1), python_arithmetic(gast.Pow(), 0, -1) is UNKNOWN
(Spec((), int64, int), True)
"""
import functools

import gast
import numpy as np

from .. import runtime
from .shape_values import UNKNOWN, Spec, join, same


def linalg_dtype(*specs):
    """The dtype np.linalg computes in: float32/complex64 stay single, integers become float64."""
    dtype = np.result_type(*[s.dtype for s in specs])
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    return dtype if dtype in (np.float32, np.float64, np.complex64, np.complex128) else None


def square(a):
    return len(a.shape) >= 2 and a.shape[-1] == a.shape[-2]


def inverse_shape(a):
    dtype = linalg_dtype(a)
    return Spec(a.shape, dtype) if square(a) and dtype is not None else UNKNOWN


def determinant_shape(a):
    dtype = linalg_dtype(a)
    return Spec(a.shape[:-2], dtype) if square(a) and dtype is not None else UNKNOWN


def solve_shape(a, b):
    """``np.linalg.solve(a, b)`` (NumPy 2: a 1-d ``b`` is one vector, else a stack of matrices)."""
    dtype = linalg_dtype(a, b)
    if not square(a) or dtype is None or not b.shape or b.shape[-1 if len(b.shape) == 1 else -2] != a.shape[-1]:
        return UNKNOWN
    try:
        if len(b.shape) == 1:
            return Spec(a.shape[:-1], dtype)
        return Spec(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], dtype)
    except ValueError:
        return UNKNOWN


def slogdet_shape(a):
    """``np.linalg.slogdet(a)``: the sign (of ``a``'s dtype) and the real log of |det|."""
    dtype = linalg_dtype(a)
    if not square(a) or dtype is None:
        return UNKNOWN
    return Spec(a.shape[:-2], dtype), Spec(a.shape[:-2], np.empty(0, dtype).real.dtype)


# shapes of np.linalg results from the arguments' shapes alone (their values would be
# stand-in zeros: singular)
LINALG_SHAPES = {np.linalg.inv: inverse_shape, np.linalg.det: determinant_shape, np.linalg.slogdet: slogdet_shape,
                 np.linalg.solve: solve_shape, np.linalg.cholesky: inverse_shape}


def pad_shape(array, pad_width, mode="constant", **options):
    """``np.pad(array, pad_width, mode=...)``: each axis grows by its two known widths; the
    dtype is the array's whatever the mode (constant values are cast to it)."""
    if not isinstance(array, Spec) or array.python is not None or not isinstance(mode, str):
        return UNKNOWN
    try:
        widths = np.asarray(pad_width)
        if widths.dtype.kind not in "iu" or (widths < 0).any():
            return UNKNOWN
        widths = np.broadcast_to(widths, (len(array.shape), 2))
    except (ValueError, TypeError):
        return UNKNOWN
    return Spec(tuple(int(n + a + b) for n, (a, b) in zip(array.shape, widths)), array.dtype)


def in_place_shape(new, old):
    """``runtime.in_place_result(new, old)`` (what ``old op= e`` leaves): ``old``'s shape and
    dtype where ``new`` has them (anything else fails or casts when it runs: unknown here); a
    Python number ``old`` is rebound to ``new``."""
    if isinstance(old, Spec) and old.python is not None:
        return new
    if isinstance(old, Spec) and isinstance(new, Spec) and new.python is None and (new.shape, new.dtype) == (
            old.shape, old.dtype):
        return old
    return UNKNOWN


# shapes of results whose arguments are partly known values (widths), from those values and
# the other arguments' shapes
ARGUMENT_SHAPES = {np.pad: pad_shape, runtime.padded: pad_shape, runtime.in_place_result: in_place_shape}


def one_of(values):
    """``min(a, b, c)`` of scalars is one of them: known if they all have one kind."""
    joined = values[0]
    for v in values[1:]:
        joined = join(joined, v)
    return joined if isinstance(joined, Spec) and joined.shape == () and same(joined, values[0]) else UNKNOWN


def is_python_number(value):
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


def python_arithmetic(op, first, second):
    """The kind of Python scalar arithmetic, from the kinds of its operands (``i - 1`` of a
    loop counter is an int); ``second`` is the right operand as known (a value or a Spec)."""
    kinds = {type(first), type(second) if not isinstance(second, Spec) else second.python}
    if complex in kinds:
        return Spec((), np.complex128, complex) if isinstance(op, ARITHMETIC) else UNKNOWN
    if float in kinds or isinstance(op, gast.Div):
        return Spec((), np.float64, float) if isinstance(op, ARITHMETIC) else UNKNOWN
    if isinstance(op, gast.Pow) and not (isinstance(second, int) and second >= 0):
        return UNKNOWN  # 2 ** -1 is a float: the exponent's sign decides
    if isinstance(op, ARITHMETIC) or bool not in kinds and isinstance(op, (gast.LShift, gast.RShift, gast.BitAnd,
                                                                            gast.BitOr, gast.BitXor)):
        return Spec((), np.int64, int)
    return UNKNOWN


ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.FloorDiv, gast.Mod)


@functools.lru_cache(maxsize=1024)
def broadcast(first, second):
    """``np.broadcast_shapes(first, second)``, remembered: inference asks it again and again."""
    return np.broadcast_shapes(first, second)


def arithmetic_dtype(op, first, second):
    """``(is the result a float, its dtype)`` of NumPy's ``first op second`` (``op`` of
    ``ARITHMETIC``) run on samples: a Python int or float as it is, anything else as a zero
    of its dtype; remembered for each kind of operand, where the sample decides nothing else."""
    return _sampled(type(op), _sample_key(first), _sample_key(second))


def _sample_key(value):
    if isinstance(value, np.ndarray):
        return ("zeros", value.dtype)
    if isinstance(value, (int, float)):
        return (type(value), value)  # 2 ** -1 fails for int arrays: the value decides
    return ("zeros", np.result_type(value))


@functools.lru_cache(maxsize=1024)
def _sampled(op_type, first, second):
    first, second = (np.zeros((), key[1]) if key[0] == "zeros" else key[1] for key in (first, second))
    with np.errstate(all="ignore"):
        out = _SAMPLES[op_type](first, second)
    return isinstance(out, float), np.asarray(out).dtype


_SAMPLES = {gast.Add: np.add, gast.Sub: np.subtract, gast.Mult: np.multiply, gast.Div: np.true_divide,
            gast.Pow: np.power, gast.FloorDiv: np.floor_divide, gast.Mod: np.mod}
