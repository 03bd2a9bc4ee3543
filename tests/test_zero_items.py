"""An item of a tuple result that gets no cotangent is a zero the reverse sweep skips, not an
array of zeros multiplied through: where the values feeding only that item overflow to inf,
the gradient is 0 there (JAX and PyTorch carry symbolic zeros and agree), never 0 · inf = NaN.

The caller of a Python function hands its backward ``None`` for items it does not read
(``runtime.none_items``); a function that returns a tuple or list display keeps a ``None``
item of its cotangent as a zero (``runtime.cotangent_items``). Every program is checked in
every mode against finite differences; the fuzzer found the first (seed 120401363222)."""
import numpy as np
import pytest

import srcad
from srcad.testing import check_grads, check_jvp

from lang_checks import check_all_modes


def blows_up(x):
    big = x
    for k in range(4):
        big = big * big * 1e80
    return big, 0.5 * x


def reads_the_finite_item(x):
    a, b = blows_up(x)
    return np.sum(b * b)


def layer(x, w):
    h = np.tanh(w * x)
    cache = [h, np.exp(w * x * 1e3)]  # exp overflows: only a cache
    return h, cache


def reads_the_output_of_a_layer(x):
    total = 0.0
    for k in range(3):
        h, cache = layer(x, 0.7 + 0.1 * k)
        total = total + np.sum(h ** 2)
    return total


def pair(x):
    return np.sin(x), np.cos(x) * x


def reads_both_items(x):
    s, c = pair(x)
    return np.sum(s * c) + np.sum(c)


def reads_one_item_in_a_loop(x):
    acc = x
    for k in range(3):
        acc = pair(acc)[1] + 0.1
    return np.sum(acc)


def returns_in_two_places(x):
    if x[0] > 0:
        return x * 2.0, x
    return x * 3.0, x


def reads_item_of_two_returns(x):
    return np.sum(returns_in_two_places(x)[0] ** 2)


PROGRAMS = [reads_both_items, reads_one_item_in_a_loop, reads_item_of_two_returns]
OVERFLOWING = [reads_the_finite_item, reads_the_output_of_a_layer]
X = np.array([0.4, -1.3, 2.2])


@pytest.mark.parametrize("f", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_every_mode(f):
    check_all_modes(f, (X,))


@pytest.mark.parametrize("f", OVERFLOWING, ids=[f.__name__ for f in OVERFLOWING])
def test_first_order_and_hvp_where_an_unread_item_overflows(f):
    # reverse over reverse still meets the overflow: the saved infinite values' adjoints are
    # dense zeros there (docs/limitations.md)
    with np.errstate(over="ignore", invalid="ignore"):
        check_grads(f, (X,), modes=("rev",))
        check_jvp(f, (X,))
        u = np.array([0.3, -0.5, 0.8])
        gradient = srcad.grad(f)
        numeric = (gradient(X + 1e-6 * u) - gradient(X - 1e-6 * u)) / 2e-6
        np.testing.assert_allclose(srcad.hvp(f)(X, u), numeric, rtol=1e-5, atol=1e-7)


def test_no_nan_where_an_unread_item_overflows():
    with np.errstate(over="ignore", invalid="ignore"):
        g = srcad.grad(reads_the_finite_item)(X)
        np.testing.assert_allclose(g, 0.5 * X)
        g = srcad.grad(reads_the_output_of_a_layer)(X)
    assert np.all(np.isfinite(g))


def test_a_pullback_given_none_for_an_item():
    """``pullback((v, None))`` of a layer whose cache overflows: the gradient of its output."""
    with np.errstate(over="ignore", invalid="ignore"):
        (h, cache), pullback = srcad.vjp(layer, X, 0.7, wrt=0)
        v = np.array([1.0, -2.0, 0.5])
        got = pullback((v, None))
    assert not np.all(np.isfinite(cache[1]))
    np.testing.assert_allclose(got, v * 0.7 * (1 - np.tanh(0.7 * X) ** 2))
