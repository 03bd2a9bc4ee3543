"""Builtin ``max``/``min`` where the pullback reads saved copies: the forward function copies
a value that may be your memory (a global, what your helper returns) apart from the others, so
the result is no longer the very item it was. The rule finds the chosen item all the same
(round 27 probe: the gradient of the chosen item was silently zero in ``vjp``,
``value_and_grad`` and ``jacobian(mode="rev")``)."""
import numpy as np
import pytest

import srcad
from srcad.rules.builtin_rules import chosen_index
from srcad.testing import check_grads

G = np.array([0.5])


def first(v):
    return v[0:1]  # a view of the argument


def softclip(v, hi):
    if v > hi:
        return hi + np.tanh(v - hi)
    return v  # the argument itself


def max_of_a_view(x):
    m = max(first(x), 0.5 * x[1:2])
    return np.sum(m ** 2)


def max_with_a_global(x):
    m = max(x[0:1] * 1.0, G)
    return np.sum(np.sin(m) * 3.0)


def min_with_a_global(x):
    m = min(G, x[1:2] * 2.0, x[2:3])
    return np.sum(m ** 3)


def clipped(theta):
    s = max(softclip(theta, 2.0), 0.1)
    return s ** 2


def keyed(x):
    m = min(x[0:1] * 1.0, -x[1:2], G, key=lambda a: abs(a[0]))
    return np.sum(m * 5.0)


def over_a_list(x):
    items = [first(x), G, x[3:4] * 1.0]
    return np.sum(max(items, key=lambda a: a[0]) ** 2)


X = np.array([0.9, 0.3, 1.5, 0.2])
# (function, argument, whether an item made from the argument is the extremum, not G)
CASES = [(max_of_a_view, X, True), (max_with_a_global, X, True), (max_with_a_global, X * 0.1, False),
         (min_with_a_global, X, False), (min_with_a_global, -X, True), (keyed, X, True), (keyed, X * 0.1, True),
         (over_a_list, X, True), (over_a_list, X[::-1].copy(), True), (over_a_list, X * 0.1, False)]


@pytest.mark.parametrize("fn,x,from_x", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_every_reverse_mode_agrees_with_finite_differences(fn, x, from_x):
    check_grads(fn, (x,), mode="both")  # (with a random cotangent)
    g = srcad.grad(fn)(x)
    assert np.allclose(srcad.value_and_grad(fn)(x)[1], g)
    assert np.allclose(srcad.vjp(fn, x)[1](1.0), g)
    assert np.allclose(srcad.jacobian(fn)(x), g)
    assert np.allclose(srcad.jacobian(fn, mode="fwd")(x), g)
    assert (np.abs(g).sum() > 0) == from_x  # the chosen item gets the cotangent


@pytest.mark.parametrize("theta", [0.7, 2.5, 0.05])
def test_a_zero_dimensional_argument_returned_by_a_helper(theta):
    t = np.array(theta)
    check_grads(clipped, (t,), mode="both")
    assert np.allclose(srcad.value_and_grad(clipped)(t)[1], 2 * max(min(theta, 2.0) if theta <= 2.0
                                                                  else 2.0 + np.tanh(theta - 2.0), 0.1)
                       * (0.0 if theta < 0.1 else 1.0 if theta <= 2.0 else 1.0 - np.tanh(theta - 2.0) ** 2))


def test_the_first_equal_item_is_the_one_max_took():
    a, b = np.array([1.0, np.nan]), np.array([1.0, np.nan])
    assert chosen_index([a.copy(), b.copy()], b.copy()) == 0  # max(a, b) with a == b returns a
    assert chosen_index([np.array([2.0]), a, b], b) == 2  # the item itself comes first
    assert chosen_index(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([3.0, 4.0])) == 1
    with pytest.raises(srcad.UnsupportedCaseError, match="cannot tell which item"):
        chosen_index([np.array([1.0])], np.array([2.0]))


def _np_max(x):
    return np.max(x)


def _np_maximum(x):
    return np.maximum(x[0], x[1])


def _np_minimum(x):
    return np.minimum(x[0], x[1])


def _np_clip_at_bounds(x):
    return np.sum(np.clip(x, 0.5, 1.0))


def _builtin_max(x):
    return max(x[0], x[1])


def _builtin_min(x):
    return min(x[1], x[0])


def test_documented_tie_conventions():
    """docs/limitations.md: NumPy's max/maximum/minimum/clip split a tie's cotangent equally;
    builtin max/min give all of it to the item returned (the first tied); jvp agrees with grad."""
    x = np.array([1.0, 1.0, 0.5])
    cases = [(_np_max, [0.5, 0.5, 0.0]), (_np_maximum, [0.5, 0.5, 0.0]), (_np_minimum, [0.5, 0.5, 0.0]),
             (_np_clip_at_bounds, [0.5, 0.5, 0.5]), (_builtin_max, [1.0, 0.0, 0.0]), (_builtin_min, [0.0, 1.0, 0.0])]
    for f, expected in cases:
        g = srcad.grad(f)(x)
        np.testing.assert_array_equal(g, expected)
        for k in range(3):
            assert srcad.jvp(f, (x,), (np.eye(3)[k],))[1] == expected[k]
