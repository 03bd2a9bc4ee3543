"""``np.add.at(a, i, t)`` after an element store into ``a``: the reverse sweep gathers ``t``'s
adjoint from ``a``'s before it reverses the store, which zeroes those slots in place. With a
basic index (an int, a row) the gathered value was a view of the adjoint buffer and was zeroed
with it: a wrong gradient. Found by the fuzzer as a wrong second derivative (seed
120601363350): srcad's own first-order code reverses ``e[d] += c`` with ``scatter_add``."""
import numpy as np
import pytest

import srcad
from loop_checks import all_modes

RNG = np.random.default_rng(4)


def store_then_add_row(x):
    a = x * 3.0
    t = x[2] * 1.0
    a[2] = 0.0
    np.add.at(a, 2, t)
    return np.sum(a * x)


def store_then_add_rows(x):
    a = x * 3.0
    t = np.sin(x[1:3])
    a[1:3] = 0.0
    np.add.at(a, slice(1, 3), t)
    return np.sum(a * a)


def row_update_by_untyped_index(x):
    e = x ** 2
    d = [2][0]  # an index srcad cannot type: the update goes through the general path
    e[d] += 1.0
    return np.sum(e) ** 2


@pytest.mark.parametrize("fn", [store_then_add_row, store_then_add_rows, row_update_by_untyped_index])
def test_gradients_in_every_mode(fn):
    all_modes(fn, (RNG.standard_normal((4, 3)),))


def test_reverse_over_reverse_of_a_row_update_by_untyped_index():
    x, v, u = (RNG.standard_normal((4, 3)) for _ in range(3))
    gradient = srcad.grad(row_update_by_untyped_index)
    over_reverse = np.vdot(srcad.adjoint(gradient)(x, v), u)
    over_forward = np.vdot(v, srcad.jvp(gradient, (x,), (u,))[1])
    eps = 1e-6
    numeric = np.vdot(v, (gradient(x + eps * u) - gradient(x - eps * u)) / (2 * eps))
    assert np.isclose(over_reverse, over_forward, rtol=1e-9)
    assert np.isclose(over_reverse, numeric, rtol=1e-5)
