"""A jvp rule of yours writes a tangent that fits its value (or broadcasts to it); one larger
than the value (an array for a number) is refused when it runs, naming the rule, instead of
broadcasting into everything the value meets."""
import numpy as np
import pytest

import srcad


@srcad.custom_vjp
def total(x):
    return np.sum(x)


@total.defvjp
def total_vjp(y, x):
    d[x] += d[y]  # noqa: F821


@total.defjvp
def total_jvp(y, x):
    t[y] += t[x]  # noqa: F821  (a mistake: np.sum(t[x]))


@srcad.custom_vjp
def shifted(x, s):
    return x + s


@shifted.defvjp
def shifted_vjp(y, x, s):
    d[x] += d[y]  # noqa: F821
    d[s] += np.sum(d[y])  # noqa: F821


@shifted.defjvp
def shifted_jvp(y, x, s):
    t[y] += t[x] + t[s]  # noqa: F821  (a number's tangent broadcast into an array's: right)


def uses_total(x):
    return np.sum(total(x) * np.array([1.0, 2.0, 3.0]))  # the wrong tangent would broadcast here


def uses_shifted(x, s):
    return np.sum(shifted(x, s) ** 2)


def test_a_rule_tangent_larger_than_its_value_is_refused():
    x = np.array([0.3, -0.2, 0.5])
    with pytest.raises(srcad.SrcadError, match=r"the jvp rule total_jvp writes a tangent of shape \(3,\) into"):
        srcad.jvp(uses_total, (x,), (np.ones(3),))


def test_a_rule_tangent_that_broadcasts_to_its_value_is_kept():
    x, s = np.array([0.3, -0.2, 0.5]), 0.7
    dx, ds = np.array([0.2, 1.0, -0.4]), -0.6
    _, tangent = srcad.jvp(uses_shifted, (x, s), (dx, ds))
    e = 1e-6
    fd = (uses_shifted(x + e * dx, s + e * ds) - uses_shifted(x - e * dx, s - e * ds)) / (2 * e)
    assert np.isclose(tangent, fd, rtol=1e-6)
