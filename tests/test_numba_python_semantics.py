"""The numba backend gives what the Python function gives, or raises: integer operations where
numba's 64-bit result is not Python's (a negation, an absolute value, a floor division or a
square past 2**63, a division by zero, a shift count), NumPy integers narrower than 64 bits,
and ``math`` functions at the arguments where Python's raise."""
import math

import numpy as np
import pytest

import srcad
from srcad.backends.numba_backend import BackendCompileError
from srcad.errors import IntegerOverflowError

pytest.importorskip("numba")

X = np.array([0.5, 0.3, 0.2])
INT64_MIN = -2 ** 63


def negated(x, n):
    k = -n
    return x[0] * (k % 7)


def absolute(x, n):
    k = abs(n)
    return x[0] * (k % 7)


def floor_divided(x, n):
    k = n // -1
    return x[0] * (k % 7)


def squared(x, n):
    k = n ** 2
    return x[0] * (k % 7)


def cubed(x, n):
    k = n ** 3
    return x[0] * (k % 7)


@pytest.mark.parametrize("fn, n", [(negated, INT64_MIN), (absolute, INT64_MIN), (floor_divided, INT64_MIN),
                                   (squared, 2 ** 40), (cubed, 2 ** 30)])
def test_an_integer_result_past_64_bits_raises_and_auto_gives_pythons_value(fn, n):
    with pytest.raises(IntegerOverflowError, match=r"test_numba_python_semantics\.py:\d+: integer arithmetic "
                       r"passes 2\*\*63 here"):
        srcad.value_and_grad(fn, backend="numba")(X, n)
    value, grad = srcad.value_and_grad(fn, backend="auto")(X, n)
    assert value == fn(X, n)
    np.testing.assert_array_equal(grad, [fn(X, n) / X[0], 0.0, 0.0])
    # control: the same code on integers that fit
    small = srcad.value_and_grad(fn, backend="numba")(X, -12345)
    assert small[0] == fn(X, -12345)


def mod_minus_one(x, n):
    k = n % -1  # 0 for every n, in Python and compiled
    return x[0] * (k + 1)


def test_a_remainder_by_minus_one_compiles():
    assert srcad.value_and_grad(mod_minus_one, backend="numba")(X, INT64_MIN)[0] == X[0]


def floor_quotient(x, n):
    k = 7 // n
    return x[0] * k


def remainder(x, n):
    k = 7 % n
    return x[0] * k


def quotient(x, n):
    k = 7 / n
    return x[0] * k


@pytest.mark.parametrize("fn", [floor_quotient, remainder, quotient])
def test_a_python_integer_divided_by_zero_raises_as_in_python(fn):
    with pytest.raises(ZeroDivisionError):
        fn(X, 0)
    with pytest.raises(ZeroDivisionError, match=r"test_numba_python_semantics\.py:\d+: integer division or "
                       r"modulo by zero\n    k = 7 "):
        srcad.value_and_grad(fn, backend="numba")(X, 0)
    assert srcad.value_and_grad(fn, backend="numba")(X, 3)[0] == fn(X, 3)  # control


def numpy_floor_quotient(x, m):
    k = 7 // m[0]  # a NumPy integer: 0 (with a warning) in NumPy, as compiled
    return x[0] * (k + 1)


def test_a_numpy_integer_divided_by_zero_is_zero_as_in_numpy():
    m = np.array([0, 1])
    with np.errstate(divide="ignore"):
        assert srcad.value_and_grad(numpy_floor_quotient, backend="numba")(X, m)[0] == numpy_floor_quotient(X, m)


def shifted_right(x, n):
    k = 5 >> n
    return x[0] * (k + 1)


def test_a_right_shift_by_a_negative_or_a_long_count_is_not_wrong():
    with pytest.raises(ValueError, match="negative shift count"):
        srcad.grad(shifted_right, backend="numba")(X, -1)
    with pytest.raises(IntegerOverflowError, match="a right shift by 64 bits or more"):
        srcad.grad(shifted_right, backend="numba")(X, 64)  # numba's 5 >> 64 is 5, Python's 0
    np.testing.assert_array_equal(srcad.grad(shifted_right, backend="auto")(X, 64), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(srcad.grad(shifted_right, backend="numba")(X, 1), [3.0, 0.0, 0.0])  # control


def narrow_sum(x, m):
    k = m[0] + m[1]  # int32: wraps at 32 bits in NumPy
    return x[0] * (k % 7)


def narrow_difference(x, m):
    k = m[0] - m[1]  # uint8: 255 in NumPy
    return x[0] * (k % 7)


@pytest.mark.parametrize("fn, m", [(narrow_sum, np.array([2 ** 31 - 1, 1], np.int32)),
                                   (narrow_difference, np.array([1, 2], np.uint8))])
def test_arithmetic_of_narrow_numpy_integers_is_refused_and_auto_gives_numpys_value(fn, m):
    with pytest.raises(BackendCompileError, match=r"test_numba_python_semantics\.py:\d+: .*narrower than 64 bits"):
        srcad.grad(fn, backend="numba")(X, m)
    with np.errstate(over="ignore"):
        expected = fn(X, m) / X[0]
        np.testing.assert_array_equal(srcad.grad(fn, backend="auto")(X, m), [expected, 0.0, 0.0])


def math_of(name, *second):
    function = getattr(math, name)  # a closure value: checked as math.name is
    if second:
        (b,) = second

        def f(x, a):
            return x[0] * function(a, b)
    else:
        def f(x, a):
            return x[0] * function(a)

    f.__name__ = f"math_{name}"
    return f


def log_base(x, a):
    return x[0] * math.log(8.0, a)


def rounded(x, a):
    return x[0] * round(a)


def floored(x, a):
    return x[0] * math.floor(a)


@pytest.mark.parametrize("fn, a, error, good", [
    (log_base, 1.0, ZeroDivisionError, 2.0), (log_base, 0.0, ValueError, 2.0), (log_base, -2.0, ValueError, 2.0),
    (math_of("pow", 0.5), -2.0, ValueError, 2.0), (math_of("pow", -1.0), 0.0, ValueError, 2.0),
    (math_of("pow", 2.0), 1e300, OverflowError, 2.0), (math_of("gamma"), 0.0, ValueError, 2.5),
    (math_of("gamma"), -2.0, ValueError, -2.5), (math_of("gamma"), 200.0, OverflowError, 2.5),
    (math_of("lgamma"), -2.0, ValueError, -2.5), (math_of("exp"), 1000.0, OverflowError, 2.0),
    (math_of("cosh"), 1000.0, OverflowError, 2.0), (math_of("cos"), math.inf, ValueError, 2.0),
    (math_of("asin"), 1.5, ValueError, 0.5), (math_of("atanh"), 1.0, ValueError, 0.5),
    (math_of("log1p"), -1.0, ValueError, 0.5), (rounded, math.nan, ValueError, 2.5),
    (rounded, math.inf, OverflowError, 3.5), (floored, math.nan, ValueError, -2.5)])
def test_math_raises_where_python_raises(fn, a, error, good):
    with pytest.raises(error):
        fn(X, a)
    with pytest.raises(error):
        srcad.value_and_grad(fn, backend="numba")(X, a)
    value, grad = srcad.value_and_grad(fn, backend="numba")(X, good)  # control (numba's gamma: not to the last bit)
    np.testing.assert_allclose(value, fn(X, good), rtol=1e-13)
    np.testing.assert_allclose(grad, [fn(X, good) / X[0], 0.0, 0.0], rtol=1e-13)


def test_a_float_made_an_integer_past_64_bits_raises_and_auto_gives_pythons_value():
    with pytest.raises(IntegerOverflowError, match="passes 2\\*\\*63"):
        srcad.grad(floored, backend="numba")(X, 1e300)
    np.testing.assert_array_equal(srcad.grad(floored, backend="auto")(X, 1e300), [1e300, 0.0, 0.0])


def fmod_of(x, a):
    return x[0] * math.fmod(1.0, a)


def test_a_math_function_not_known_to_compile_with_pythons_meaning_is_refused():
    with pytest.raises(BackendCompileError, match=r"test_numba_python_semantics\.py:\d+: .*math\.fmod\(\) is not "
                       "known to compile with Python's meaning"):
        srcad.grad(fmod_of, backend="numba")(X, 0.0)


def update_the_argument(U):
    s = U[1] * 2.0
    U[0] -= 0.05
    return U[0] * s


def test_an_update_of_the_argument_is_refused_at_the_line_of_the_update():
    line = update_the_argument.__code__.co_firstlineno + 2
    with pytest.raises(BackendCompileError, match=rf"test_numba_python_semantics\.py:{line}: .*updates its argument "
                       r"'U' in place.*\n    U\[0\] -= 0\.05"):
        srcad.grad(update_the_argument, backend="numba")(np.array([1.0, 2.0]))
