"""Assignment expressions (``:=``): the name is bound where Python evaluates the expression, so
short-circuits and loop tests bind it only when they run; inside a comprehension or lambda
(where it binds the enclosing function's name) they are refused."""
import numpy as np
import pytest

import srcad
from lang_checks import check_all_modes

RNG = np.random.default_rng(21)


def in_an_if_test(x):
    total = 0.0
    if (s := np.sum(x ** 2)) > 1.0:
        total = s * 2.0
    return total + s


def in_a_while_test(x):
    y = x * 1.0
    steps = 0
    while (norm := np.sqrt(np.sum(y ** 2))) > 0.5 and steps < 20:
        y = y * 0.7
        steps += 1
    return norm * np.sum(y)


def only_when_the_short_circuit_runs(x):
    s = x[0] * 1.0
    _ = x[0] > 0.0 and (s := np.sin(x[1]) * x[0]) > -5.0
    return s * x[2]


def reused_in_one_expression(x):
    return (m := np.mean(x)) * np.sum((x - m) ** 2)


def in_a_helper(v):
    return (t := np.tanh(v)) * (1.0 - t)


def calls_the_helper(x):
    return np.sum(in_a_helper(x) * x)


def rebinds_what_it_reads(x):
    y = x * 1.0
    z = (y := y * 2.0) + 1.0  # probe 17A: the reverse sweep read the new y as the old (derivative 0)
    return np.sum(z * y)


def rebinds_in_a_test(x):
    y = x[0] * 1.0
    if (y := np.sin(y)) > 0:
        return y * 3.0
    return y


def in_a_comprehension(x):
    return sum([(y := v * 2.0) for v in x]) + y


@pytest.mark.parametrize("fn", [in_an_if_test, in_a_while_test, only_when_the_short_circuit_runs,
                                reused_in_one_expression, calls_the_helper, rebinds_what_it_reads,
                                rebinds_in_a_test])
@pytest.mark.parametrize("x", [np.array([0.4, -0.3, 0.2]), np.array([-1.2, 0.8, 1.5])])
def test_every_mode(fn, x):
    assert srcad.value_and_grad(fn)(x)[0] == pytest.approx(fn(x), rel=1e-14)
    check_all_modes(fn, (x,))


def test_inside_a_comprehension_is_refused_at_its_line():
    line = in_a_comprehension.__code__.co_firstlineno + 1
    with pytest.raises(srcad.SrcadSyntaxError, match=rf"test_lang_walrus\.py:{line}: .*\(:=\) inside a comprehension"):
        srcad.grad(in_a_comprehension)(RNG.standard_normal(3))
