"""``min``/``max`` over arguments give the cotangent to the first chosen argument only, also
when one value is passed twice (``min(a, t, t)`` gave ``t`` twice its gradient: the rule
asked of each later argument only whether the first one was chosen, a silent wrong gradient
in reverse and forward mode alike)."""
import numpy as np
import pytest

import srcad
from loop_checks import all_modes

RNG = np.random.default_rng(8)


def min_with_a_repeat(x):
    a = x[0] + 10.0
    t = x[1] * 1.0
    return min(a, t, t)


def max_with_a_repeat_last(x):
    a = x[0] - 10.0
    t = x[1] * 2.0
    return max(t, a, t) * x[2]


def min_through_an_alias(x):
    t = np.sin(x[1])
    u = t
    return min(x[0] + 5.0, t, u, t)


def softmin_of_a_repeated_cell(x, gamma):
    total = 0.0
    for i in range(1, x.shape[0]):
        left = x[i - 1] ** 2
        here = x[i] ** 2
        m = min(here, left, left)
        total = total + m * m - gamma * np.log(np.exp(-(left - m) / gamma) + np.exp(-(here - m) / gamma))
    return total


@pytest.mark.parametrize("fn", [min_with_a_repeat, max_with_a_repeat_last, min_through_an_alias])
def test_a_repeated_argument_gets_the_cotangent_once(fn):
    all_modes(fn, (RNG.standard_normal(3),))


def test_in_a_loop():
    all_modes(softmin_of_a_repeated_cell, (RNG.standard_normal(6), 0.5), wrt=0)


def test_values_where_finite_differences_cannot_look():
    # ties between distinct values: Python's min returns the first, which alone gets it
    def f(x):
        return min(x[0] * 1.0, x[1] * 1.0, x[1] * 1.0)

    np.testing.assert_array_equal(srcad.grad(f)(np.array([2.0, 2.0])), [1.0, 0.0])
    np.testing.assert_array_equal(srcad.grad(min_with_a_repeat)(np.array([0.0, 3.0, 1.0])), [0.0, 1.0, 0.0])
    tangent = srcad.jvp(min_with_a_repeat, (np.array([0.0, 3.0, 1.0]),), (np.array([0.0, 1.0, 0.0]),))[1]
    assert tangent == 1.0


def test_the_numba_backend_agrees():
    pytest.importorskip("numba")
    x = RNG.standard_normal(5)
    compiled = srcad.grad(softmin_of_a_repeated_cell, wrt=0, backend="numba")(x, 0.5)
    np.testing.assert_allclose(compiled, srcad.grad(softmin_of_a_repeated_cell, wrt=0)(x, 0.5), rtol=1e-12)
