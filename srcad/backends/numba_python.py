"""Python's meaning where numba's differs, for the numba backend (``numba_runtime`` imports
this module, registering the overloads): 64-bit integer arithmetic that would wrap raises
``IntegerOverflowError`` (Python's integers grow), and ``math``'s functions raise where
Python's do (``ValueError("math domain error")`` where numba's give nan, ``OverflowError`` where
they give inf, and a float made an integer raises where it is not one of 64 bits)."""
import math

import numpy as np
from numba import njit, types
from numba.core import errors
from numba.extending import overload

from .. import runtime
from ..errors import ComplexPowerError, IntegerOverflowError
from ..passes.integer_growth import OVERFLOW
from .numba_copies import number_type


@overload(runtime.check_integer_range, prefer_literal=True)
def _check_integer_range(op, a, b, message):
    """Raise where ``a op b`` (``passes.integer_growth``'s operations) of 64-bit integers is not
    Python's: a result past 64 bits (Python's integers grow), a division by zero or a negative
    shift count (Python raises). NumPy's unsigned 64-bit integers wrap as numba's do; integers
    of other widths are refused (NumPy computes at their width, numba at 64 bits)."""
    if not (isinstance(op, types.StringLiteral) and isinstance(message, types.StringLiteral)):
        return None
    if not (isinstance(a, types.Integer) and isinstance(b, types.Integer)):
        return lambda op, a, b, message: None  # floats (or booleans), as numba typed them
    if a.bitwidth != 64 or b.bitwidth != 64 or a.signed != b.signed:
        raise errors.TypingError(f"arithmetic of {a} and {b}: numba computes NumPy integers narrower than 64 "
                                 "bits (or signed with unsigned) at another width than NumPy does")
    if not a.signed:
        return lambda op, a, b, message: None  # uint64 wraps in NumPy too
    problem, message_text = _PROBLEMS[op.literal_value], message.literal_value
    overflow, zero, negative, long = (message_text.replace(OVERFLOW, reason) for reason in (
        OVERFLOW, "integer division or modulo by zero", "negative shift count", "a right shift by 64 bits or more, "
        "which numba computes otherwise than Python; use backend='numpy' (or backend='auto', which runs NumPy "
        "code then)"))

    def check(op, a, b, message):
        found = problem(np.int64(a), np.int64(b))
        if found == _WRAPS:
            raise IntegerOverflowError(overflow)
        if found == _BY_ZERO:
            raise ZeroDivisionError(zero)
        if found == _NEGATIVE_SHIFT:
            raise ValueError(negative)
        if found == _LONG_SHIFT:
            raise IntegerOverflowError(long)

    return check


@overload(runtime.check_python_float, prefer_literal=True)
def _check_python_float(op, a, b, message):
    """Raise where ``a op b`` of Python numbers (``passes.integer_growth`` found them so) raises
    in Python and numba's gives inf or nan: a division by zero, ``0.0 ** -1``, a power past the
    largest float, and a negative number to a fractional power, a complex number in Python.
    Nothing on arrays or integers (``check_integer_range`` checks those)."""
    if not (isinstance(op, types.StringLiteral) and isinstance(message, types.StringLiteral)):
        return None
    if not (number_type(a) and number_type(b) and (isinstance(a, types.Float) or isinstance(b, types.Float))):
        return lambda op, a, b, message: None
    kind, text = op.literal_value, message.literal_value
    if kind != "**":
        by_zero = text.replace(OVERFLOW, _FLOAT_BY_ZERO[kind])

        def check_division(op, a, b, message):
            if b == 0:
                raise ZeroDivisionError(by_zero)

        return check_division
    negative, out_of_range, complex_result = (text.replace(OVERFLOW, reason) for reason in (
        "0.0 cannot be raised to a negative power", "(34, 'Numerical result out of range')",
        "a negative number to a fractional power, a complex number in Python, which numba computes as a float "
        "nan; use backend='numpy' (or backend='auto', which runs NumPy code then)"))

    def check_power(op, a, b, message):
        x, y = float(a), float(b)
        if y == 0 or not (np.isfinite(x) and np.isfinite(y)):
            return  # 1.0, nan or an infinity or 0 in Python too
        if x == 0 and y < 0:
            raise ZeroDivisionError(negative)
        if x < 0 and y != np.floor(y):
            raise ComplexPowerError(complex_result)
        if np.isinf(math.pow(x, y)):
            raise OverflowError(out_of_range)

    return check_power


_FLOAT_BY_ZERO = {"/": "float division by zero", "//": "float floor division by zero", "%": "float modulo",
                  "divmod": "float divmod()"}  # Python's messages


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


_FINE, _WRAPS, _BY_ZERO, _NEGATIVE_SHIFT, _LONG_SHIFT = range(5)  # what ``_PROBLEMS``' functions find


@njit
def _floor_division_problem(a, b):
    return _BY_ZERO if b == 0 else _WRAPS if a == _MIN and b == -1 else _FINE


@njit
def _shift_problem(a, b):
    return _NEGATIVE_SHIFT if b < 0 else _LONG_SHIFT if b >= 64 else _FINE


def _wrapping(wraps):
    return njit(lambda a, b: _WRAPS if wraps(a, b) else _FINE)


_PROBLEMS = {  # an operation of passes.integer_growth -> what makes numba's result not Python's
    "+": _wrapping(_sum_wraps), "-": _wrapping(_difference_wraps), "*": _wrapping(_product_wraps),
    "neg": _wrapping(njit(lambda a, b: a == _MIN)), "abs": _wrapping(njit(lambda a, b: a == _MIN)),
    "**": _wrapping(njit(lambda a, b: _product_wraps(a, a) or b == 3 and _product_wraps(a * a, a))),
    "numpy //": _wrapping(njit(lambda a, b: a == _MIN and b == -1)), "//": _floor_division_problem,
    "%": njit(lambda a, b: _BY_ZERO if b == 0 else _FINE), "/": njit(lambda a, b: _BY_ZERO if b == 0 else _FINE),
    ">>": _shift_problem}


def checked_math(kind, *args):
    """``math``'s function ``kind`` (a key of ``numba_static.MATH_CHECKED``) of ``args``, raising
    where Python's raises and numba's returns nan, inf or a wrapped integer."""
    return MATH_FUNCTIONS[kind](*args)


MATH_FUNCTIONS = {"sqrt": math.sqrt, "log": math.log, "log10": math.log10, "log2": math.log2, "log1p": math.log1p,
                  "acos": math.acos, "asin": math.asin, "acosh": math.acosh, "atanh": math.atanh, "cos": math.cos,
                  "sin": math.sin, "tan": math.tan, "exp": math.exp, "expm1": math.expm1, "cosh": math.cosh,
                  "sinh": math.sinh, "gamma": math.gamma, "lgamma": math.lgamma, "pow": math.pow,
                  "ldexp": math.ldexp, "floor": math.floor, "ceil": math.ceil, "trunc": math.trunc, "round": round,
                  "int": int}
# where a finite argument gives an infinite result, CPython raises OverflowError("math range
# error"), except at a pole (log(0), atanh(1), gamma(0), 0.0 ** -1), where it is a domain error
_RANGE = {"exp", "expm1", "cosh", "sinh", "gamma", "lgamma", "pow", "ldexp"}
_POLES = {"gamma": njit(lambda x, y: x == 0), "lgamma": njit(lambda x, y: x <= 0 and x == np.floor(x)),
          "pow": njit(lambda x, y: x == 0)}
_TO_INTEGER = {"floor", "ceil", "trunc", "round", "int"}  # a float to a Python int, which grows


@njit
def _never(x, y):
    return False


@njit
def _to_integer_checked(x):
    if np.isnan(x):
        raise ValueError("cannot convert float NaN to integer")
    if np.isinf(x):
        raise OverflowError("cannot convert float infinity to integer")
    if not -2.0 ** 63 <= x < 2.0 ** 63:
        raise IntegerOverflowError("a float converted to an integer passes 2**63, where numba's 64-bit integers "
                                   "wrap and Python's grow; use backend='numpy' (or backend='auto', which runs "
                                   "NumPy code then)")


@overload(checked_math, prefer_literal=True)
def _checked_math(kind, *args):
    if not isinstance(kind, types.StringLiteral):
        return None
    name = kind.literal_value
    if name == "int" and not isinstance(args[0], types.Float):
        return lambda kind, *args: int(args[0])  # an integer, or what numba's int() makes of it
    if not all(number_type(a) for a in args):
        return None
    function, pole = MATH_FUNCTIONS[name], _POLES.get(name, _never)
    overflows = name in _RANGE
    if name in _TO_INTEGER:
        if isinstance(args[0], types.Integer):
            return lambda kind, *args: function(args[0])

        def to_integer(kind, *args):
            _to_integer_checked(args[0])
            return function(args[0])

        return to_integer

    if name == "log" and len(args) == 2:
        def log_base(kind, *args):  # as Python computes it: log(x) / log(base)
            denominator = checked_math("log", args[1])
            if denominator == 0:
                raise ZeroDivisionError("float division by zero")
            return checked_math("log", args[0]) / denominator

        return log_base

    def check(kind, *args):
        x = args[0]
        y = args[-1]  # the second argument of pow and ldexp (x again for the others)
        result = function(*args)
        if np.isnan(result) and not (np.isnan(x) or np.isnan(y)):
            raise ValueError("math domain error")
        if np.isinf(result) and np.isfinite(x) and np.isfinite(y):
            if overflows and not pole(x, y):
                raise OverflowError("math range error")
            raise ValueError("math domain error")
        return result

    return check
