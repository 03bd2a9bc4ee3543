"""Division by an array with a number written as the numerator (rules/operators.py): the adjoint
reads the quotient, not the divisor (``1.0 / u``: a sigmoid's), so a loop keeps no divisor per
step; every other numerator (0, a name, a tuple, inf) keeps the general rule. Right in every
mode, at second order, and where the divisor is infinite or zero."""
import numpy as np
import pytest

import srcad
from loop_checks import all_modes


def sigmoid_steps(w, x):
    h = x
    for _ in range(3):
        h = 1.0 / (1.0 + np.exp(-(h * w)))
    return np.sum(h * h)


def numerators(u, c):
    return np.sum(1 / u + 2.5 / u - 3 / (u * u) + True / u + c / u + 0.0 / u) + np.sum((1.0, 2.0) / u[:2])


U = np.array([0.7, -1.3, 2.1, 0.4])


@pytest.mark.parametrize("fn, args, wrt", [(sigmoid_steps, (np.array([0.5, -0.8, 1.2, 0.3]), U), (0, 1)),
                                           (numerators, (U, 1.7), (0, 1))])
def test_gradients_in_every_mode(fn, args, wrt):
    all_modes(fn, args, wrt=wrt)


def test_the_divisor_is_not_kept_per_step():
    d = srcad.differentiable(sigmoid_steps, wrt=(0, 1))
    d.adjoint(np.ones(4) * 0.5, U)
    stacks = {line.split("_stack")[0].strip() for line in d.adjoint_source.splitlines() if "_stack.append(" in line}
    assert stacks == {"_t3", "_h"}, d.adjoint_source  # exp's result and h: not 1.0 + exp(...)
    assert "dh * h * h" in d.adjoint_source


def inverse(u):
    return 1.0 / u


@pytest.mark.parametrize("u, expected", [(np.array([np.inf, -np.inf]), [-0.0, -0.0]),
                                         (np.array([0.0, -0.0]), [-np.inf, -np.inf])])
def test_infinite_and_zero_divisors_give_what_the_quotient_rule_gives(u, expected):
    with np.errstate(divide="ignore", invalid="ignore"):
        got = srcad.adjoint(inverse)(u, np.ones(2))
        want = -np.ones(2) * (1.0 / u) / u  # the general rule, -v z / u
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, expected)
