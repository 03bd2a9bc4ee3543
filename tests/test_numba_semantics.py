"""The numba backend computes what the NumPy code computes, or refuses (probe round 8):
integers that outgrow 64 bits, float division by zero, indexes out of bounds, integer
powers, and errors of numba's own compiler."""
import math

import numpy as np
import pytest

import srcad
from srcad.backends.numba_backend import BackendCompileError

pytest.importorskip("numba")

X = np.array([0.1, -0.4, 0.7, 1.3, 0.2, -0.9])


def central(fn, x, eps=1e-6):
    return np.array([(fn(x + eps * e) - fn(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


def hashed_weights(x):
    c = 1
    s = 0.0
    for t in range(x.shape[0]):
        c = c * 1000003  # past 2**63 after four steps: numba's int64 would wrap
        s += x[t] * (c % 5)
    return s


def test_an_integer_product_carried_around_a_loop_is_refused_and_auto_runs_numpy():
    with pytest.raises(BackendCompileError, match="2\\*\\*63") as info:
        srcad.grad(hashed_weights, backend="numba")(X)
    assert "c = c * 1000003" in str(info.value)
    np.testing.assert_allclose(srcad.grad(hashed_weights, backend="auto")(X), central(hashed_weights, X), atol=1e-6)


def flattened_index(x):
    n = 2
    s = 0.0
    for i in range(3):
        for j in range(n):
            k = i * n + j  # index arithmetic: nothing carried around
            s += x[k] * x[k] * (k + 1)
    return s


def test_index_arithmetic_is_compiled():
    got = srcad.grad(flattened_index, backend="numba")(X)
    np.testing.assert_allclose(got, central(flattened_index, X), atol=1e-6)


def power_series(x):
    s = 0.0
    for k in range(5):
        s += x[0] ** k + x[1] ** (k + 1)
    return s


def test_powers_with_an_integer_loop_variable_compile():
    got = srcad.grad(power_series, backend="numba")(X)
    np.testing.assert_allclose(got, srcad.grad(power_series)(X), rtol=1e-12)
    np.testing.assert_allclose(got, central(power_series, X), atol=1e-6)


def capped_ratios(x):
    s = 0.0
    for i in range(1, x.shape[0]):
        s += min(x[i] / x[i - 1], 10.0)  # x[i - 1] == 0: inf, then the cap
    return s


def test_a_float_division_by_zero_is_inf_as_in_numpy():
    x = np.array([1.0, 0.0, 2.0, 0.5])
    with np.errstate(divide="ignore", invalid="ignore"):
        value, expected = srcad.value_and_grad(capped_ratios)(x)
        got_value, got = srcad.value_and_grad(capped_ratios, backend="numba")(x)
        assert got_value == value == capped_ratios(x)
    np.testing.assert_array_equal(got, expected)


def off_by_one(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i + 1]  # x[n] is out of bounds
    return s


def test_an_index_out_of_bounds_raises_as_in_python():
    with pytest.raises(IndexError):
        srcad.grad(off_by_one)(X)
    with pytest.raises(IndexError):
        srcad.grad(off_by_one, backend="numba")(X)


def accumulates(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sin(x[i]) * x[i]  # a float updated with +=
    return s


def test_a_float_accumulator_updated_in_place_compiles():
    got = srcad.grad(accumulates, backend="numba")(X)
    np.testing.assert_allclose(got, srcad.grad(accumulates)(X), rtol=1e-12)


RATES = (1.0, 2.0)


def tuple_of_rates(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + RATES[0] * math.sin(RATES[1] * x[i])
    return s


def test_a_global_tuple_of_numbers_is_compiled_and_its_rebinding_seen():
    global RATES
    grad = srcad.grad(tuple_of_rates, backend="numba")
    np.testing.assert_allclose(grad(X), srcad.grad(tuple_of_rates)(X), rtol=1e-12)
    RATES = (3.0, 0.5)
    try:
        np.testing.assert_allclose(grad(X), 1.5 * np.cos(0.5 * X), rtol=1e-12)
    finally:
        RATES = (1.0, 2.0)


def backward_numba_refuses(s0):
    acc = 0.0
    for i in range(3):
        w = s0 * 1.0
        acc = acc + w[0] * w[1]
    return acc + np.reshape(s0, (3,))[1]  # numba compiles the forward sweep, not the backward one


def test_auto_runs_both_sweeps_in_numpy_when_numba_compiles_only_the_forward_one():
    x = np.array([1.0, 0.3, 0.7])
    expected = srcad.value_and_grad(backward_numba_refuses)(x)
    value, grad = srcad.value_and_grad(backward_numba_refuses, backend="auto")(x)
    assert value == expected[0]
    np.testing.assert_allclose(grad, expected[1], rtol=1e-12)
    y, pullback = srcad.vjp(backward_numba_refuses, x, backend="auto")
    np.testing.assert_allclose(pullback(1.0), expected[1], rtol=1e-12)


def test_auto_after_a_refusal_of_numba_in_the_same_process_agrees():
    x = np.array([0.6, 0.3, 0.7])
    with pytest.raises(BackendCompileError):  # compiles the forward sweep, then refuses the backward one
        srcad.value_and_grad(backward_numba_refuses, backend="numba")(x)
    value, grad = srcad.value_and_grad(backward_numba_refuses, backend="auto")(x)
    np.testing.assert_allclose(grad, srcad.grad(backward_numba_refuses)(x), rtol=1e-12)


def doubling(x):
    c = 1
    s = 0.0
    for t in range(70):
        c = c + c  # a sum carried around the loop grows too
        s = s + x[t % 3] * (c % 7)
    return s


def fibonacci_weights(x):
    a, b = 0, 1
    s = 0.0
    for t in range(100):
        a, b = b, a + b
        s = s + x[t % 3] * (b % 5)
    return s


def shifted(x):
    c = 1
    s = 0.0
    for t in range(70):
        c <<= 1
        s = s + x[t % 3] * (c % 7)
    return s


def negative_power(x):
    s = 0.0
    for t in range(6):
        s = s + x[t % 3] * 2 ** (t - 3)  # a float in Python for t < 3
    return s


def counted(x):
    k = 0
    s = 0.0
    for t in range(6):
        k = k + 2  # a counter: kept
        s = s + x[k % 3] * (k % 5) + x[t % 3] * t ** 2
    return s


@pytest.mark.parametrize("fn", [doubling, fibonacci_weights, shifted, negative_power])
def test_python_integer_arithmetic_numba_would_compute_otherwise_is_refused(fn):
    x = np.array([0.5, 0.3, 0.2])
    with pytest.raises(BackendCompileError, match="2\\*\\*63"):
        srcad.grad(fn, backend="numba")(x)
    np.testing.assert_allclose(srcad.grad(fn, backend="auto")(x), central(fn, x), atol=1e-6)


def test_counters_and_small_powers_of_integers_compile():
    x = np.array([0.5, 0.3, 0.2])
    np.testing.assert_allclose(srcad.grad(counted, backend="numba")(x), central(counted, x), atol=1e-6)
