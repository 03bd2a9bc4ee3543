"""Constants a separately compiled helper saves for its backward function (an axis read off a
global or an attribute, an integer its caller passes, a literal trip count) stay constants
where that backward function is differentiated again: hessian, hvp, reverse over reverse and
third order (probes 13B, 15A). A value that depends on some parameter is never taken for one,
whatever the first derivative was taken in. Every value against finite differences."""
import types

import numpy as np
import pytest

import srcad

AXIS = 1
CONFIG = types.SimpleNamespace(axis=1, p=2.0)


def second_order_fd(f, x, v, eps=1e-5):
    """H·v by central differences of srcad's gradient (checked against finite differences at
    first order by the rest of the suite)."""
    g = srcad.grad(f)
    return (g(x + eps * v) - g(x - eps * v)) / (2 * eps)


def assert_every_second_order(f, x):
    v = np.linspace(0.5, 1.5, x.size)
    expected = second_order_fd(f, x, v)
    np.testing.assert_allclose(srcad.hvp(f)(x, v), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(srcad.hessian(f)(x) @ v, expected, rtol=1e-5, atol=1e-6)
    _, pullback = srcad.vjp(srcad.grad(f), x)  # reverse over reverse
    np.testing.assert_allclose(pullback(v), expected, rtol=1e-5, atol=1e-6)


def cumsum_global_axis(a):
    return np.cumsum(a, axis=AXIS)


def cumsum_attribute_axis(a):
    return np.cumsum(a, axis=CONFIG.axis)


def power_of_attribute(a):
    return np.float_power(a, CONFIG.p)


def nanmean_on(a, axis):
    return np.nanmean(a, axis=axis)


def average_on(a, axis):
    return np.average(a, axis=axis, weights=np.array([1.0, 2.0, 3.0]))


def ptp_on(a, axis):
    return np.ptp(a, axis=axis)


CASES = {
    "a global's axis": lambda x: np.sum(np.sin(cumsum_global_axis(x.reshape(2, 3)))),
    "an attribute's axis": lambda x: np.sum(np.sin(cumsum_attribute_axis(x.reshape(2, 3)))),
    "an attribute's exponent": lambda x: np.sum(np.sin(power_of_attribute(x))),
    "nanmean given an axis": lambda x: np.sum(nanmean_on(x.reshape(2, 3), 1) ** 2),
    "average given an axis": lambda x: np.sum(average_on(x.reshape(2, 3), 1) ** 2),
    "ptp given an axis": lambda x: np.sum(ptp_on(x.reshape(2, 3) ** 2, 1) ** 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_order_through_a_helper_keeps_its_constants(name):
    # before: a TypeError from inside srcad's rule helpers (the axis made a float), or NaN
    assert_every_second_order(CASES[name], np.array([0.3, -0.7, 1.1, 0.45, -1.3, 0.9]))


def bump(t, p):
    return np.exp(-t * t) * t ** p


def through_bump(t):
    return bump(t, 3)


def loop_helper(x):
    s = 0.0
    for k in range(3):
        s = s + np.sin(x * (k + 1))
    return s


def through_loop_helper(x):
    return loop_helper(x) * x


@pytest.mark.parametrize("f, t", [(through_bump, -0.6), (through_loop_helper, 0.4)])
def test_third_order_through_a_helper(f, t):
    # before: NaN (a constant exponent's 0 · log of a negative base) and a TypeError (float + list)
    g2 = srcad.grad(srcad.grad(f))
    expected = (g2(t + 1e-5) - g2(t - 1e-5)) / 2e-5
    np.testing.assert_allclose(srcad.grad(g2)(t), expected, rtol=1e-5)
    np.testing.assert_allclose(srcad.jvp(g2, (t,), (1.0,))[1], expected, rtol=1e-5)


def scaled_sine(a, n):
    k = n * 2.0
    return np.sin(a) * k


def mixed(x, n):
    return np.sum(scaled_sine(x, n) ** 2)


def test_a_parameter_left_out_of_the_first_derivative_is_not_a_constant():
    # the gradient in x, differentiated in n: what the helper saves from n carries n's derivative
    x, n = np.array([0.3, -0.7, 1.1]), 1.3
    g = srcad.grad(mixed, wrt=0)
    expected = (g(x, n + 1e-6) - g(x, n - 1e-6)) / 2e-6
    np.testing.assert_allclose(srcad.jacobian(g, wrt=1)(x, n), expected, rtol=1e-6)


def shifted_power(a, n):
    m = n + 1
    return a ** m


def power_of_a_parameter(x, n):
    return np.sum(shifted_power(x, n))


def test_an_integer_argument_that_is_differentiated_later_carries_its_derivative():
    x, n = np.array([0.3, 0.7, 1.1]), 2.0
    g = srcad.grad(power_of_a_parameter, wrt=0)
    expected = (g(x, n + 1e-6) - g(x, n - 1e-6)) / 2e-6
    np.testing.assert_allclose(srcad.jacobian(g, wrt=1)(x, n), expected, rtol=1e-6)


def test_the_backward_function_reads_its_constants_through_stop_gradient():
    pair = srcad.differentiable(cumsum_attribute_axis)
    pair.vjp(np.ones((2, 3)))
    source = pair.vjp_source
    assert "stop_gradient(_t1_saved)" in source and "_t1_saved, " in source


def power_sum(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(x ** (i + 1))
    return s


def through_power_sum(x):
    return power_sum(x, 3)


def test_a_loop_index_over_a_constant_range_is_a_constant_of_the_backward_function():
    # probe 17A: each exponent i + 1 got an adjoint, with log of a negative base (6 warnings)
    x = np.array([0.5, -0.8, 1.2])
    g = srcad.grad(through_power_sum)
    expected = np.array([(g(x + 1e-5 * e) - g(x - 1e-5 * e)) / 2e-5 for e in np.eye(3)]).T
    with np.errstate(invalid="raise"):
        np.testing.assert_allclose(srcad.jacobian(g)(x), expected, rtol=1e-5, atol=1e-7)
