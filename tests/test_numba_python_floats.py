"""The numba backend gives what the Python function gives, or raises, on Python floats: a
division, floor division, remainder or ``divmod`` by zero raises ``ZeroDivisionError`` (numba's
gives inf or nan), and so does ``0.0 ** -1``; a power past the largest float raises
``OverflowError``; a negative float to a fractional power (complex in Python) raises
``ComplexPowerError``, after which ``"auto"`` runs NumPy code; ``int(x)`` of a float is checked
as ``math.trunc`` is; ``round(x, n)`` of a Python float is refused. NumPy scalars keep NumPy's
inf (controls)."""
import math

import numpy as np
import pytest

import srcad
from srcad.backends.numba_backend import BackendCompileError
from srcad.errors import ComplexPowerError, IntegerOverflowError

pytest.importorskip("numba")

X = np.array([0.5, 0.3, 0.2])
HERE = r"test_numba_python_floats\.py:\d+: "


def quotient(x, a):
    return x[0] * (1.0 / a)


def floor_quotient(x, a):
    return x[0] * (1.0 // a)


def remainder(x, a):
    return x[0] * (1.0 % a)


def quotient_of_a_computed_float(x, a):
    b = a * 2.0
    return x[0] * (3.0 / b)


def quotient_of_an_integer(x, a):
    return x[0] * (3 / a)


def divmod_sum(x, a):
    q, r = divmod(1.0, a)
    return x[0] * (q + r)


def reciprocal_power(x, a):
    return x[0] * a ** -1


def root_power(x, a):
    return x[0] * a ** -0.5


def power_of_zero(x, a):
    return x[0] * 0.0 ** a


def builtin_pow(x, a):
    return x[0] * pow(a, -1.0)


@pytest.mark.parametrize("fn, message, good", [
    (quotient, "float division by zero", 2.0), (floor_quotient, "float floor division by zero", 0.25),
    (remainder, "float modulo", -0.75), (quotient_of_a_computed_float, "float division by zero", 2.0),
    (quotient_of_an_integer, "float division by zero", 2.0), (divmod_sum, r"float divmod\(\)", 0.75),
    (reciprocal_power, "0.0 cannot be raised to a negative power", 2.0),
    (root_power, "0.0 cannot be raised to a negative power", 2.0)])
def test_a_python_float_divided_by_zero_raises_as_in_python(fn, message, good):
    with pytest.raises(ZeroDivisionError, match=message):
        fn(X, 0.0)
    with pytest.raises(ZeroDivisionError, match=HERE + message):
        srcad.value_and_grad(fn, backend="numba")(X, 0.0)
    value, grad = srcad.value_and_grad(fn, backend="numba")(X, good)  # control
    assert value == fn(X, good)
    np.testing.assert_allclose(grad, [fn(X, good) / X[0], 0.0, 0.0], rtol=1e-15)


@pytest.mark.parametrize("fn", [power_of_zero, builtin_pow])
def test_zero_to_a_negative_power_raises_as_in_python(fn):
    a = -1.0 if fn is power_of_zero else 0.0
    with pytest.raises(ZeroDivisionError):
        fn(X, a)
    with pytest.raises(ZeroDivisionError, match=HERE + "0.0 cannot be raised to a negative power"):
        srcad.value_and_grad(fn, backend="numba")(X, a)


def square(x, a):
    return x[0] * a ** 2


def test_a_power_past_the_largest_float_raises_as_in_python():
    with pytest.raises(OverflowError):
        square(X, 1e200)
    with pytest.raises(OverflowError, match=HERE + r"\(34, 'Numerical result out of range'\)"):
        srcad.value_and_grad(square, backend="numba")(X, 1e200)
    assert srcad.value_and_grad(square, backend="numba")(X, 3.0)[0] == square(X, 3.0)  # control


def cube_root(x, a):
    return x[0] * a ** (1 / 3)


def test_a_negative_float_to_a_fractional_power_is_complex_in_python_and_raises_compiled():
    assert isinstance((-8.0) ** (1 / 3), complex)
    with pytest.raises(ComplexPowerError, match=HERE + "a negative number to a fractional power, a complex "
                       r"number in Python.*\n    return x\[0\] \* a \*\* \(1 / 3\)"):
        srcad.value_and_grad(cube_root, backend="numba")(X, -8.0)
    with pytest.warns(Warning, match="discards the imaginary part"):  # NumPy code's value, and its warning
        assert srcad.value_and_grad(cube_root, backend="auto")(X, -8.0)[0] == cube_root(X, -8.0)
    np.testing.assert_allclose(srcad.value_and_grad(cube_root, backend="numba")(X, 8.0)[0], 1.0, rtol=1e-15)


def numpy_quotient(x, a):
    return x[0] * (1.0 / a[0])  # a NumPy float: inf (with a warning) in NumPy, as compiled


def test_a_numpy_float_divided_by_zero_is_inf_as_in_numpy():
    a = np.array([0.0])
    with np.errstate(divide="ignore"):
        assert srcad.value_and_grad(numpy_quotient, backend="numba")(X, a)[0] == numpy_quotient(X, a) == np.inf


def truncated(x, a):
    return x[0] * (int(a) % 7)


@pytest.mark.parametrize("a, error", [(math.nan, ValueError), (math.inf, OverflowError), (-math.inf, OverflowError)])
def test_int_of_a_float_compiles_and_raises_where_python_raises(a, error):
    with pytest.raises(error):
        truncated(X, a)
    with pytest.raises(error, match="cannot convert float"):
        srcad.value_and_grad(truncated, backend="numba")(X, a)
    for good in (2.5, -2.5, 1e18):
        value, grad = srcad.value_and_grad(truncated, backend="numba")(X, good)
        assert value == truncated(X, good)
        np.testing.assert_array_equal(grad, [int(good) % 7, 0.0, 0.0])


def test_int_of_a_float_past_64_bits_raises_and_auto_gives_pythons_value():
    with pytest.raises(IntegerOverflowError, match=r"passes 2\*\*63"):
        srcad.grad(truncated, backend="numba")(X, 1e19)
    np.testing.assert_array_equal(srcad.grad(truncated, backend="auto")(X, 1e19), [int(1e19) % 7, 0.0, 0.0])


def rounded_to_digits(x, a):
    return x[0] * round(a, 2)


def numpy_rounded_to_digits(x, a):
    return x[0] * round(a[0], 2)  # NumPy's rounding, which numba's is


def test_round_to_digits_of_a_python_float_is_refused_at_its_line():
    assert round(2.675, 2) == 2.67  # and 2.68 compiled
    line = rounded_to_digits.__code__.co_firstlineno + 1
    with pytest.raises(BackendCompileError, match=rf"test_numba_python_floats\.py:{line}: .*round\(x, n\) of a "
                       r"Python float"):
        srcad.grad(rounded_to_digits, backend="numba")(X, 2.675)
    np.testing.assert_array_equal(srcad.grad(rounded_to_digits, backend="auto")(X, 2.675), [2.67, 0.0, 0.0])
    a = np.array([2.675])
    np.testing.assert_array_equal(srcad.grad(numpy_rounded_to_digits, backend="numba")(X, a),
                                  [round(a[0], 2), 0.0, 0.0])  # control


def replaced(U):
    s = U[1] * 2.0
    U -= 0.05
    return U[0] * s


def test_an_update_of_the_whole_argument_is_refused_at_the_line_of_the_update():
    line = replaced.__code__.co_firstlineno + 2
    with pytest.raises(BackendCompileError, match=rf"test_numba_python_floats\.py:{line}: .*updates its argument "
                       r"'U' in place.*\n    U -= 0\.05"):
        srcad.grad(replaced, backend="numba")(np.array([1.0, 2.0]))


def compared(x, a):
    s = 0.0
    if a == a:
        s = s + x[0]
    if 0.0 < a < 1.0:
        s = s + x[1]
    if a:
        s = s + x[2]
    return s + x[0] * max(a, 1.0) + x[1] * max(1.0, a) + x[2] * min(a, -1.0) + x[0] * abs(-a) + x[1] * (a % -3.0)


@pytest.mark.parametrize("a", [math.nan, 0.5, -0.0, -2.5, math.inf])
def test_comparisons_extrema_and_remainders_of_floats_are_pythons(a):
    value, grad = srcad.value_and_grad(compared, backend="numba")(X, a)
    expected = compared(X, a)
    np.testing.assert_array_equal(value, expected)
    np.testing.assert_array_equal(grad, srcad.grad(compared)(X, a))
