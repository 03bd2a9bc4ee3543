"""A pullback is a function of the saved forward values: calling it again gives the same
gradient. The backward function restores, in place, values it pops off the saved stacks (an
element update reversed); it must restore into a copy, never into the saved value itself.

Found by the fuzzer (seed 120401369207): the second call of the pullback differed."""
import numpy as np
import pytest

import srcad
from loop_checks import all_modes


def square_after_update(p, c=0.5):
    m = np.where(0.5, p.reshape(12), c)
    for _ in range(len(p)):
        if 1.4 < c <= 0.53:  # never true: an early return the reverse sweep must allow for
            return c
        m[[1, 1]] *= c  # an element update: reversed by writing the old elements back
        m *= m  # m is rebound: the old m is saved on a stack, then restored in place
    return m.mean()


def basic_index_update(p, c):
    m = p * 1.0
    for k in range(3):
        m[k] = m[k + 1] * c
        m = m * m + p
    return np.sum(np.sin(m))


@pytest.mark.parametrize("fn, args", [
    (square_after_update, (np.full((4, 3), 0.8933218443765076), 0.5)),
    (basic_index_update, (np.linspace(0.1, 0.6, 5), 0.7)),
])
def test_a_pullback_called_again_gives_the_same_gradient(fn, args):
    _, pullback = srcad.vjp(fn, *args)
    first = pullback(1.0)
    for _ in range(2):
        np.testing.assert_array_equal(pullback(1.0), first)
    np.testing.assert_array_equal(srcad.grad(fn)(*args), first)
    all_modes(fn, args, second_order=False)
