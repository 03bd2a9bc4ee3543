"""Python's meaning where numba's differs, for the numba backend (``numba_runtime`` imports
this module, registering the overloads): 64-bit integer arithmetic that would wrap raises
``IntegerOverflowError`` (Python's integers grow), and ``math``'s functions outside their domain
raise ``ValueError("math domain error")`` (numba's give nan)."""
import numpy as np
from numba import njit, types
from numba.extending import overload

from .. import runtime
from ..errors import IntegerOverflowError
from .numba_copies import number_type


@overload(runtime.check_integer_range, prefer_literal=True)
def _check_integer_range(op, a, b, message):
    """Raise where ``a op b`` of 64-bit integers wraps (Python's integers grow)."""
    if not (isinstance(op, types.StringLiteral) and isinstance(message, types.StringLiteral)):
        return None
    if not (isinstance(a, types.Integer) and isinstance(b, types.Integer) and a.signed and b.signed):
        return lambda op, a, b, message: None  # floats, or NumPy's unsigned integers, which wrap in Python too
    wraps, text = _WRAPS[op.literal_value], message.literal_value

    def check(op, a, b, message):
        if wraps(np.int64(a), np.int64(b)):
            raise IntegerOverflowError(text)

    return check


# (tested with bounds, never by wrapping: LLVM may assume numba's signed arithmetic does not wrap)
_MAX, _MIN = np.int64(2 ** 63 - 1), np.int64(-2 ** 63)


@njit
def _sum_wraps(a, b):
    return b > 0 and a > _MAX - b or b < 0 and a < _MIN - b


@njit
def _difference_wraps(a, b):
    return b < 0 and a > _MAX + b or b > 0 and a < _MIN + b


@njit
def _product_wraps(a, b):
    if a == 0 or b == 0:
        return False
    if a > 0:
        return a > _MAX // b if b > 0 else b < (_MIN + a - 1) // a  # (a ceiling, as floors)
    if b > 0:
        return a < (_MIN + b - 1) // b
    return a == _MIN or b < -(_MAX // -a)


_WRAPS = {"+": _sum_wraps, "-": _difference_wraps, "*": _product_wraps}


def in_math_domain(x, kind):
    """``x``, where ``math``'s function ``kind`` (``numba_static.DOMAIN_CHECKED``) takes it;
    ValueError("math domain error") elsewhere, as Python's ``math`` raises (numba's gives nan)."""
    return x


@overload(in_math_domain, prefer_literal=True)
def _in_math_domain(x, kind):
    if not (number_type(x) and isinstance(kind, types.StringLiteral)):
        return None
    outside = _OUTSIDE[kind.literal_value]

    def check(x, kind):
        if outside(x):
            raise ValueError("math domain error")
        return x

    return check


_OUTSIDE = {"sqrt": njit(lambda x: x < 0), "log": njit(lambda x: x <= 0), "log1p": njit(lambda x: x <= -1),
            "acos": njit(lambda x: x < -1 or x > 1), "acosh": njit(lambda x: x < 1),
            "atanh": njit(lambda x: x <= -1 or x >= 1)}
